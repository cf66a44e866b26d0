"""The Hopper-specific matmul (triton_impl/matmul_persistent.py, registered as
triton_persistent) in Triton's interpreter. What every fast variant measured against cuBLAS,
and why the kernel does what it does: docs/performance/fast_matmul.md.

The persistent TMA kernel runs in Triton's interpreter, which emulates tensor descriptors:
small tiles, shapes across every tile edge, row- and column-major B, every tf32 path, the
staging copies for unaligned rows, the epilogue variants, which candidate list a layout
uses. Its tile lists and registry record: tests/cpu/test_matmul_persistent.py; on the H100:
tests/gpu/test_matmul_persistent.py.
"""
from __future__ import annotations


import pytest
import torch

from bench.families.matmul.models import MatmulShape
from bench.families.matmul.problems import MatmulCase
from tests.support.checks import TF32_TIES, assert_correct
from tests.support.shapes import shapes_at_tile_edges

T = 32   # the interpreter configuration's tile side (tiles_hopper.PERSISTENT_INTERPRETER_CONFIG)


class TestPersistentInterpreter:
    @pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
    @pytest.mark.parametrize("case", ["fp16-row", "fp16-col", "tf32-swap", "tf32-col"])
    def test_every_tile_edge(self, case, exact):
        from triton_impl import matmul_persistent as mp

        precision, layout = case.split("-")
        mode = layout if layout in mp.TF32_ROW_MAJOR_B else None
        col = layout == "col"
        for shape in shapes_at_tile_edges(T):
            a, b = MatmulCase(shape, precision, exact=exact, seed=shape.M,
                              transposed=(False, col)).inputs("cpu")
            out = mp._matmul(a, b, precision, tf32_row_major_b=mode)
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
            assert_correct(mp._matmul(a, b, precision, config=cfg), a, b, precision, False)

    def test_plan_copies_only_what_tma_cannot_read(self):
        from triton_impl import matmul_persistent as mp

        a, b = torch.randn(8, 16), torch.randn(16, 12)
        assert mp.plan(a, b, "fp16")[4] == []                       # aligned, row-major
        assert mp.plan(a, b.T.contiguous().T, "fp16")[2:] == (True, False, [])  # col-major B
        assert mp.plan(a, b, "tf32", "swap")[2:] == (False, True, [])
        assert mp.plan(a, b, "tf32", "gluon")[2:] == (False, True, [])
        a13 = torch.randn(8, 13)                                     # 52-byte rows
        assert mp.plan(a13, torch.randn(13, 12), "fp16")[4] == ["A copied to 16-byte aligned rows"]
        sliced = torch.randn(16, 24)[:, ::2]                         # inner stride 2
        assert "B copied to 16-byte aligned rows" in mp.plan(a, sliced, "tf32")[4]
        with pytest.raises(ValueError, match="triton_persistent: tf32_row_major_b must be"):
            mp.plan(a, b, "tf32", "sideways")

    def test_tf32_swap_rounds_b_to_nearest_even(self):
        """The swap path rounds B to TF32, to nearest with ties to even (the cases of
        tests.support.checks.TF32_TIES)."""
        from triton_impl import matmul_persistent as mp

        a = torch.zeros(1, 4)
        a[0, 0] = 1.0
        for value, want in TF32_TIES:
            b = torch.full((4, 4), value)
            out = mp._matmul(a, b, "tf32", tf32_row_major_b="swap")
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
        assert mp.tf32_mode(a, b, "gluon") == "swap"
        assert_correct(mp._matmul(a, b, "tf32", tf32_row_major_b="gluon"), a, b, "tf32", False)
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
        assert_correct(mp._matmul(a, b, "fp16", config=cfg), a, b, "fp16", False)
