"""triton_batched's plan for its TMA kernels (matmul_batched.tma_plan), without a GPU: the
Gluon swap at tf32, matmul_persistent's kernel with a batch axis at fp16 and bf16.

The plan turns (..., M, K) @ (..., K, N) into launches over 3-D stacks (one batch axis
each, stride 0 where an operand is broadcast; at 16 bits a column-major B as B^T's stack).
Here the plan is built for CPU tensors as if a Hopper GPU were present, and each launch is
carried out by torch in float64 on its views: the products must tile the whole of C, once
each, with the right operands. Also: the 3-D descriptors each stack gets (shape, strides,
batch step), the inputs TMA cannot read, which must fall back, and the TMA checks (here and
in triton_persistent) under fake tensors, which have no address. The kernels run in
tests/gpu/test_matmul_batched_gluon.py (tf32), tests/gpu/test_matmul_batched_tma16.py
(fp16, bf16) and under the interpreter (tests/interpreter/test_matmul_batched_tma16.py), and
are checked compiled in tests/cpu/test_wgmma_hazards.py.
"""
from __future__ import annotations

import pytest
import torch

from triton_impl import _memory
from triton_impl import matmul_batched as mb
from triton_impl import matmul_swap_gluon as mg


@pytest.fixture
def hopper(monkeypatch):
    monkeypatch.setattr(mb, "_tma_kernel_runs", lambda precision, device: precision != "fp32")


