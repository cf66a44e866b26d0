"""CPU tier: every Triton matmul under TRITON_INTERPRET=1 against the float64 reference.

Small odd shapes with SMALL tiles (forced through each module's _matmul), so that every
edge of every tile is crossed (tile - 1, tile + 1 in each dimension); fp32 and fp16 (the
interpreter's bf16 tl.dot is wrong, tf32 is computed in full fp32 there). The ops' real
tile parameters are exercised too, once, on a shape that still fits in a fraction of a
second. Bad input must raise with a message.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench.families.matmul.models import MatmulShape
from bench.families.matmul.problems import MatmulCase
from tests.support.checks import (TF32_TIES, assert_correct, assert_tf32_rounded,
                                  round_to_tf32_on, tf32_rounding_inputs)
from tests.support.stacks import stack_error
from triton_impl import (_common, debug, matmul_autotuned, matmul_batched, matmul_grouped,
                         matmul_v1_5_thread_tiling, matmul_v1_naive, matmul_v2_register_tiling,
                         matmul_v3_smem_tiling, tiles)

ROOT = Path(__file__).resolve().parents[2]

# Twins with small tiles: tile side 4 (v1, v1.5, v2) and 16 (v3, whose k step is 8 here: the
# interpreter has no tl.dot minimum; the GPU tier runs the real S).
TWINS = {
    "v1": (matmul_v1_naive, {"BLOCK": 4}, 4),
    "v1.5": (matmul_v1_5_thread_tiling, {"V": 2, "T": 2}, 4),
    "v2": (matmul_v2_register_tiling, {"V": 2, "T": 2}, 4),
    "v3": (matmul_v3_smem_tiling, {"L": 16, "S": 8}, 16),
}
SMALL_DOT_TILE = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2, num_warps=4, num_stages=2)
SOURCE_KERNELS = {  # the matmuls of Triton's matrix-multiplication tutorial (grouped) and of
    # "Meet Triton" (batched): module, small-tile keyword
    "grouped": (matmul_grouped, "tile"),
    "batched": (matmul_batched, "tile"),
}


def edge_shapes(t: int) -> list[MatmulShape]:
    """The smallest product, primes, K = 1, and one below / above the tile in every dim."""
    return [MatmulShape(1, 1, 1), MatmulShape(2, 3, 5), MatmulShape(7, 1, 13),
            MatmulShape(17, 13, 7), MatmulShape(31, 33, 1),
            MatmulShape(t - 1, t + 1, t - 1), MatmulShape(t + 1, t - 1, t + 1),
            MatmulShape(2 * t + 1, t, 3 * t - 1)]


# --------------------------------------------------------------------------- the twins

@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("version", list(TWINS))
def test_twin_small_tiles_every_edge(version, exact):
    mod, tile, t = TWINS[version]
    for shape in edge_shapes(t):
        a, b = MatmulCase(shape, "fp32", exact=exact, seed=shape.M).inputs("cpu")
        assert_correct(mod._matmul(a, b, tile=tile), a, b, "fp32", exact)


@pytest.mark.parametrize("version", list(TWINS))
def test_twin_op_with_real_tiles(version):
    """The registered op, with cuda/matmul_config.h's tiles (edges of a real tile)."""
    mod = TWINS[version][0]
    for shape in (MatmulShape(33, 31, 19), MatmulShape(1, 70, 3)):
        a, b = MatmulCase(shape, "fp32").inputs("cpu")
        assert_correct(mod.op()(a, b), a, b, "fp32", exact=False)


