"""The Hopper-specific matmul (triton_impl/matmul_persistent.py, registered as
triton_persistent). The probe and the report that compared every fast variant against
cuBLAS are research code with their own tests (docs/research/fast_matmul/).

CPU tier (marker `interpreter`): the persistent TMA kernel runs in Triton's interpreter,
which emulates tensor descriptors: small tiles, shapes across every tile edge, row- and
column-major B, every tf32 path, the staging copies for unaligned rows, the epilogue
variants, which candidate list a layout uses. The probe's variant list and its whole
flow (workers, table, JSON) in a tiny dry run; the report's verdict logic.

GPU tier (marker `gpu`): every tf32 path at odd and 4096^3 shapes, every configuration
of the candidate lists (each with the B layout it serves), clusters. The registry-wide
GPU tests (tests/test_triton_gpu.py: sweep, exact, NaN/inf, strided, empty, bad inputs,
torch.compile, opcheck) cover triton_persistent like every registered Triton matmul.
"""
from __future__ import annotations


import pytest
import torch

from bench.catalog import matmul_triton
from bench.families.matmul.models import MatmulShape
from bench.families.matmul.problem import MatmulCase
from bindings.precision import element_bytes
from tests.checks import TF32_TIES, assert_correct, poisoned
from tests.shapes import EMPTY_SHAPES, GPU_SWEEP

HOPPER = {k.name: k for k in matmul_triton.records() if k.name == "triton_persistent"}
T = 32   # the interpreter configuration's tile side (tiles_hopper.PERSISTENT_INTERPRETER_CONFIG)


def edge_shapes(t: int) -> list[MatmulShape]:
    """The smallest product, primes, K = 1, and one below / above the tile in every dim."""
    return [MatmulShape(1, 1, 1), MatmulShape(2, 3, 5), MatmulShape(31, 33, 1),
            MatmulShape(t - 1, t + 1, t - 1), MatmulShape(t + 1, t - 1, t + 1),
            MatmulShape(2 * t + 1, t, 3 * t - 1), MatmulShape(t, 2 * t, 16)]


# --------------------------------------------------------------------------- CPU tier

