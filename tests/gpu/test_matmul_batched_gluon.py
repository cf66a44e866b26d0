"""triton_batched at tf32 on the H100: the Gluon swap with a batch axis
(triton_impl/matmul_batched.py, header "tf32"; the kernel is matmul_swap_gluon's).

Which inputs take it (matmul_batched.tma_plan) and which fall back to the pointer kernel,
and for the ones that take it: one product and many, broadcast batches (stride 0, one and
several batch dimensions), odd M/N/K in 16-byte aligned rows, K = 0 and empty stacks, a
k-tail that must not read the next product's B, exact small integers, the TF32 rounding of
B and the truncation of A, run-to-run bits, and the 2-D product equal to
triton_persistent's bit for bit. The registry-wide tests (tests/gpu/test_matmul_triton.py)
run triton_batched at tf32 on 2-D inputs too; the CPU tier checks the compiled kernel
(tests/cpu/test_wgmma_hazards.py) and the plan's views (tests/cpu/test_batched_tma_plan.py).
"""
from __future__ import annotations

import pytest
import torch

from tests.support.checks import poisoned
from tests.support.stacks import STACK_CASES, UNREADABLE, aligned, moved, stack_error

NEEDS_KERNEL = "triton_persistent"      # Hopper (wgmma, TMA), as this file's kernel


@poisoned
def _run(a, b):
    """The stack's product at tf32, its output's block poisoned before the call."""
    from triton_impl import matmul_batched as mb

    return mb.matmul(a, b, "tf32")


def _takes_gluon(a, b) -> bool:
    from triton_impl import matmul_batched as mb

    return mb.tma_plan(a, b, "tf32") is not None


@pytest.mark.parametrize("sa,sb", STACK_CASES, ids=str)
def test_batched_gluon_matches_fp64(sa, sb):
    g = torch.Generator().manual_seed(sa[-1] + sb[-1])
    a, b = aligned(*sa, gen=g), aligned(*sb, gen=g)
    assert _takes_gluon(a, b)
    assert stack_error(_run(a, b), a, b, "tf32") <= 1


@pytest.mark.parametrize("m", [1, 17, 129, 255, 256, 257, 4095])
@pytest.mark.parametrize("n,k", [(1, 1), (17, 31), (129, 32), (127, 33), (128, 129),
                                 (4095, 17)], ids=str)
def test_odd_shapes_in_aligned_rows(m, n, k):
    """Every tile edge of 256 x 128 x 32 (and K below, at and above the peeled k-step),
    two products, in rows padded to 16 bytes (padding NaN: read past a row, it shows)."""
    g = torch.Generator().manual_seed(m * 7 + n + k)
    a, b = aligned(2, m, k, gen=g), aligned(2, k, n, gen=g)
    assert _takes_gluon(a, b)
    assert stack_error(_run(a, b), a, b, "tf32") <= 1


@pytest.mark.parametrize("sa,sb", [((3, 129, 200), (3, 200, 132)), ((2, 64, 4096), (4096, 64))],
                         ids=str)
def test_exact_with_small_integers(sa, sb):
    g = torch.Generator().manual_seed(2)
    a, b = aligned(*sa, gen=g, exact=True), aligned(*sb, gen=g, exact=True)
    assert _takes_gluon(a, b)
    assert torch.equal(_run(a, b), (a.double() @ b.double()).float())


def test_k_tail_never_reads_the_next_product():
    """K = 33: product 0's second k-tile covers rows 32..63 of B, past its last row. The
    descriptor's zero fill is per dimension, so it reads zeros; a 2-D (batch * K, N) view
    would read product 1's rows (here +inf) times A's zero-filled columns: NaN."""
    g = torch.Generator().manual_seed(3)
    a = aligned(2, 70, 33, gen=g)
    b = aligned(2, 33, 128, gen=g)
    b[1] = float("inf")
    assert _takes_gluon(a, b)
    out = _run(a, b)
    assert torch.isfinite(out[0]).all()
    assert stack_error(out[:1], a[:1], b[:1], "tf32") <= 1


def test_empty_stacks_and_k_zero():
    a = torch.randn(3, 64, 0, device="cuda")
    b = torch.randn(3, 0, 32, device="cuda")
    out = _run(a, b)
    assert out.shape == (3, 64, 32) and torch.equal(out, torch.zeros_like(out))
    out = _run(torch.randn(0, 64, 32, device="cuda"), torch.randn(0, 32, 16, device="cuda"))
    assert out.shape == (0, 64, 16)
    out = _run(torch.randn(2, 0, 32, device="cuda"), torch.randn(2, 32, 16, device="cuda"))
    assert out.shape == (2, 0, 16)


def test_tf32_rounding_of_b_and_truncation_of_a():
    """As the 2-D Gluon path: B rounded to the nearest TF32 (cvt.rn.tf32), A truncated by
    the tensor core. With the identity on the other side each output is one operand's
    value as the tensor core saw it."""
    from tests.support.checks import TF32_TIES, tf32_reference

    values = torch.tensor([x for x, _ in TF32_TIES] * 3, dtype=torch.float32)    # 18
    n = 20
    x = torch.ones(n, n)
    x.view(-1)[:values.numel()] = values
    eye = torch.eye(n).expand(2, n, n).contiguous()
    xs = torch.stack([x, -x])
    # rows of 20 floats are 80 bytes: 16-byte multiples
    out = _run(eye.cuda(), xs.cuda())                        # I @ B: B rounded
    assert torch.equal(out.cpu(), tf32_reference(xs))
    out = _run(xs.cuda(), eye.cuda())                        # A @ I: A truncated
    truncated = (xs.view(torch.int32) & ~0x1FFF).view(torch.float32)
    assert torch.equal(out.cpu(), truncated)


def test_repeats_bit_for_bit_and_equals_the_2d_path():
    from triton_impl import matmul_persistent as mp

    g = torch.Generator().manual_seed(9)
    a, b = aligned(4, 1024, 1024, gen=g), aligned(4, 1024, 1024, gen=g)
    first = _run(a, b)
    assert stack_error(first, a, b, "tf32") <= 1
    for _ in range(8):
        assert torch.equal(_run(a, b), first)
    # the 2-D product is a stack of one through the same kernel: same bits per product,
    # and equal to triton_persistent's (matmul_swap_gluon.matmul)
    for i in (0, 3):
        assert torch.equal(_run(a[i], b[i]), first[i])
        assert torch.equal(poisoned(mp._matmul)(a[i].contiguous(), b[i].contiguous(), "tf32",
                                                tf32_row_major_b="gluon"), first[i])


FALLBACKS = dict(UNREADABLE, **{
    "column-major B": lambda: (torch.randn(2, 64, 32), torch.randn(2, 48, 32).mT)})


@pytest.mark.parametrize("name", list(FALLBACKS), ids=str)
def test_unaligned_inputs_fall_back_and_stay_correct(name):
    a, b = moved(FALLBACKS[name]())
    assert not _takes_gluon(a, b)
    assert stack_error(_run(a, b), a, b, "tf32") <= 1


def test_fp32_and_fixed_tiles_do_not_take_it():
    from triton_impl import matmul_batched as mb

    a = torch.randn(2, 64, 32, device="cuda")
    b = torch.randn(2, 32, 48, device="cuda")
    assert mb.tma_plan(a, b, "tf32") is not None
    assert mb.tma_plan(a, b, "fp32") is None
    assert mb.tma_plan(a, b, "tf32", tile=mb.params("tf32")) is None
