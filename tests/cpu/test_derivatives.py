"""CPU tier: the backward formulas of bindings/derivatives.py, checked by torch.autograd.gradcheck.

The CUDA ops cannot run here, so a stand-in library (namespace cvt_stand_in) defines every
op of CVT_MATMUL_OPS and CVT_MEMORY_OPS with the schemas bindings/*.cpp give them (read
from the sources) and float64 implementations in plain torch; bindings/_autograd.py then
registers their backward exactly as bindings.ops() does for torch.ops.cvt. gradcheck and
gradgradcheck compare each backward with finite differences in float64; the Triton ops,
whose kernels run here through the interpreter, are checked against float64 autograd in
tests/interpreter/test_autograd.py, and the CUDA ops on the GPU in tests/gpu/.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck

from bindings import _autograd, config, derivatives

ROOT = Path(__file__).resolve().parents[2]
STAND_IN = "cvt_stand_in"


def _relu_dropout(x, p, seed):
    """A mask drawn from the seed alone, as the kernels draw theirs (Philox there)."""
    keep = torch.rand(x.shape, generator=torch.Generator().manual_seed(seed), dtype=x.dtype) >= p
    return x.relu() * keep / (1 - p)


IMPLEMENTATIONS = {
    "vector_add": lambda x, y: x + y,
    "copy": lambda x: x.clone(),
    "relu_dropout": _relu_dropout,
    "softmax_row_sram": lambda x, dim: torch.softmax(x, dim),
    "softmax_online": lambda x, dim: torch.softmax(x, dim),
    "softmax_split": lambda x, dim: torch.softmax(x, dim),
    "rgb_to_grey": lambda img: (0.2989 * img[0] + 0.5870 * img[1] + 0.1140 * img[2]
                                + 0.5).to(torch.uint8),
}


def schemas() -> dict[str, str]:
    """Every CUDA op's schema, as bindings/matmul_ops.cpp and memory_ops.cpp define them."""
    matmul = re.search(r'm\.def\("matmul_" #VERSION "(\(.*?\) -> Tensor)"\)',
                       (ROOT / "bindings" / "matmul_ops.cpp").read_text()).group(1)
    memory = dict(re.findall(r'#define CVT_SCHEMA_(\w+) "(.*)"',
                             (ROOT / "bindings" / "memory_ops.cpp").read_text()))
    return {**{op: matmul for op in (*config.MATMUL_OPS, *config.TENSOR_CORE_OPS, *config.TF32_OPS,
                                     *config.SKINNY_OPS)},
            **{op: memory[op] for op in config.MEMORY_OPS}}


_library = []       # defined once per process (a namespace cannot be defined twice)
_calls = []         # the precisions the stand-in batched matmul was called with


def _batched(a, b, precision):
    _calls.append(precision)
    return torch.matmul(a, b)


def _fake(op: str):
    """The stand-in's fake kernel, for AOT autograd's tracing: the same torch code on fake
    tensors, except where it needs real data (a mask from a generator, uint8 rounding)."""
    if op.startswith("matmul_"):
        return torch.mm
    if op == "batched_matmul":
        return lambda a, b, precision: torch.matmul(a, b)
    if op == "relu_dropout":
        return lambda x, p, seed: torch.empty_like(x)
    if op == "rgb_to_grey":
        return lambda img: img.new_empty(img.shape[1:])
    return IMPLEMENTATIONS[op]


@pytest.fixture(scope="module")
def ops():
    if not _library:
        lib = torch.library.Library(STAND_IN, "DEF")
        for op, schema in schemas().items():
            lib.define(op + schema)
            lib.impl(op, torch.mm if op.startswith("matmul_") else IMPLEMENTATIONS[op], "CPU")
        lib.define("batched_matmul(Tensor a, Tensor b, str precision) -> Tensor")
        lib.impl("batched_matmul", _batched, "CPU")
        for op in (*config.MATMUL_OPS, *config.TENSOR_CORE_OPS, *config.TF32_OPS,
                   *config.SKINNY_OPS, *config.MEMORY_OPS, "batched_matmul"):
            torch.library.register_fake(f"{STAND_IN}::{op}", _fake(op), lib=lib)
        _autograd.register(STAND_IN)
        derivatives.register(f"{STAND_IN}::batched_matmul", "batched_matmul")
        _library.append(lib)
    return getattr(torch.ops, STAND_IN)


def leaf(*shape, seed=0, away_from_zero=False):
    t = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    if away_from_zero:      # ReLU's kink at 0 is no place for finite differences
        t = t.sign() * (t.abs() + 0.1)
    return t.requires_grad_()


def check(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)      # the backward is itself differentiable


def test_every_cuda_op_has_a_kind_and_the_kinds_exist():
    kinds = _autograd.kinds()
    assert list(kinds) == [*config.MATMUL_OPS, *config.TENSOR_CORE_OPS, *config.TF32_OPS,
                          *config.SKINNY_OPS, *config.MEMORY_OPS]
    assert all(kinds[op] == "dispatched_matmul" for op in config.SKINNY_OPS)
    assert all(kinds[op] == "matmul" for op in (*config.MATMUL_OPS, *config.TENSOR_CORE_OPS, *config.TF32_OPS))
    assert set(kinds.values()) - {None} <= set(derivatives.KINDS)
    assert kinds["rgb_to_grey"] is None
    assert set(IMPLEMENTATIONS) == set(config.MEMORY_OPS), "a new memory op needs a stand-in here"