@pytest.mark.interpreter
class TestPersistentInterpreter:
    @pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
    @pytest.mark.parametrize("case", ["fp16-row", "fp16-col", "tf32-swap", "tf32-transpose",
                                      "tf32-direct", "tf32-col"])
    def test_every_tile_edge(self, case, exact):
        from triton_impl import matmul_persistent as mp

        precision, layout = case.split("-")
        mode = layout if layout in mp.TF32_ROW_MAJOR_B else None
        col = layout == "col"
        for shape in edge_shapes(T):
            a, b = MatmulCase(shape, precision, exact=exact, seed=shape.M,
                              transposed=(False, col)).inputs("cpu")
            out = mp.matmul(a, b, precision, tf32_row_major_b=mode)
            assert out.dtype == a.dtype and out.is_contiguous()
            assert_correct(out, a, b, precision, exact)

    @pytest.mark.parametrize("change", [dict(EPILOGUE_SPLIT=2), dict(TMA_STORE=False),
                                        dict(FLATTEN=False), dict(GROUP_M=1)])
    @pytest.mark.parametrize("precision", ["fp16", "tf32"])
    def test_epilogue_and_schedule_variants(self, precision, change):
        from triton_impl import matmul_persistent as mp

        cfg = {**mp.INTERPRETER_CONFIG[precision], **change}
        for shape in (MatmulShape(70, 56, 40), MatmulShape(65, 33, 17)):
            a, b = MatmulCase(shape, precision).inputs("cpu")
            assert_correct(mp.matmul(a, b, precision, config=cfg), a, b, precision, False)

    def test_plan_copies_only_what_tma_cannot_read(self):
        from triton_impl import matmul_persistent as mp

        a, b = torch.randn(8, 16), torch.randn(16, 12)
        assert mp.plan(a, b, "fp16")[4] == []                       # aligned, row-major
        assert mp.plan(a, b.T.contiguous().T, "fp16")[2:] == (True, False, [])  # col-major B
        assert mp.plan(a, b, "tf32", "swap")[2:] == (False, True, [])
        assert mp.plan(a, b, "tf32", "transpose")[4] == ["B transposed once (transpose_kernel)"]
        a13 = torch.randn(8, 13)                                     # 52-byte rows
        assert mp.plan(a13, torch.randn(13, 12), "fp16")[4] == ["A copied to 16-byte aligned rows"]
        sliced = torch.randn(16, 24)[:, ::2]                         # inner stride 2
        assert "B copied to 16-byte aligned rows" in mp.plan(a, sliced, "tf32")[4]
        with pytest.raises(ValueError, match="triton_persistent: tf32_row_major_b must be"):
            mp.plan(a, b, "tf32", "sideways")

    def test_transpose_kernel_is_exact(self):
        from triton_impl import matmul_persistent as mp

        for rows, cols in [(1, 1), (5, 130), (129, 64), (200, 3)]:
            x = torch.randn(rows, cols)
            y = mp.transpose(x)
            assert y.shape == (cols, rows) and torch.equal(y, x.T)
            assert (y.stride(0) * 4) % 16 == 0 and y.stride(1) == 1

    def test_tf32_swap_rounds_b_to_nearest_even(self):
        """The swap path rounds B to TF32, to nearest with ties to even (the cases of
        tests.checks.TF32_TIES)."""
        from triton_impl import matmul_persistent as mp

        a = torch.zeros(1, 4)
        a[0, 0] = 1.0
        for value, want in TF32_TIES:
            b = torch.full((4, 4), value)
            out = mp.matmul(a, b, "tf32", tf32_row_major_b="swap")
            assert out[0, 0].item() == want

    def test_autotuned_path_and_op(self):
        from triton_impl import matmul_persistent as mp

        a, b = MatmulCase(MatmulShape(37, 29, 45), "fp16").inputs("cpu")
        assert_correct(mp.op()(a, b, "fp16"), a, b, "fp16", False)
        assert mp.best_config("fp16") is not None

    def test_bad_inputs_raise_with_the_op_name(self):
        from triton_impl import matmul_persistent as mp

        f16 = lambda *s: torch.randn(*s).half()  # noqa: E731
        with pytest.raises(ValueError, match="triton_persistent: precision must be one of "
                                             "tf32, fp16, bf16, got 'fp32'"):
            mp.matmul(torch.randn(3, 4), torch.randn(4, 5), "fp32")
        with pytest.raises(TypeError, match="triton_persistent: A and B must be float16"):
            mp.matmul(f16(3, 4).float(), f16(4, 5), "fp16")
        with pytest.raises(ValueError, match="triton_persistent: inner dimensions must agree"):
            mp.matmul(f16(3, 4), f16(5, 6), "fp16")
        with pytest.raises(ValueError, match="triton_persistent: A and B must be 2-D"):
            mp.matmul(f16(4), f16(4, 5), "fp16")

    @pytest.mark.parametrize("shape", ["0x5x3", "5x0x3", "5x3x0", "0x0x0"])
    def test_empty_dimensions(self, shape):
        from triton_impl import matmul_persistent as mp

        s = MatmulShape.parse(shape)
        out = mp.matmul(torch.randn(s.M, s.K).half(), torch.randn(s.K, s.N).half(), "fp16")
        assert out.shape == (s.M, s.N) and bool((out == 0).all())


