"""Property-based tests, the shared part: every kernel of the registry on shapes, layouts,
dtypes and values drawn by hypothesis, against the float64 reference.

- shapes: degenerate (0, 1), primes, a tile size +- 1, tall-skinny, random;
- layouts: contiguous, transposed, sliced (every other column), with a storage offset,
  expanded (stride 0); the wrappers accept any of them;
- values: normal, wide (8 sigma: tiny probabilities in a softmax), with NaN and +-inf
  planted, subnormal, large (per dtype, below overflow);
- the oracle is the harness's (bench/families/matmul/problems.py, bench/families/memory/problems.py), made aware of
  non-finite values: where the float64 reference is NaN the kernel must give NaN, where it
  is +-inf the same inf; elsewhere the error bound holds, with an absolute floor of the
  output dtype's smallest normal for results that underflow.

Two profiles: "cpu" runs the Triton kernels through the interpreter (small sizes, few
examples, derandomized: CI is deterministic; tests/interpreter/test_fuzz.py); "gpu" runs
every CUDA and Triton kernel with more and larger examples (tests/gpu/test_fuzz.py). A failure prints hypothesis's falsifying example and
an assertion message with kernel, op, shape, layout, values and precision, enough to
rerun it by hand.
"""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.families.matmul.problems import matmul_bound, rounded_references
from bench import device as dev
from bench import problems, registry
from bench.families.memory import problems as pm
from bindings import precision as prec
from tests.support.checks import poisoned_runner

HAS_GPU = torch.cuda.is_available()
DEVICE = "cuda" if HAS_GPU else "cpu"

settings.register_profile("cpu", max_examples=10, deadline=None, derandomize=True,
                          suppress_health_check=list(HealthCheck), database=None)
settings.register_profile("gpu", max_examples=20, deadline=None, derandomize=True,
                          suppress_health_check=list(HealthCheck), database=None)
PROFILE = "gpu" if HAS_GPU else "cpu"
MAX_DIM = 300 if HAS_GPU else 40      # the interpreter runs one program at a time
LARGE = {"fp32": 1e15, "tf32": 1e15, "fp16": 8.0, "bf16": 1e15}   # no overflow at K <= 300


def _kernels():
    chosen = []
    for k in registry.select("*"):
        if k.backend not in ("cuda", "triton"):
            continue
        for p in k.precisions:
            if HAS_GPU or dev.can_run(k, "cpu", p)[0]:
                chosen.append(pytest.param(k, p, id=f"{k.name}-{p}"))
    return chosen


KERNELS = _kernels()


# --------------------------------------------------------------------------- strategies

def dims(tile: int = 16):
    """Sizes worth testing: 0, 1, primes, a tile +- 1, and anything up to MAX_DIM."""
    special = [0, 1, 2, 3, 7, 13, 31, tile - 1, tile, tile + 1, 2 * tile + 1, 97]
    return st.one_of(st.sampled_from([d for d in special if d <= MAX_DIM]),
                     st.integers(0, MAX_DIM))


LAYOUTS = ("contiguous", "transposed", "sliced", "offset", "expanded")
VALUES = ("normal", "wide", "nonfinite", "subnormal", "large")


def values(shape, kind: str, precision: str, g: torch.Generator) -> torch.Tensor:
    """float64 values of a kind, exactly representable in the precision's dtype."""
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    dtype = prec.torch_dtype(precision)
    if kind == "wide":                               # softmax: probabilities down to ~1e-20
        x = x * 8
    elif kind == "subnormal":
        x = x * torch.finfo(dtype).tiny / 4          # below the smallest normal number
    elif kind == "large":
        x = x * LARGE[precision]
    elif kind == "nonfinite" and x.numel():
        flat = x.view(-1)
        idx = torch.randint(0, flat.numel(), (3,), generator=g)
        flat[idx[0]], flat[idx[1]], flat[idx[2]] = math.nan, math.inf, -math.inf
    return x.to(dtype)


