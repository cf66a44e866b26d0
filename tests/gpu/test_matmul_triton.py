"""GPU tier: every Triton matmul, natively, at every precision it supports.

The CUDA ladder's shape sweep against the float64 reference with poisoned outputs, exact
small-integer mode, NaN/inf propagation, every autotune candidate, strided, batched and
empty inputs, bad inputs, 64-bit offsets, torch.compile(fullgraph=True) and opcheck.
"""
from __future__ import annotations

import pytest

from bench import check, problems, registry
from bench.families.matmul.models import MatmulShape
from bench.families.matmul.problems import MatmulCase, matmul_error
from bindings import precision as prec
from tests.support.checks import (assert_matches_float64, float32_precision, poisoned,
                                  poisoned_runner)
from tests.support.gpu_memory import GROUP, inputs_or_skip
from tests.support.shapes import EMPTY_SHAPES, EXACT_SHAPES, GPU_SWEEP
from tests.support.stacks import stack_error
from tests.support.tiers import kernel_precision_params, one_fast_per_kind


TRITON = [k for k in registry.select("*", op="matmul") if k.backend == "triton"]   # no _bug_
CASES = [(k, p) for k in TRITON for p in k.precisions]
PARAMS = kernel_precision_params(CASES)   # cuda_auto, triton_auto: slow


def _run(kernel, shape, precision, mode="random"):
    return check.check_one(kernel, problems.get("matmul"), shape, precision, mode,
                           seed=shape.M + shape.N, device="cuda")


@pytest.mark.parametrize("kernel,precision", PARAMS)
@pytest.mark.parametrize("shape", GPU_SWEEP, ids=str)
def test_matches_fp64_reference(kernel, precision, shape):
    result = _run(kernel, shape, precision)
    assert result.status == "ok", result


# every partial sum of small integers is exact in float32 up to K = 2^24 / 9, at every
# precision (bench/families/matmul/problems.py): the output is the product rounded once
EXACT_CASES = [param for s in EXACT_SHAPES
               for param in kernel_precision_params([(k, p, s) for k, p in CASES], f"{s}-")]


@pytest.mark.parametrize("kernel,precision,shape", EXACT_CASES)
def test_exact_with_small_integers(kernel, precision, shape):
    result = _run(kernel, shape, precision, mode="exact")
    assert result.status == "ok" and result.error == 0.0, result


@pytest.mark.parametrize("kernel,precision", PARAMS)
@pytest.mark.parametrize("shape", [MatmulShape(67, 45, 31), MatmulShape(257, 129, 130)], ids=str)
def test_nan_and_inf_propagate(kernel, precision, shape):
    result = _run(kernel, shape, precision, mode="nonfinite")
    assert result.status == "ok", result


# Every candidate compiled and run at 1024^3 and at an edge shape (about 24 compiles): slow.
# The fast tier runs the tuned winner on the sweep; the interpreter tier runs every
# candidate on an edge shape.
CANDIDATE_SHAPES = [MatmulShape(1024, 1024, 1024), MatmulShape(130, 258, 100)]


@pytest.mark.slow
@pytest.mark.parametrize("shape", CANDIDATE_SHAPES, ids=str)
@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16", "bf16"])
def test_every_autotune_candidate(precision, shape):
    """Each candidate run directly, so a config the tuner never picks is still correct."""
    import torch

    from triton_impl import matmul_autotuned, tiles

    for config in tiles.AUTOTUNE_CONFIGS[precision]:
        a, b = MatmulCase(shape, precision, seed=3).inputs("cuda")
        out = poisoned(matmul_autotuned._matmul)(a, b, precision, config=config)
        torch.cuda.synchronize()
        err = matmul_error(out, a, b, precision)
        assert err <= 1, (config, shape, err)


@pytest.mark.parametrize("kernel,precision", PARAMS)
def test_non_contiguous_inputs(kernel, precision):
    import torch

    g = torch.Generator().manual_seed(1)
    dtype = prec.torch_dtype(precision)
    a_big = torch.randn(90, 140, generator=g).to(dtype).cuda()
    b_big = torch.randn(70, 130, generator=g).to(dtype).cuda()
    run = poisoned_runner(kernel, precision)
    for a, b in [(a_big[:, ::2], b_big.T[:70, :33]), (a_big.T[:33, :70], b_big[:, 1::2])]:
        out = run(a, b)
        assert matmul_error(out, a, b, precision) <= 1