@pytest.mark.interpreter
class TestPersistentPaths:
    def test_b_layout_picks_the_path_and_the_candidate_list(self):
        """A column-major B (a transposed view, no copy) takes the K-major path and the
        "tf32" list; a row-major B in tf32 the swap and "tf32-swap"; 16-bit never swaps."""
        from triton_impl import matmul_persistent as mp

        a, b = MatmulCase(MatmulShape(40, 36, 48), "tf32", seed=2).inputs("cpu")
        b_col = b.T.contiguous().T
        assert b_col.stride(0) == 1 and mp.plan(a, b_col, "tf32")[2:] == (True, False, [])
        assert mp.plan(a, b, "tf32")[2:4] == (False, True)
        assert mp.DEFAULT_TF32_ROW_MAJOR_B == "gluon"
        assert mp.tf32_mode(a, b) == "swap"          # no Gluon under the interpreter
        assert mp.tf32_mode(a, b, "transpose") == "transpose"
        assert_correct(mp.matmul(a, b, "tf32", tf32_row_major_b="gluon"), a, b, "tf32", False)
        assert mp.candidates_key("tf32", True) == "tf32-swap"
        assert mp.candidates_key("tf32", False) == "tf32"
        assert mp.candidates_key("fp16", False) == "fp16"
        for bb, key in ((b_col, "tf32"), (b, "tf32-swap")):
            assert_correct(mp.op()(a, bb, "tf32"), a, bb, "tf32", False)
            assert mp.best_config(key) is not None

    def test_cluster_config_runs_under_the_interpreter(self):
        """num_ctas is a launch option (a triton.Config on the GPU); the interpreter has no
        clusters and runs the same tiles without it."""
        from triton_impl import matmul_persistent as mp

        cfg = {**mp.INTERPRETER_CONFIG["fp16"], "num_ctas": 2}
        a, b = MatmulCase(MatmulShape(70, 56, 40), "fp16").inputs("cpu")
        assert_correct(mp.matmul(a, b, "fp16", config=cfg), a, b, "fp16", False)


def test_tile_lists_fit_the_hardware():
    from triton_impl import tiles_hopper as th

    assert set(th.PERSISTENT_CONFIGS) == {"tf32", "tf32-swap", "fp16", "bf16"}
    assert set(th.PERSISTENT_INTERPRETER_CONFIG) == set(th.PERSISTENT_CONFIGS)
    for key, configs in th.PERSISTENT_CONFIGS.items():
        for cfg in configs:
            assert th.persistent_smem_bytes(cfg, element_bytes(key.split("-")[0])) <= th.SMEM_BYTES
            assert cfg["BLOCK_N"] % cfg["EPILOGUE_SPLIT"] == 0
            assert cfg.get("num_ctas", 1) == 1    # clusters: probe only (grid = SMs / ctas)
            if cfg["WARP_SPECIALIZE"]:     # Triton 3.6's Hopper pass: 4 warps, no flattening
                assert cfg["num_warps"] == 4 and not cfg["FLATTEN"]
    for cfg in th.PERSISTENT_CONFIGS["tf32-swap"]:
        # flattened swap loops serialise every wgmma (ptxas C7515); warp specialisation
        # does not compile with wait_for_dot
        assert not cfg["FLATTEN"] and not cfg["WARP_SPECIALIZE"]