def with_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values as t (2-D or more) with other strides (on t's device)."""
    if layout == "transposed":
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "sliced":
        wide = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype, device=t.device)
        wide[..., ::2] = t
        return wide[..., ::2]
    if layout == "offset":
        buf = torch.zeros(t.numel() + 5, dtype=t.dtype, device=t.device)
        buf[5:] = t.reshape(-1)
        return buf[5:].view(t.shape)
    if layout == "expanded":                      # every row the first one: stride 0
        return t[..., :1, :].expand(t.shape) if t.shape[-2] else t
    return t


def _case(layout, kind, precision, shape, extra=""):
    return f"shape={shape} layout={layout} values={kind} precision={precision}{extra}"


# --------------------------------------------------------------------------- oracles

def assert_matches_reference(out, ref, bound, dtype, case, others=()):
    """Non-finite aware: NaN where the reference is NaN, the same inf where it is inf;
    elsewhere |out - ref| <= bound + the dtype's smallest normal (underflow), per element.
    others: more references of the same shape the output may be nearer to, element by
    element (a tf32 product's operands cut to TF32 either way: rounded_references)."""
    o = out.double().cpu()
    ref, bound = ref.cpu(), bound.cpu()
    assert o.shape == ref.shape, f"{case}: shape {tuple(o.shape)}, expected {tuple(ref.shape)}"
    nan_ref = torch.isnan(ref)
    assert bool(torch.isnan(o)[nan_ref].all()), f"{case}: a NaN of the reference is lost"
    inf_ref = torch.isinf(ref)
    assert bool((o[inf_ref] == ref[inf_ref]).all()), f"{case}: an inf of the reference differs"
    fin = ~(nan_ref | inf_ref)
    of = o[fin]
    assert bool(torch.isfinite(of).all()), f"{case}: NaN/inf where the reference is finite"
    diff = (of - ref[fin]).abs()
    for other in others:
        diff = torch.minimum(diff, (of - other.cpu()[fin]).abs())
    floor = torch.finfo(dtype).tiny if dtype.is_floating_point else 0.0
    excess = diff - (bound[fin] + floor)
    worst = float(excess.max()) if excess.numel() else -1.0
    assert worst <= 0, f"{case}: error exceeds the bound by {worst:.3g}"


def run_matmul(kernel, precision, data):
    M, N, K = data.draw(dims(), "M"), data.draw(dims(), "N"), data.draw(dims(), "K")
    la, lb = data.draw(st.sampled_from(LAYOUTS), "layout A"), data.draw(st.sampled_from(LAYOUTS), "layout B")
    kind = data.draw(st.sampled_from(VALUES), "values")
    seed = data.draw(st.integers(0, 2**16), "seed")
    g = torch.Generator().manual_seed(seed)
    a = with_layout(values((M, K), kind, precision, g).to(DEVICE), la)
    b = with_layout(values((K, N), "normal" if kind == "large" else kind, precision, g).to(DEVICE), lb)
    case = f"{kernel.name}: " + _case(f"{la}/{lb}", kind, precision, f"{M}x{N}x{K}", f" seed={seed}")
    out = poisoned_runner(kernel, precision)(a, b)
    dev.synchronize(DEVICE)
    a64, b64 = a.double().cpu(), b.double().cpu()
    ref = a64 @ b64
    scale = a64.abs().nan_to_num(posinf=0) @ b64.abs().nan_to_num(posinf=0)
    others = list(rounded_references(a.cpu(), b.cpu(), precision))
    bound = matmul_bound(ref.nan_to_num(nan=0.0, posinf=0.0, neginf=0.0), scale, K, precision)
    assert_matches_reference(out, ref, bound, prec.torch_dtype(precision), case, others)