@pytest.mark.parametrize("transposed", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("version", list(TWINS))
def test_twin_transposed_inputs(version, transposed):
    mod, tile, _ = TWINS[version]
    a, b = MatmulCase(MatmulShape(13, 11, 9), "fp32", transposed=transposed).inputs("cpu")
    assert not (a.is_contiguous() and b.is_contiguous())
    assert_correct(mod._matmul(a, b, tile=tile), a, b, "fp32", exact=False)


def test_twin_params_follow_the_cuda_header():
    from bindings import config

    h = config.params()
    assert matmul_v1_naive.params()["BLOCK"] == h["V1_BLOCK"]
    assert matmul_v1_naive.params()["num_warps"] == h["V1_BLOCK"] ** 2 // 32
    assert (matmul_v1_5_thread_tiling.params()["V"], matmul_v1_5_thread_tiling.params()["T"]) \
        == (h["V1_5_V"], h["V1_5_T"])
    assert (matmul_v2_register_tiling.params()["V"], matmul_v2_register_tiling.params()["T"]) \
        == (h["V2_V"], h["V2_T"])
    p3 = matmul_v3_smem_tiling.params()
    assert (p3["L"], p3["V"], p3["S_cuda"]) == (h["V3_L"], h["V3_V"], h["V3_S"])
    assert p3["S"] == max(h["V3_S"], tiles.MIN_DOT_K)
    assert p3["num_warps"] == (h["V3_L"] // h["V3_V"]) ** 2 // 32


# ------------------------------------------------------------- the source documents' kernels

@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16"])
@pytest.mark.parametrize("kind", list(SOURCE_KERNELS))
def test_source_kernel_small_tiles_every_edge(kind, precision, exact):
    mod, _ = SOURCE_KERNELS[kind]
    for shape in edge_shapes(16):
        a, b = MatmulCase(shape, precision, exact=exact, seed=shape.N).inputs("cpu")
        out = mod._matmul(a, b, precision, tile=SMALL_DOT_TILE)
        assert out.dtype == a.dtype
        assert_correct(out, a, b, precision, exact)


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16"])
@pytest.mark.parametrize("kind", ["grouped", "autotuned", "batched"])
def test_seed_op_default_params(kind, precision):
    mod = {"grouped": matmul_grouped, "autotuned": matmul_autotuned,
           "batched": matmul_batched}[kind]
    for shape in (MatmulShape(37, 29, 45), MatmulShape(1, 1, 1)):
        for exact in (False, True):
            a, b = MatmulCase(shape, precision, exact=exact).inputs("cpu")
            assert_correct(mod.op()(a, b, precision), a, b, precision, exact)


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16"])
def test_every_autotune_candidate(precision):
    """Each GPU candidate, run directly: the tf32 B_FROM_REGISTERS order included."""
    shape = MatmulShape(37, 29, 45)
    for config in tiles.AUTOTUNE_CONFIGS[precision]:
        for exact in (False, True):
            a, b = MatmulCase(shape, precision, exact=exact).inputs("cpu")
            out = matmul_autotuned._matmul(a, b, precision, config=config)
            assert_correct(out, a, b, precision, exact)


def test_autotuned_remembers_its_config():
    a, b = MatmulCase(MatmulShape(5, 6, 7), "fp16").inputs("cpu")
    matmul_autotuned.matmul(a, b, "fp16")
    assert matmul_autotuned.best_config("fp16") is not None


@pytest.mark.parametrize("transposed", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("kind", ["grouped", "autotuned", "batched"])
def test_source_kernels_use_strides(kind, transposed):
    """Column-major views are used as they are (no copies), and give the right answer."""
    mod = {"grouped": matmul_grouped, "autotuned": matmul_autotuned,
           "batched": matmul_batched}[kind]
    a, b = MatmulCase(MatmulShape(19, 23, 21), "fp32", transposed=transposed).inputs("cpu")
    assert_correct(mod.op()(a, b, "fp32"), a, b, "fp32", exact=False)


def test_tf32_rounding_is_to_nearest_even():
    """The tf32 operand rounding of matmul_autotuned's C^T = B^T A^T order."""
    cfg = tiles.INTERPRETER_CONFIG["tf32"]
    assert cfg["B_FROM_REGISTERS"]
    a = torch.ones(1, 1)
    for value, want in TF32_TIES:
        b = torch.full((1, 1), value)
        assert matmul_autotuned._matmul(a, b, "tf32", config=cfg).item() == want


def test_round_to_tf32_bit_for_bit():
    """The integer version of round_to_tf32 (what the interpreter and pre-Hopper GPUs run)
    against a float64 rounding: ties, overflow to inf, subnormals, NaN payloads, random
    bits. The GPU tier checks the native cvt.rn.tf32.f32 against the same reference."""
    x = tf32_rounding_inputs()
    assert_tf32_rounded(round_to_tf32_on(x, native=False), x)


def test_eager_launch_calls_the_kernel_directly():
    """In eager mode _common.launch must not go through torch.library.wrap_triton: outside a
    registered op that path copies an autotuned kernel into a new autotuner per call, so
    every direct call of a wrapper would tune again (the GPU tier checks the autotuners)."""
    calls = []

    class Kernel:                     # records the launch; wrap_triton would reject it
        def __getitem__(self, grid):
            return lambda *args, **meta: calls.append((grid, args, meta))

    x = torch.zeros(3)
    _common.launch(Kernel(), (2,), x, 5, BLOCK=4)
    assert calls == [((2,), (x, 5), {"BLOCK": 4})]
    assert not _common.tracing((x, 5))


# --------------------------------------------------------------------------- grouped order

def test_grouped_order_guide_example():
    """The 5 x 4 example of "A Practitioner's Guide to Triton" (its grouped matmul) with
    GROUP_M = 3, on the kernel and in Python."""
    want = [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11], [12, 14, 16, 18], [13, 15, 17, 19]]
    assert matmul_grouped.grouped_order(5, 4, 3) == want
    assert matmul_grouped._launch_order(5, 4, 3, device="cpu").tolist() == want


@pytest.mark.parametrize("m,n,g", [(1, 1, 1), (9, 9, 3), (7, 3, 2), (4, 9, 8), (6, 5, 1)])
def test_grouped_order_kernel_matches_python(m, n, g):
    order = matmul_grouped._launch_order(m, n, g, device="cpu")
    assert order.tolist() == matmul_grouped.grouped_order(m, n, g)
    assert sorted(order.flatten().tolist()) == list(range(m * n))   # a permutation


def test_grouped_order_needs_fewer_strips():
    """The seed's 9 x 9 picture: the first 9 programs touch 9 + 81 = 90 blocks in row-major
    order (1 row strip of A, 9 column strips of B, 9 blocks each), 27 + 27 = 54 grouped."""
    def blocks_read(order):     # blocks of A and B the first 9 programs read
        first = [(i, j) for i in range(9) for j in range(9) if order[i][j] < 9]
        return len({i for i, _ in first}) * 9 + len({j for _, j in first}) * 9

    row_major = [[9 * i + j for j in range(9)] for i in range(9)]
    assert blocks_read(row_major) == 90
    assert blocks_read(matmul_grouped.grouped_order(9, 9, 3)) == 54


# --------------------------------------------------------------------------- batched

BATCH_CASES = {
    "broadcast-both": ((2, 1, 5, 7), (3, 7, 4)),
    "2d-times-stack": ((5, 7), (2, 7, 4)),
    "stack-times-2d": ((2, 3, 5, 7), (7, 4)),
    "same-batch": ((4, 17, 9), (4, 9, 15)),
    "five-dims-unmergeable": ((2, 1, 3, 1, 2, 5, 7), (1, 4, 3, 2, 1, 7, 4)),
    "size-one-everywhere": ((1, 1, 1, 1), (1, 1, 1, 1)),
}


@pytest.mark.parametrize("layout", ["row", "col", "sliced"])
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("case", list(BATCH_CASES))
def test_batched_broadcasting_and_strides(case, precision, layout):
    sa, sb = BATCH_CASES[case]
    g = torch.Generator().manual_seed(0)
    dtype = matmul_batched._common.DTYPES[precision]

    def make(shape):
        if layout == "col":      # column-major matrices: transposed views of contiguous data
            return torch.randn(*shape[:-2], shape[-1], shape[-2], generator=g).to(dtype).mT
        if layout == "sliced":   # every other column of a wider matrix
            return torch.randn(*shape[:-1], 2 * shape[-1], generator=g).to(dtype)[..., ::2]
        return torch.randn(*shape, generator=g).to(dtype)

    a, b = make(sa), make(sb)
    out = matmul_batched._matmul(a, b, precision, tile=SMALL_DOT_TILE)
    assert stack_error(out, a, b, precision) <= 1


def test_batched_merges_contiguous_batch_dims():
    dims = matmul_batched.merge_batch_dims((2, 3, 4), (60, 20, 5), (0, 0, 0), (12, 4, 1))
    assert dims == [(24, (5, 0, 1))]
    dims = matmul_batched.merge_batch_dims((2, 1, 3), (1, 7, 2), (3, 0, 1), (3, 3, 1))
    assert dims == [(2, (1, 3, 3)), (3, (2, 1, 1))]


def test_batched_empty_and_zero_k():
    a, b = torch.randn(2, 0, 3, 5), torch.randn(5, 4)
    assert matmul_batched.op()(a, b, "fp32").shape == (2, 0, 3, 4)
    a, b = torch.randn(3, 4, 0), torch.randn(1, 0, 6)
    out = matmul_batched.op()(a, b, "fp32")
    assert out.shape == (3, 4, 6) and bool((out == 0).all())


# --------------------------------------------------------------------------- bad input, empty

ALL_2D = {
    "triton_v1_naive": lambda a, b: matmul_v1_naive.op()(a, b),
    "triton_v1.5_thread_tiling": lambda a, b: matmul_v1_5_thread_tiling.op()(a, b),
    "triton_v2_register_tiling": lambda a, b: matmul_v2_register_tiling.op()(a, b),
    "triton_v3_smem_tiling": lambda a, b: matmul_v3_smem_tiling.op()(a, b),
    "triton_grouped": lambda a, b: matmul_grouped.op()(a, b, "fp32"),
    "triton_autotuned": lambda a, b: matmul_autotuned.op()(a, b, "fp32"),
    "triton_batched": lambda a, b: matmul_batched.op()(a, b, "fp32"),
}


@pytest.mark.parametrize("name", list(ALL_2D))
def test_bad_inputs_raise_with_the_op_name(name):
    run = ALL_2D[name]
    f32 = lambda *s: torch.randn(*s)  # noqa: E731
    with pytest.raises(TypeError, match=rf"{name}: A and B must be float32.*float16 and float32"):
        run(f32(3, 4).half(), f32(4, 5))
    with pytest.raises(ValueError, match=rf"{name}: inner dimensions must agree"):
        run(f32(3, 4), f32(5, 6))
    with pytest.raises(ValueError, match=rf"{name}: .*on a CUDA device.*got meta"):
        run(torch.empty(3, 4, device="meta"), torch.empty(4, 5, device="meta"))
    with pytest.raises(ValueError, match=rf"{name}: A and B must (be 2-D|have at least 2 dim)"):
        run(f32(4), f32(4, 5))
    if name != "triton_batched":
        with pytest.raises(ValueError, match=rf"{name}: A and B must be 2-D matrices, got 3-D"):
            run(f32(2, 3, 4), f32(4, 5))


def test_bad_precision_and_broadcast():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    for mod in (matmul_grouped, matmul_autotuned, matmul_batched):
        with pytest.raises(ValueError, match=rf"{mod.NAME}: precision must be one of"):
            mod.matmul(a, b, "fp8")
    with pytest.raises(ValueError, match="triton_batched: batch dimensions must broadcast"):
        matmul_batched.matmul(torch.randn(2, 3, 4), torch.randn(3, 4, 5), "fp32")


@pytest.mark.parametrize("name", list(ALL_2D))
@pytest.mark.parametrize("shape", ["0x5x3", "5x0x3", "5x3x0", "0x0x0"])
def test_empty_dimensions(name, shape):
    s = MatmulShape.parse(shape)
    out = ALL_2D[name](torch.randn(s.M, s.K), torch.randn(s.K, s.N))
    assert out.shape == (s.M, s.N)
    assert bool((out == 0).all())          # K = 0: zeros; empty outputs trivially


# --------------------------------------------------------------------------- registry, CLI

def test_registry_records_and_twins():
    from bench import registry

    names = {k.name: k for k in registry.kernels()}
    triton = {n: k for n, k in names.items() if k.backend == "triton"}
    assert set(triton) >= {"triton_v1_naive", "triton_v1.5_thread_tiling",
                           "triton_v2_register_tiling", "triton_v3_smem_tiling",
                           "triton_grouped", "triton_autotuned", "triton_batched"}
    for name, k in triton.items():
        assert k.runs_on_cpu and (ROOT / k.source).exists()
        if k.twin:                                   # twins point at each other
            assert names[k.twin].twin == name
        assert k.traffic(MatmulShape(64, 48, 40)).global_loads > 0
    for k in names.values():                         # every CUDA twin link resolves
        if k.backend == "cuda" and k.twin:
            assert names[k.twin].twin == k.name


def test_models_match_the_cuda_counts_where_the_algorithm_is_the_same():
    from bench.families.matmul import models, models_triton

    s = MatmulShape(100, 70, 33)
    fp32 = {"precision": "fp32"}
    assert models_triton.matmul_v1(s, {"BLOCK": 32, **fp32}).global_loads == 2 * 100 * 70 * 33
    p15 = {"V": 4, "T": 16, **fp32}
    assert models_triton.matmul_v1_5(s, p15).global_loads == models.matmul_v1_5(s, p15).global_loads
    p3 = {"L": 128, "S": 16, "V": 8, **fp32}
    assert models_triton.matmul_v3(s, p3) == models.matmul_v3(s, p3)
    # v2: requested per program, T*V-fold reuse; for N = 4096 it is 2N^3/(T*V)
    n = 4096
    assert models_triton.matmul_v2(MatmulShape(n, n, n), {"V": 4, "T": 16, **fp32}).global_loads \
        == 2 * n**3 // 64
    blocked = models_triton.matmul_blocked(MatmulShape(n, n, n),
                                           dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32,
                                                precision="fp16"))
    assert blocked.global_loads == 2 * n**3 // 128 and blocked.elem_bytes == 2


def test_bench_check_runs_the_triton_kernels_here(capsys):
    from bench import cli

    rc = cli.main(["check", "-v", "--kernels", "triton*", "--shapes", "17x13x7,1x1x1", "--exact"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "triton_v3_smem_tiling" in out and "FAIL" not in out and "ERROR" not in out


def test_importing_registers_nothing():
    """Modules do nothing at import: no op until op() is called."""
    code = ("import os; os.environ['TRITON_INTERPRET'] = '1'\n"
            "import torch, triton_impl.matmul_v3_smem_tiling as m\n"
            "assert not hasattr(torch.ops.cvt_triton, 'matmul_v3_smem_tiling')\n"
            "m.op(); assert hasattr(torch.ops.cvt_triton, 'matmul_v3_smem_tiling')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------- debug helpers

def test_pid_conditions():
    hold = debug.pid_conds_hold
    assert hold("", 5, 5, 5)
    assert hold(">0", 1, 1) and not hold(">0", 0, 1)
    assert hold("=0,=1", 0, 1, 0) and not hold("=0,=1", 0, 2, 0)
    assert hold(",>=2", 0, 2) and not hold(",>=2", 0, 1)
    assert hold("<=2,,!=3", 2, 9, 4) and not hold("<=2,,!=3", 2, 9, 3)
    assert hold("=0", [0]) and hold("<1", torch.tensor([0]))      # the seed's [pid] lists
    for bad in ("~1", ">", "=1,=2,=3,=4", "=x"):
        with pytest.raises(ValueError):
            hold(bad, 0, 0, 0)


def test_print_if_and_breakpoint_if_inside_an_interpreted_kernel(capsys, monkeypatch):
    import triton
    import triton.language as tl

    stops = []
    monkeypatch.setattr(sys, "breakpointhook", lambda *a, **k: stops.append(1))

    @triton.jit
    def copy_kernel(x_ptr, z_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask)
        debug.print_if(f"program {pid} loads {x}", ">=1")
        debug.breakpoint_if("=2")
        tl.store(z_ptr + offs, x, mask)

    x = torch.arange(6.0)
    z = torch.zeros(6)
    debug.check_tensors_gpu_ready(x, z)
    copy_kernel[(3,)](x, z, 6, BLOCK=2)
    out = capsys.readouterr().out
    assert torch.equal(z, x)
    assert "program [0]" not in out and "program [1]" in out and "program [2]" in out
    assert stops == [1]


def test_check_tensors_gpu_ready():
    debug.check_tensors_gpu_ready(torch.zeros(3, 4))
    with pytest.raises(ValueError, match="tensor 1 .* not contiguous"):
        debug.check_tensors_gpu_ready(torch.zeros(3), torch.zeros(4, 3).T)
    assert debug.cdiv(10, 3) == 4 and debug.cdiv(10, 2) == 5
    with pytest.raises(RuntimeError, match="pass pid_0"):
        debug.pid_conds_hold("=0")        # no kernel running and no pids given


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("transposed", [(False, False), (True, True)])
def test_triton_auto_pads_n_and_k_for_the_autotuned_kernel(monkeypatch, precision, transposed):
    """With the compute-bound threshold at 0, triton_auto rounds N and K up to 16 for
    matmul_autotuned (the interpreter's pick at every precision), runs on zero-padded
    copies and returns C's N columns: right, contiguous, and differentiable."""
    from triton_impl import matmul_auto

    monkeypatch.setattr(matmul_auto, "PAD_MIN_MACS", 0)
    assert matmul_auto.padded_sizes(19, 23, 21, "matmul_autotuned") == (32, 32)
    a, b = MatmulCase(MatmulShape(19, 23, 21), precision, transposed=transposed).inputs("cpu")
    c = matmul_auto.matmul(a, b, precision)
    assert c.shape == (19, 23) and c.is_contiguous()
    assert_correct(c, a, b, precision, exact=False)
    if precision == "fp32":
        a = a.detach().requires_grad_()
        matmul_auto.matmul(a, b, precision).sum().backward()
        want = torch.ones(19, 23, dtype=torch.float64) @ b.double().T
        torch.testing.assert_close(a.grad.double(), want, rtol=1e-4, atol=1e-4)