@pytest.mark.parametrize("kernel,precision", PARAMS)
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_empty_dimensions(kernel, precision, shape):
    import torch

    dtype = prec.torch_dtype(precision)
    a = torch.randn(shape.M, shape.K, device="cuda", dtype=dtype)
    b = torch.randn(shape.K, shape.N, device="cuda", dtype=dtype)
    out = poisoned_runner(kernel, precision)(a, b)
    assert out.shape == (shape.M, shape.N) and out.dtype == dtype
    assert torch.equal(out, torch.zeros_like(out))     # K = 0: zeros, not what was there


@pytest.mark.parametrize("kernel", TRITON, ids=[k.name for k in TRITON])
def test_bad_inputs_raise_clear_errors(kernel):
    import torch

    run = kernel.runner(float32_precision(kernel))
    f32 = dict(device="cuda", dtype=torch.float32)
    cases = [
        (TypeError, "must be float32", torch.randn(4, 4, **f32).half(), torch.randn(4, 4, **f32)),
        (ValueError, "on a CUDA device", torch.randn(4, 4), torch.randn(4, 4)),
        (ValueError, "same device", torch.randn(4, 4), torch.randn(4, 4, **f32)),
        (ValueError, "inner dimensions must agree", torch.randn(4, 5, **f32),
         torch.randn(4, 5, **f32)),
        (ValueError, ("2-D matrices, got 1-D", "at least 2 dimensions"), torch.randn(4, **f32),
         torch.randn(4, 4, **f32)),
    ]
    for exc, expected, a, b in cases:
        with pytest.raises(exc) as info:
            run(a, b)
        message = str(info.value)
        expected = (expected,) if isinstance(expected, str) else expected
        assert kernel.name in message and any(e in message for e in expected), message


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16", "bf16"])
def test_batched_broadcasting(precision):
    import torch

    from triton_impl import matmul_batched

    dtype = prec.torch_dtype(precision)
    g = torch.Generator().manual_seed(0)
    cases = [((2, 1, 65, 70), (3, 70, 33)), ((65, 70), (2, 70, 33)), ((4, 129, 31), (4, 31, 17)),
             ((2, 1, 3, 1, 2, 17, 19), (1, 4, 3, 2, 1, 19, 5))]
    for sa, sb in cases:
        a = torch.randn(*sa, generator=g).to(dtype).cuda()
        b = torch.randn(*sb[:-2], sb[-1], sb[-2], generator=g).to(dtype).cuda().mT  # col-major
        out = poisoned(matmul_batched.op())(a, b, precision)
        assert stack_error(out, a, b, precision) <= 1


def test_grouped_launch_order_on_the_gpu():
    from triton_impl import matmul_grouped

    want = [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11], [12, 14, 16, 18], [13, 15, 17, 19]]
    assert matmul_grouped.launch_order(5, 4, 3).tolist() == want


@pytest.mark.slow
@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("kernel", TRITON, ids=[k.name for k in TRITON])
def test_offsets_past_2_to_the_31(kernel):
    """A holds more than 2^31 elements: row * stride overflows 32 bits unless it is int64.
    8.6 GB of float32, twice for a TMA kernel, which stages A in 16-byte rows (K = 32769
    floats are not)."""
    import torch

    M, K, N = 65537, 32769, 3          # M * K = 2,147,581,953 > 2^31
    with inputs_or_skip(20):
        a = torch.empty(M, K, device="cuda")
        a[:-4].fill_(0.5)
        a[-4:] = torch.randn(4, K, device="cuda")
        b = torch.randn(K, N, device="cuda")
    precision = float32_precision(kernel)
    out = poisoned_runner(kernel, precision)(a, b)
    assert matmul_error(out[-4:], a[-4:], b, precision) <= 1


def _op_and_args(kernel, precision):
    import importlib
    from pathlib import Path

    op = importlib.import_module(f"triton_impl.{Path(kernel.source).stem}").op()
    takes = any(arg.name == "precision" for arg in op.default._schema.arguments)
    return op, ((precision,) if takes else ())


