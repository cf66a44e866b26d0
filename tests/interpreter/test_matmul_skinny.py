"""triton_skinny (triton_impl/matmul_skinny.py), the Triton twin of cuda_skinny, in Triton's
interpreter: every small side from 1 to 16 on both sides (N small: C^T = B^T A^T, the big
operand read along k; M small: along its columns), K across the interpreter tile's edges
and deep enough to split, forced splits (the sum over splits in split order), transposed and
offset operands read through their strides, the refusals, and the harness record. Compiled
for sm_90 (no tl.dot, vector loads, no spill): tests/cpu/test_matmul_skinny_ptx.py; on the
GPU: tests/gpu/test_shape_paths.py and tests/gpu/test_large_offsets.py.
"""
from __future__ import annotations

import pytest
import torch

from bench.families.matmul.models import MatmulShape
from bench.families.matmul.problems import MatmulCase
from tests.support.checks import assert_correct

KS = (0, 1, 15, 16, 17, 33, 100)     # the interpreter's BLOCK_K is 16 (tiles.SKINNY_INTERPRETER)


@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("side", ["n-small", "m-small"])
def test_every_small_side_and_k_edge(side, exact):
    from triton_impl import matmul_skinny as ms

    for r in range(1, 17):
        for k in KS:
            big = 37 + r                     # not a multiple of the 16-column tile
            shape = MatmulShape(big, r, k) if side == "n-small" else MatmulShape(r, big, k)
            a, b = MatmulCase(shape, "fp32", exact=exact, seed=r + k).inputs("cpu")
            out = ms.matmul(a, b, "fp32")
            assert out.shape == (shape.M, shape.N) and out.is_contiguous()
            assert_correct(out, a, b, "fp32", exact)


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16"])   # bf16: see below
@pytest.mark.parametrize("splits", [2, 3, 7])
def test_forced_splits_sum_in_order(precision, splits):
    """K shared out over `splits` programs per tile, the partial tiles summed by
    triton_split_k's sum kernel: the same answer within the bound, and the same bits on a
    second run. (The interpreter's bfloat16 arithmetic is not the GPU's; the GPU tier runs
    bf16.)"""
    from triton_impl import matmul_skinny as ms

    for shape in (MatmulShape(3, 70, 200), MatmulShape(70, 5, 200), MatmulShape(1, 1, 99),
                  MatmulShape(16, 16, 160)):
        a, b = MatmulCase(shape, precision, seed=splits).inputs("cpu")
        out = ms._matmul(a, b, precision, splits=splits)
        assert_correct(out, a, b, precision, False)
        assert torch.equal(out, ms._matmul(a, b, precision, splits=splits))


@pytest.mark.parametrize("transposed", [(True, False), (False, True), (True, True)])
def test_strided_operands_are_read_through_their_strides(transposed):
    from triton_impl import matmul_skinny as ms

    for shape in (MatmulShape(5, 50, 40), MatmulShape(50, 5, 40)):
        a, b = MatmulCase(shape, "fp32", transposed=transposed).inputs("cpu")
        assert_correct(ms.matmul(a, b, "fp32"), a, b, "fp32", False)


def test_offset_and_sliced_operands():
    from triton_impl import matmul_skinny as ms

    g = torch.Generator().manual_seed(3)
    big = torch.randn(90, 130, generator=g)
    for a, b in ((big[1:4, 7:77], big[10:80, 3:103]),        # M small, storage offsets
                 (big[5:85, 1:41], big[40:80, 2:9]),         # N small
                 (big[:60:2, :50], big[:50, 100:101])):      # every other row; N = 1
        assert_correct(ms.matmul(a, b, "fp32"), a, b, "fp32", False)


def test_refusals_name_the_op_and_the_values():
    from triton_impl import matmul_skinny as ms

    with pytest.raises(ValueError, match=r"triton_skinny.*M or N <= 16.*M = 17, N = 17"):
        ms.matmul(torch.zeros(17, 4), torch.zeros(4, 17))
    with pytest.raises((ValueError, TypeError), match="triton_skinny"):
        ms.matmul(torch.zeros(3, 4), torch.zeros(5, 6))
    with pytest.raises((ValueError, TypeError), match="triton_skinny"):
        ms.matmul(torch.zeros(3, 4, dtype=torch.float16), torch.zeros(4, 6), "fp16")
    with pytest.raises((ValueError, TypeError), match="triton_skinny"):
        ms.matmul(torch.zeros(3, 4), torch.zeros(4, 6), "fp64")


@pytest.mark.parametrize("mode", ["random", "exact", "nonfinite"])
def test_the_harness_record_checks_it(mode):
    from bench import problems
    from bench.catalog.matmul_shape_paths import triton_skinny_record
    from bench.check import check_one

    kernel = triton_skinny_record()
    problem = problems.get("matmul")
    for shape in (MatmulShape(3, 40, 50), MatmulShape(40, 1, 33)):
        row = check_one(kernel, problem, shape, "fp32", mode, seed=1, device="cpu")
        assert row.status == "ok", row
    assert kernel.refusal(MatmulShape(17, 17, 4))


@pytest.mark.parametrize("shape", [MatmulShape(1, 40, 33), MatmulShape(50, 3, 20),
                                   MatmulShape(1, 1, 7)], ids=str)
def test_autograd_through_triton_auto(shape):
    """triton_auto's fp32 pick here is triton_skinny's op, whose backward runs triton_auto:
    dB = Aᵀ g is K x N, a shape triton_skinny refuses. Both gradients against float64."""
    from triton_impl import matmul_auto

    assert matmul_auto.choose(shape.M, shape.N, shape.K, "fp32", 4, False) == "matmul_skinny"
    a, b = (t.detach().requires_grad_() for t in MatmulCase(shape, "fp32").inputs("cpu"))
    out = matmul_auto.matmul(a, b, "fp32")
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(2))
    out.backward(g)
    assert_correct(a.grad, g, b.detach().T, "fp32", False)
    assert_correct(b.grad, a.detach().T, g, "fp32", False)
