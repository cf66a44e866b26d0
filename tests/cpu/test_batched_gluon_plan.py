"""triton_batched's tf32 plan for the Gluon swap (matmul_batched.gluon_plan), without a GPU.

The plan turns (..., M, K) @ (..., K, N) into launches of matmul_swap_gluon over 3-D stacks
(one batch axis each, stride 0 where an operand is broadcast). Here the plan is built for
CPU tensors as if a Hopper GPU were present, and each launch is carried out by torch in
float64 on its views: the products must tile the whole of C, once each, with the right
operands. Also: the 3-D descriptors each stack gets (shape, strides, batch step), the
inputs TMA cannot read, which must fall back, and the TMA checks (here and in
triton_persistent) under fake tensors, which have no address. The kernel itself runs in
tests/gpu/test_matmul_batched_gluon.py and is checked compiled in
tests/cpu/test_wgmma_hazards.py.
"""
from __future__ import annotations

import pytest
import torch

from triton_impl import matmul_batched as mb
from triton_impl import matmul_swap_gluon as mg


@pytest.fixture
def hopper(monkeypatch):
    monkeypatch.setattr(mg, "available", lambda device: True)


def _carried_out(a, b, plan):
    """C computed launch by launch from the plan's views (float64), NaN where none wrote."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    c = torch.full((*batch, a.shape[-2], b.shape[-1]), float("nan"), dtype=torch.float64)
    for a3, b3, c_off, c_stride in plan:
        c3 = mb._stack(c, c_off, a3.shape[0], c_stride)
        assert not torch.isfinite(c3).any(), "two launches write the same products"
        c3.copy_(a3.double() @ b3.double())
    return c


CASES = [((64, 32), (32, 16), 1), ((5, 64, 32), (5, 32, 16), 1), ((64, 32), (3, 32, 16), 1),
         ((5, 64, 32), (1, 32, 16), 1), ((2, 1, 64, 32), (3, 32, 16), 2),
         ((2, 3, 4, 64, 32), (2, 3, 4, 32, 16), 1),          # merges into one batch axis
         ((2, 1, 3, 1, 2, 17, 20), (1, 4, 3, 2, 1, 20, 8), 24), ((1, 8), (8, 4), 1)]


@pytest.mark.parametrize("sa,sb,launches", CASES, ids=str)
def test_the_plan_covers_c_once_with_the_right_operands(hopper, sa, sb, launches):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(*sa, generator=g), torch.randn(*sb, generator=g)
    plan = mb.gluon_plan(a, b, "tf32")
    assert plan is not None and len(plan) == launches
    torch.testing.assert_close(_carried_out(a, b, plan), a.double() @ b.double(),
                               rtol=0, atol=0)


def test_strided_views_and_column_slices(hopper):
    g = torch.Generator().manual_seed(1)
    a = torch.randn(7, 70, 40, generator=g)[1:6, 3:67, 8:40]     # rows 160 bytes apart
    b = torch.randn(40, 5, 24, generator=g)[:32].permute(1, 0, 2)  # batch stride 24
    plan = mb.gluon_plan(a, b, "tf32")
    assert plan is not None
    torch.testing.assert_close(_carried_out(a, b, plan), a.double() @ b.double(),
                               rtol=0, atol=0)


def test_descriptors_of_a_stack_and_of_a_broadcast_matrix():
    stack = torch.randn(6, 64, 40)[:, :, :32]
    desc, step = mg._descriptor(stack, 256, 32)
    assert step == 1 and list(desc.shape) == [6, 64, 32] and list(desc.strides) == [2560, 40, 1]
    assert list(desc.block_shape) == [1, 256, 32]
    one = torch.randn(64, 32).expand(6, 64, 32)                   # batch stride 0
    desc, step = mg._descriptor(one, 256, 32)
    assert step == 0 and list(desc.shape) == [1, 64, 32] and list(desc.strides) == [2048, 32, 1]
    row = torch.randn(3, 8, 1)[:, :, 0][:, None, :]                # (3, 1, 8), free row stride
    assert mg.tma_compatible(row)
    assert mg._normalised_strides(row) == (1, 8, 8, 1)


FALLBACKS = {
    "K odd": ((2, 64, 17), (2, 17, 32)),
    "N odd": ((2, 64, 32), (2, 32, 33)),
    "column-major B": ((2, 64, 32), "colB"),
    "column-major A": ("colA", (2, 32, 48)),
    "base off 16 bytes": ("offset", (2, 32, 48)),
    "batch stride off 16 bytes": ("batch-stride", (2, 32, 48)),
    "rows broadcast": ("rows0", (2, 32, 48)),
    "more launches than GLUON_MAX_LAUNCHES": ((40, 1, 64, 32), (1, 50, 32, 16)),  # (40, 50)
}


def _operand(spec):
    if spec == "colB":
        return torch.randn(2, 48, 32).mT
    if spec == "colA":
        return torch.randn(2, 32, 64).mT
    if spec == "offset":
        return torch.randn(2, 64, 33)[..., 1:]
    if spec == "batch-stride":
        return torch.randn(2 * 64 * 32 + 1).as_strided((2, 64, 32), (64 * 32 + 1, 32, 1))
    if spec == "rows0":
        return torch.randn(2, 1, 32).expand(2, 64, 32)
    return torch.randn(*spec)


@pytest.mark.parametrize("name", list(FALLBACKS), ids=str)
def test_what_tma_cannot_read_falls_back(hopper, name):
    sa, sb = FALLBACKS[name]
    a, b = _operand(sa), _operand(sb)
    assert mb.gluon_plan(a, b, "tf32") is None


def test_not_without_hopper_nor_at_other_precisions(hopper):
    a, b = torch.randn(2, 64, 32), torch.randn(2, 32, 16)
    assert mb.gluon_plan(a, b, "tf32") is not None
    assert mb.gluon_plan(a, b, "fp32") is None
    assert mb.gluon_plan(a.half(), b.half(), "fp16") is None
    assert mb.gluon_plan(a, b, "tf32", tile=mb.params("tf32")) is None
    assert mb.gluon_plan(a[:, :, :0], b[:, :0], "tf32") is None      # K = 0: no product


def test_not_on_a_machine_without_hopper():
    a, b = torch.randn(2, 64, 32), torch.randn(2, 32, 16)
    assert mb.gluon_plan(a, b, "tf32") is None


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
        assert mg.tma_compatible(stack) and mg.tma_compatible(stack[:, 4:])   # 512 bytes in
        assert not mg.tma_compatible(stack.view(-1)[1:2049].view(2, 32, 32))  # 4 bytes in
        rows = torch.empty(64, 32)
        assert mp._tma_rows_ok(rows, 0) and not mp._tma_rows_ok(rows.view(-1)[1:1025].view(32, 32), 0)