# an Inductor compile each: one op per kind (the twins' ops, the ops that take a precision,
# the TMA kernel's) in the fast tier
@pytest.mark.parametrize("kernel", one_fast_per_kind(
    [k for k in TRITON if k.chooses is None], lambda k: k.precisions))   # ops, not triton_auto
def test_torch_compile_fullgraph(kernel):
    import torch

    # fp32 for the ops without a precision argument (float32 only), fp16 for the others
    precision = "fp16" if _op_and_args(kernel, "fp16")[1] else "fp32"
    op, extra = _op_and_args(kernel, precision)
    dtype = prec.torch_dtype(precision)

    # one code object `f` for every kernel: without a reset, the ninth kernel compiled in
    # one process passes dynamo's recompile limit (8) and fails under fullgraph=True
    torch._dynamo.reset()

    @torch.compile(fullgraph=True)
    def f(a, b):
        c = op(a, b, *extra)
        return c, c.relu() + 1

    a = torch.randn(67, 45, device="cuda", dtype=dtype)
    b = torch.randn(45, 31, device="cuda", dtype=dtype)
    c, out = poisoned(f)(a, b)
    assert_matches_float64("matmul", c, (a, b), precision)
    torch.testing.assert_close(out, op(a, b, *extra).relu() + 1)


OPS = [k for k in TRITON if k.chooses is None]   # triton_auto runs the others' ops


@pytest.mark.parametrize("kernel", OPS, ids=[k.name for k in OPS])
def test_opcheck(kernel):
    import torch

    op, extra = _op_and_args(kernel, float32_precision(kernel))
    a = torch.randn(33, 17, device="cuda")
    b = torch.randn(17, 29, device="cuda")
    torch.library.opcheck(op.default, (a, b, *extra), test_utils=(
        "test_schema", "test_faketensor", "test_aot_dispatch_static"))


def test_round_to_tf32_native_bit_for_bit():
    """round_to_tf32 by cvt.rn.tf32.f32 (what the tf32 swap paths run on the H100) and its
    integer version agree with the float64 rounding of tests.support.checks, bit for bit."""
    import torch

    from tests.support.checks import assert_tf32_rounded, round_to_tf32_on, tf32_rounding_inputs
    from triton_impl import _common

    assert _common.native_tf32_round(torch.device("cuda")) == (
        torch.cuda.get_device_capability() >= (9, 0))
    x = tf32_rounding_inputs().cuda()
    assert_tf32_rounded(round_to_tf32_on(x, native=False), x)
    if _common.native_tf32_round(x.device):
        assert_tf32_rounded(round_to_tf32_on(x, native=True), x)


@pytest.mark.parametrize("module,precision,key", [
    ("matmul_autotuned", "fp16", "fp16"), ("matmul_persistent", "fp16", "fp16"),
    ("matmul_persistent", "tf32", "tf32-swap")])
def test_direct_wrapper_calls_tune_once(module, precision, key, monkeypatch):
    """Calling a wrapper directly (not through its registered op) tunes on the module's own
    autotuner, once: the second call times nothing. (Through torch.library.wrap_triton in
    eager mode every call built a new autotuner and tuned again.)"""
    import functools
    import importlib

    import torch
    import triton.testing

    mod = importlib.import_module(f"triton_impl.{module}")
    timed = []
    real = triton.testing.do_bench

    def counting(*args, **kwargs):
        timed.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(triton.testing, "do_bench", counting)
    shape = (528, 520, 512)           # above SMALL_PROBLEM_FMAS, used by no other test
    dtype = prec.torch_dtype(precision)
    a = torch.randn(shape[0], shape[2], device="cuda", dtype=dtype)
    b = torch.randn(shape[2], shape[1], device="cuda", dtype=dtype)
    # the tf32 row-major B of matmul_persistent runs matmul_swap_gluon by default (one
    # configuration, nothing to tune): its Triton swap is asked for by name (_matmul)
    run = (functools.partial(mod._matmul, tf32_row_major_b="swap") if key == "tf32-swap"
           else mod.matmul)
    run(a, b, precision)
    tuner = mod.kernel_for(key)
    assert any(k[:3] == shape for k in tuner.cache), tuner.cache.keys()
    assert timed, "the first call should have timed the candidates"
    timed.clear()
    for _ in range(2):
        run(a, b, precision)
    assert not timed, "a second call tuned again"