def test_a_dispatch_goes_only_with_a_dispatched_matmul():
    """The product a backward runs is the caller's only where the op takes some shapes
    (triton_skinny's backward runs triton_auto); any other kind is its own op's formula."""
    with pytest.raises(ValueError, match=r"cvt_stand_in::x: only a dispatched_matmul "
                                         r"derivative takes a dispatch, not 'matmul'"):
        derivatives.register(f"{STAND_IN}::x", "matmul", dispatch=lambda a, b: a @ b)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match=r"cvt_stand_in::x: derivative kind must be one of "
                                         r"matmul, .* or None, got 'matmull'"):
        derivatives.register(f"{STAND_IN}::x", "matmull")


@pytest.mark.parametrize("op", sorted([*config.MATMUL_OPS, *config.TENSOR_CORE_OPS,
                                       *config.TF32_OPS]))
def test_every_ladder_op(ops, op):
    check(getattr(ops, op), leaf(5, 4, seed=1), leaf(4, 3, seed=2))


def test_the_skinny_path_differentiates_through_cuda_autos_picks(ops, monkeypatch):
    """dB of a skinny product is K x N, which the skinny op refuses: the backward's two
    products go to bindings.auto.matmul, at the forward's precision label."""
    from bindings import auto

    picked = []

    def pick(a, b, label):
        picked.append((tuple(a.shape), tuple(b.shape)))
        return torch.mm(a, b)

    monkeypatch.setattr(auto, "matmul", pick)
    check(ops.matmul_skinny, leaf(3, 40, seed=1), leaf(40, 30, seed=2))
    assert ((3, 30), (30, 40)) in picked and ((40, 3), (3, 30)) in picked


def test_matmul_with_transposed_inputs(ops):
    op = getattr(ops, config.MATMUL_OPS[-1])
    check(lambda a, b: op(a.T, b.T), leaf(4, 5, seed=3), leaf(3, 4, seed=4))


def test_vector_add_and_copy(ops):
    check(ops.vector_add, leaf(6, 5, seed=1), leaf(6, 5, seed=2))
    check(ops.copy, leaf(6, 5, seed=3))


@pytest.mark.parametrize("p", [0.0, 0.5])
def test_relu_dropout(ops, p):
    check(lambda x: ops.relu_dropout(x, p, 7), leaf(8, 9, seed=5, away_from_zero=True))


@pytest.mark.parametrize("op", ["softmax_row_sram", "softmax_online"])
@pytest.mark.parametrize("shape,dim", [((4, 6), -1), ((4, 6), 0), ((3, 4, 5), 1)])
def test_softmax(ops, op, shape, dim):
    check(lambda x: getattr(ops, op)(x, dim), leaf(*shape, seed=6))


@pytest.mark.parametrize("shape", [(4, 6), (3, 4, 5)])
def test_softmax_split_rows(ops, shape):
    check(lambda x: ops.softmax_split(x, -1), leaf(*shape, seed=6))


@pytest.mark.parametrize("a_shape,b_shape", [((2, 1, 3, 4), (3, 4, 5)), ((3, 4), (2, 4, 5)),
                                             ((2, 3, 4), (4, 5))])
def test_batched_matmul_sums_over_broadcast_dimensions(ops, a_shape, b_shape):
    check(lambda a, b: ops.batched_matmul(a, b, "tf32"), leaf(*a_shape, seed=1),
          leaf(*b_shape, seed=2))


def test_backward_runs_at_the_forwards_precision(ops):
    a, b = leaf(3, 4, seed=1), leaf(4, 2, seed=2)
    _calls.clear()
    ops.batched_matmul(a, b, "tf32").sum().backward()
    assert _calls == ["tf32"] * 3        # forward, dA, dB


def test_only_the_gradients_asked_for_are_computed(ops):
    a, b = leaf(3, 4, seed=1), leaf(4, 2, seed=2).detach()
    _calls.clear()
    ops.batched_matmul(a, b, "fp32").sum().backward()
    assert _calls == ["fp32"] * 2 and b.grad is None


def test_opcheck_traces_every_backward(ops):
    """What tests/gpu/test_autograd.py asks of the real ops: an autograd kernel at the
    Autograd key, and AOT autograd tracing each backward (static and dynamic shapes) to
    eager's gradients."""
    x, y = leaf(5, 6, seed=1), leaf(5, 6, seed=2)
    checks = [(getattr(ops, op), (x, leaf(6, 3, seed=3))) for op in config.MATMUL_OPS]
    checks += [(ops.batched_matmul, (leaf(2, 1, 5, 6, seed=4), leaf(3, 6, 2, seed=5), "tf32")),
               (ops.vector_add, (x, y)), (ops.copy, (x,)), (ops.relu_dropout, (x, 0.3, 5)),
               (ops.softmax_row_sram, (x, 0)), (ops.softmax_online, (x, -1))]
    for op, args in checks:
        torch.library.opcheck(op.default, args, test_utils=(
            "test_schema", "test_autograd_registration", "test_faketensor",
            "test_aot_dispatch_static", "test_aot_dispatch_dynamic"))