def test_hopper_records_and_models():
    from bench import registry

    assert set(HOPPER) == {"triton_persistent"}
    assert registry.get("triton_persistent").precisions == ("tf32", "fp16", "bf16")
    for k in HOPPER.values():
        assert k.backend == "triton" and k.summary and len(k.summary) < 120
        t = k.traffic(MatmulShape(4096, 4096, 4096))
        assert t.global_loads > 0 and t.fma == 4096 ** 3
        # 128x256 tiles: A is read N/256 times, B M/128 times
        n = 4096
        assert t.global_loads == n * n * (n // 256) + n * n * (n // 128)


# --------------------------------------------------------------------------- GPU tier

def _check(kernel, shape, precision, mode="random"):
    from bench import check, problems

    return check.check_one(kernel, problems.get("matmul"), shape, precision, mode,
                           seed=shape.M + shape.N, device="cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["gluon", "swap", "transpose", "direct"])
@pytest.mark.parametrize("shape", [MatmulShape(1000, 1064, 1000), MatmulShape(999, 1001, 1003),
                                   MatmulShape(4096, 4096, 4096)], ids=str)
def test_gpu_tf32_paths(mode, shape):
    from triton_impl import matmul_persistent as mp

    a, b = MatmulCase(shape, "tf32", seed=5).inputs("cuda")
    assert_correct(mp.matmul(a, b, "tf32", tf32_row_major_b=mode), a, b, "tf32", False)


@pytest.mark.gpu
def test_gpu_gluon_is_the_default_and_covers_every_edge():
    """On the H100 a row-major B in tf32 runs matmul_swap_gluon: at every tile edge of its
    256 x 128 x 32 tile, K below, at and above one k-step (the peeled one) and unaligned
    rows (staged by plan), against the float64 reference."""
    from triton_impl import matmul_persistent as mp

    a, b = MatmulCase(MatmulShape(64, 64, 64), "tf32").inputs("cuda")
    assert mp.tf32_mode(a, b) == "gluon"
    for shape in edge_shapes(32) + [MatmulShape(255, 129, 31), MatmulShape(257, 127, 32),
                                    MatmulShape(513, 385, 33), MatmulShape(256, 128, 4096)]:
        for exact in (False, True):
            a, b = MatmulCase(shape, "tf32", exact=exact, seed=shape.K).inputs("cuda")
            out = mp.matmul(a, b, "tf32")
            assert out.shape == (shape.M, shape.N) and out.is_contiguous()
            assert_correct(out, a, b, "tf32", exact)


@pytest.mark.gpu
@pytest.mark.parametrize("path", ["gluon", "swap 256x128", "swap 128x256"])
def test_gpu_register_operand_paths_repeat_bit_for_bit(path):
    """The race of Triton 3.6's swap (tests/test_wgmma_hazards.py) showed on the H100 as
    results that differ from run to run in 8-column groups. Every register-operand path now
    gives the same bits in every run."""
    from triton_impl import matmul_persistent as mp
    from triton_impl import tiles_hopper as th

    if path == "gluon":
        run = lambda a, b: mp.matmul(a, b, "tf32", tf32_row_major_b="gluon")  # noqa: E731
    else:
        bm, bn = map(int, path.split()[1].split("x"))
        cfg = th.persistent_cfg(bm, bn, 32, 8, 3, split=2, flatten=False)
        run = lambda a, b: mp.matmul(a, b, "tf32", config=cfg)  # noqa: E731
    run = poisoned(run)            # each repeat's output block starts as NaN
    a, b = MatmulCase(MatmulShape(2048, 2048, 2048), "tf32", seed=9).inputs("cuda")
    first = run(a, b)
    assert_correct(first, a, b, "tf32", False)
    for _ in range(8):
        assert torch.equal(run(a, b), first)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["tf32", "fp16", "bf16"])
@pytest.mark.parametrize("shape", [MatmulShape(1024, 1024, 1024), MatmulShape(130, 258, 100)],
                         ids=str)
def test_gpu_every_persistent_candidate(precision, shape):
    from triton_impl import matmul_persistent as mp

    # each list with the B layout it serves: tf32 K-major (column-major B), tf32-swap
    # (row-major B), 16-bit both
    lists = ([("tf32", True), ("tf32-swap", False)] if precision == "tf32"
             else [(precision, False), (precision, True)])
    for key, col in lists:
        a, b = MatmulCase(shape, precision, seed=3, transposed=(False, col)).inputs("cuda")
        for config in mp.CONFIGS[key]:      # same inputs: the last answer's block is poisoned
            out = poisoned(mp.matmul)(a, b, precision, config=config)
            torch.cuda.synchronize()
            assert_correct(out, a, b, precision, False)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_gpu_cluster_configs(precision):
    """num_ctas=2 through a triton.Config (the probe's cluster variants)."""
    from triton_impl import matmul_persistent as mp
    from triton_impl import tiles_hopper as th

    bk = 32 if precision == "tf32" else 64
    cfg = th.persistent_cfg(128, 256, bk, 8, 3, ctas=2)
    for shape in (MatmulShape(1024, 1024, 1024), MatmulShape(130, 258, 100)):
        a, b = MatmulCase(shape, precision, seed=4, transposed=(False, True)).inputs("cuda")
        assert_correct(mp.matmul(a, b, precision, config=cfg), a, b, precision, False)