def run_memory(kernel, precision, data):
    problem = problems.get(kernel.op)
    dtype = prec.torch_dtype(precision)
    rows, cols = data.draw(dims(), "rows"), data.draw(dims(64), "cols")
    layout = data.draw(st.sampled_from(LAYOUTS), "layout")
    kind = "normal" if kernel.op == "rgb_to_grey" else data.draw(st.sampled_from(VALUES), "values")
    seed = data.draw(st.integers(0, 2**16), "seed")
    g = torch.Generator().manual_seed(seed)
    fn = poisoned_runner(kernel, precision)
    case = f"{kernel.name}: " + _case(layout, kind, precision, f"{rows}x{cols}", f" seed={seed}")
    if kernel.op == "rgb_to_grey":
        img = torch.randint(0, 256, (3, rows, cols), generator=g, dtype=torch.uint8)
        img = with_layout(img.to(DEVICE), layout)
        out = fn(img)
        dev.synchronize(DEVICE)
        err = problem.error(out.cpu(), (img.cpu(),))
        assert err <= problem.tolerance(problem.parse_shape(f"3x{rows}x{cols}"), "u8"), \
            f"{case}: error {err}"
        return
    x = with_layout(values((rows, cols), kind, precision, g).to(DEVICE), layout)
    x64 = x.double().cpu()
    if kernel.op == "vector_add":
        y = with_layout(values((rows, cols), kind, precision, g).to(DEVICE), "contiguous")
        out = fn(x, y)
        ref = x64 + y.double().cpu()              # exact; the kernel rounds once
        assert_matches_reference(out, ref, ref.abs() * prec.get(precision).output_roundoff,
                                 dtype, case)
    elif kernel.op == "copy":
        out = fn(x)
        assert_matches_reference(out, x64, torch.zeros_like(x64), dtype, case)
    elif kernel.op == "relu_dropout":
        p = data.draw(st.sampled_from([0.0, 0.25, 0.5, 0.9]), "p")
        dseed = data.draw(st.integers(0, 2**40), "dropout seed")
        out = fn(x, p, dseed)
        expected = pm.relu_dropout_expected(x.contiguous(), p, dseed)
        same = (out == expected) | (torch.isnan(out) & torch.isnan(expected))
        assert bool(same.all()), f"{case} p={p} dropout seed={dseed}: differs from Philox"
    elif kernel.op == "softmax":
        # the dims this kernel takes at this shape (Kernel.refuses: the split takes rows only;
        # row_sram's limit of 32768 is past MAX_DIM)
        dims_taken = [d for d in (0, 1, -1)
                      if not kernel.refusal(problem.parse_shape(f"{rows}x{cols}:dim={d % 2}"))]
        d = data.draw(st.sampled_from(dims_taken), "dim")
        shape = problem.parse_shape(f"{rows}x{cols}:dim={d % 2}")
        out = fn(x, d)
        dev.synchronize(DEVICE)
        ref = torch.softmax(x64, d)
        n = x.shape[d]
        tol = problem.tolerance(shape, precision)
        assert_matches_reference(out, ref, ref.abs() * tol, dtype, f"{case} dim={d} n={n}")
    else:
        raise AssertionError(f"no fuzz oracle for op {kernel.op!r}: add one here")


def _fuzz(kernel, precision, data):
    if kernel.op == "matmul":
        run_matmul(kernel, precision, data)
    else:
        run_memory(kernel, precision, data)


def fuzzer(kernel, precision, profile: str, **overrides):
    """The property test of one kernel at one precision under a hypothesis profile. An
    element the kernel skips fails: on the GPU every output lands on memory filled with NaN
    (tests/support/checks.poisoned), on the CPU every empty tensor starts as NaN."""
    @settings(settings.get_profile(profile), **overrides)
    @given(data=st.data())
    def fuzz(data):
        if profile == "cpu":
            with dev.poisoned_cpu_allocations():
                _fuzz(kernel, precision, data)
        else:
            _fuzz(kernel, precision, data)
    return fuzz
