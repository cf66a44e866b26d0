"""triton_batched's 16-bit TMA path (matmul_persistent's kernel with a batch axis) in
Triton's interpreter, which emulates the 3-D descriptors: stacks, broadcast operands, a
column-major B, tile edges of the interpreter's 32 x 32 x 16 tile, a k-tail beside a product
of +inf, and the 2-D product as a stack of one. float16 only: the interpreter computes
bfloat16 dots wrongly (every Triton matmul, not this kernel). On the H100:
tests/gpu/test_matmul_batched_tma16.py.
"""
from __future__ import annotations

import pytest
import torch

from tests.support.stacks import stack_error
from triton_impl import matmul_batched as mb
from triton_impl import matmul_persistent as mp


CASES = [((3, 40, 24), (3, 24, 48)), ((2, 1, 33, 16), (3, 16, 40)), ((5, 16, 8), (8, 24)),
         ((40, 16), (2, 16, 8)), ((2, 65, 48), (2, 48, 72))]


@pytest.mark.parametrize("col_b", [False, True], ids=["row-B", "col-B"])
@pytest.mark.parametrize("sa,sb", CASES, ids=str)
def test_stacks_take_the_tma_kernel(sa, sb, col_b):
    g = torch.Generator().manual_seed(sa[-1] * sb[-1])
    a = torch.randn(*sa, generator=g).half()
    if col_b:
        b = torch.randn(*sb[:-2], sb[-1], sb[-2], generator=g).half().mT
    else:
        b = torch.randn(*sb, generator=g).half()
    plan = mb.tma_plan(a, b, "fp16")
    assert plan is not None and all(p[4] == col_b for p in plan)
    assert stack_error(mb.matmul(a, b, "fp16"), a, b, "fp16") <= 1


def test_k_tail_never_reads_the_next_product():
    """K = 24: product 0's second k-tile (16 deep) covers rows 24..31 of B, past its end:
    zeros, not product 1's +inf."""
    g = torch.Generator().manual_seed(3)
    a = torch.randn(2, 40, 24, generator=g).half()
    b = torch.randn(2, 24, 32, generator=g).half()
    b[1] = float("inf")
    out = mb.matmul(a, b, "fp16")
    assert torch.isfinite(out[0]).all()
    assert stack_error(out[:1], a[:1], b[:1], "fp16") <= 1


def test_the_2d_product_is_a_stack_of_one():
    g = torch.Generator().manual_seed(4)
    a = torch.randn(3, 48, 40, generator=g).half()
    b = torch.randn(3, 40, 56, generator=g).half()
    stacked = mb.matmul(a, b, "fp16")
    for i in range(3):
        assert torch.equal(mp.matmul(a[i], b[i], "fp16"), stacked[i])