def _carried_out(a, b, plan):
    """C computed launch by launch from the plan's views (float64), NaN where none wrote."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    c = torch.full((*batch, a.shape[-2], b.shape[-1]), float("nan"), dtype=torch.float64)
    for a3, b3, c_off, c_stride, b_k_major in plan:
        c3 = mb._stack(c, c_off, a3.shape[0], c_stride)
        assert not torch.isfinite(c3).any(), "two launches write the same products"
        c3.copy_(a3.double() @ (b3.mT if b_k_major else b3).double())
    return c


CASES = [((64, 32), (32, 16), 1), ((5, 64, 32), (5, 32, 16), 1), ((64, 32), (3, 32, 16), 1),
         ((5, 64, 32), (1, 32, 16), 1), ((2, 1, 64, 32), (3, 32, 16), 2),
         ((2, 3, 4, 64, 32), (2, 3, 4, 32, 16), 1),          # merges into one batch axis
         ((2, 1, 3, 1, 2, 17, 20), (1, 4, 3, 2, 1, 20, 8), 24), ((1, 8), (8, 4), 1)]


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("sa,sb,launches", CASES, ids=str)
def test_the_plan_covers_c_once_with_the_right_operands(hopper, sa, sb, launches, precision):
    """The same stacks at tf32 and at 16 bits (where rows of K = 20 or N = 4 halves are not
    16-byte multiples: those fall back)."""
    g = torch.Generator().manual_seed(0)
    dtype = torch.float32 if precision == "tf32" else torch.float16
    a, b = torch.randn(*sa, generator=g).to(dtype), torch.randn(*sb, generator=g).to(dtype)
    plan = mb.tma_plan(a, b, precision)
    if precision == "fp16" and (sa[-1] % 8 or sb[-1] % 8):
        assert plan is None
        return
    assert plan is not None and len(plan) == launches
    torch.testing.assert_close(_carried_out(a, b, plan), a.double() @ b.double(),
                               rtol=0, atol=0)


def test_strided_views_and_column_slices(hopper):
    g = torch.Generator().manual_seed(1)
    a = torch.randn(7, 70, 40, generator=g)[1:6, 3:67, 8:40]     # rows 160 bytes apart
    b = torch.randn(40, 5, 24, generator=g)[:32].permute(1, 0, 2)  # batch stride 24
    for precision in ("tf32", "fp16"):
        x, y = (a, b) if precision == "tf32" else (a.half(), b.half())
        plan = mb.tma_plan(x, y, precision)
        assert plan is not None
        torch.testing.assert_close(_carried_out(x, y, plan), x.double() @ y.double(),
                                   rtol=0, atol=0)


def test_16_bit_column_major_b_is_read_as_b_transposed(hopper):
    """At 16 bits wgmma reads B from shared memory K-major too: a column-major B (each
    matrix's transpose contiguous) is B^T's stack, matmul_persistent's B_K_MAJOR path. At
    tf32 the Gluon swap needs a row-major B: the pointer kernel runs."""
    g = torch.Generator().manual_seed(4)
    a = torch.randn(3, 64, 32, generator=g).half()
    b = torch.randn(3, 48, 32, generator=g).half().mT            # (3, 32, 48), column-major
    plan = mb.tma_plan(a, b, "fp16")
    assert plan is not None and [p[4] for p in plan] == [True]
    assert plan[0][1].stride() == (48 * 32, 32, 1)
    torch.testing.assert_close(_carried_out(a, b, plan), a.double() @ b.double(), rtol=0, atol=0)
    assert mb.tma_plan(a.float(), b.float(), "tf32") is None


def test_16_bit_c_rows_must_suit_tma_stores(hopper):
    """fp16 C is written by TMA stores: its rows (N halves) must be 16-byte multiples. A
    column-major B with N = 36 reads fine (B^T's rows are K long), but C's rows are 72
    bytes: the pointer kernel runs."""
    a = torch.randn(2, 64, 32).half()
    assert mb.tma_plan(a, torch.randn(2, 36, 32).half().mT, "fp16") is None
    assert mb.tma_plan(a, torch.randn(2, 40, 32).half().mT, "fp16") is not None


def test_descriptors_of_a_stack_and_of_a_broadcast_matrix():
    stack = torch.randn(6, 64, 40)[:, :, :32]
    desc, step = mg._descriptor(stack, 256, 32)
    assert step == 1 and list(desc.shape) == [6, 64, 32] and list(desc.strides) == [2560, 40, 1]
    assert list(desc.block_shape) == [1, 256, 32]
    one = torch.randn(64, 32).expand(6, 64, 32)                   # batch stride 0
    desc, step = mg._descriptor(one, 256, 32)
    assert step == 0 and list(desc.shape) == [1, 64, 32] and list(desc.strides) == [2048, 32, 1]
    row = torch.randn(3, 8, 1)[:, :, 0][:, None, :]                # (3, 1, 8), free row stride
    assert _memory.tma_compatible(row)
    assert _memory.stack_strides(row) == (1, 8, 8, 1)
    assert _memory.stack_strides(row.half()) == (1, 8, 8, 1)      # 8 halves: 16 bytes
    assert _memory.stack_strides(torch.randn(3, 1, 5).half()) == (1, 5, 8, 1)


FALLBACKS = {
    "K odd": ((2, 64, 17), (2, 17, 32)),
    "N odd": ((2, 64, 32), (2, 32, 33)),
    "column-major B": ((2, 64, 32), "colB"),
    "column-major A": ("colA", (2, 32, 48)),
    "base off 16 bytes": ("offset", (2, 32, 48)),
    "batch stride off 16 bytes": ("batch-stride", (2, 32, 48)),
    "rows broadcast": ("rows0", (2, 32, 48)),
    "more launches than TMA_MAX_LAUNCHES": ((40, 1, 64, 32), (1, 50, 32, 16)),  # (40, 50)
}


def _operand(spec, dtype):
    """The operand of a FALLBACKS entry in dtype (made in it: a cast would not keep a view's
    strides and offset)."""
    def randn(*shape):
        return torch.randn(*shape).to(dtype)
    if spec == "colB":
        return randn(2, 48, 32).mT
    if spec == "colA":
        return randn(2, 32, 64).mT
    if spec == "offset":
        return randn(2, 64, 33)[..., 1:]
    if spec == "batch-stride":
        return randn(2 * 64 * 32 + 1).as_strided((2, 64, 32), (64 * 32 + 1, 32, 1))
    if spec == "rows0":
        return randn(2, 1, 32).expand(2, 64, 32)
    return randn(*spec)


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("name", list(FALLBACKS), ids=str)
def test_what_tma_cannot_read_falls_back(hopper, name, precision):
    if precision == "fp16" and name == "column-major B":
        return                              # 16 bits read it (test above)
    sa, sb = FALLBACKS[name]
    dtype = torch.float32 if precision == "tf32" else torch.float16
    assert mb.tma_plan(_operand(sa, dtype), _operand(sb, dtype), precision) is None


def test_not_without_hopper_nor_at_other_precisions(hopper):
    a, b = torch.randn(2, 64, 32), torch.randn(2, 32, 16)
    assert mb.tma_plan(a, b, "tf32") is not None
    assert mb.tma_plan(a.half(), b.half(), "fp16") is not None
    assert mb.tma_plan(a.bfloat16(), b.bfloat16(), "bf16") is not None
    assert mb.tma_plan(a, b, "fp32") is None
    assert mb.tma_plan(a, b, "tf32", tile=mb.params("tf32")) is None
    assert mb.tma_plan(a.half(), b.half(), "fp16", tile=mb.params("fp16")) is None
    assert mb.tma_plan(a[:, :, :0], b[:, :0], "tf32") is None      # K = 0: no product


def test_not_on_a_machine_without_hopper(monkeypatch):
    """(The interpreter runs the 16-bit kernel: it emulates descriptors. Not here.)"""
    monkeypatch.setattr(mb._common, "interpreting", lambda: False)
    a, b = torch.randn(2, 64, 32), torch.randn(2, 32, 16)
    assert mb.tma_plan(a, b, "tf32") is None
    assert mb.tma_plan(a.half(), b.half(), "fp16") is None


def test_tile_count_past_int32_falls_back(hopper):
    """matmul_persistent's kernel counts products x tiles in int32: a stack with more tiles
    (at 32 x 32, the smallest any candidate has) than 2^31 takes the pointer kernel."""
    a = torch.empty(1, 32, 8).half().expand(2**31, 32, 8)          # broadcast: no memory
    b = torch.empty(1, 8, 32).half().expand(2**31, 8, 32)
    assert mb.tma_plan(a, b, "fp16") is None
    assert mb.tma_plan(a[: 2**31 - 1], b[: 2**31 - 1], "fp16") is not None


def test_tma_checks_never_ask_a_fake_tensor_for_its_address():
    """Traced with fake tensors (torch.compile, opcheck), the TMA checks of the Gluon swap and
    of triton_persistent take a stack's alignment from its storage offset: PyTorch warns that a
    fake tensor's data_ptr() is meaningless (some releases refuse)."""
    import warnings

    from torch._subclasses.fake_tensor import FakeTensorMode

    from triton_impl import matmul_persistent as mp

    with FakeTensorMode(), warnings.catch_warnings():
        warnings.simplefilter("error")             # the data_ptr() warning would fail here
        stack = torch.empty(2, 64, 32)
        assert _memory.tma_compatible(stack) and _memory.tma_compatible(stack[:, 4:])  # 512 B in
        assert not _memory.tma_compatible(stack.view(-1)[1:2049].view(2, 32, 32))   # 4 B in
        rows = torch.empty(64, 32)
        assert mp._tma_rows_ok(rows, 0) and not mp._tma_rows_ok(rows.view(-1)[1:1025].view(32, 32), 0)
