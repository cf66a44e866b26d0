"""What the autograd tests of both tiers share: torch's own float64 gradients of a
reference, the error of a kernel's gradient against them, and the matmul gradient check."""
from __future__ import annotations

import math

import pytest
import torch

from bench.device import poison_free_memory
from bench.families.matmul.problems import ROUNDINGS, matmul_bound, tf32_rounded
from bindings import precision as prec


def autograd_reference(fn, tensors, grad):
    """The gradients torch's autograd gives fn at float64, for the upstream gradient grad."""
    leaves = [t.detach().double().requires_grad_() for t in tensors]
    fn(*leaves).backward(grad.detach().double())
    return [leaf.grad for leaf in leaves]


def gradient_error(got, ref, magnitude) -> float:
    """max |got - ref| / magnitude (NaN anywhere: inf)."""
    assert got.shape == ref.shape, (tuple(got.shape), tuple(ref.shape))
    err = (got.double() - ref).abs() / magnitude.clamp_min(torch.finfo(torch.float64).tiny)
    if err.numel() == 0:
        return 0.0
    return math.inf if bool(torch.isnan(err).any()) else float(err.max())


def backward(out, grad) -> None:
    """out.backward(grad); on the GPU after every free block of the caching allocator is
    filled with NaN (bench.device.poison_free_memory), so a gradient a backward kernel
    leaves unwritten is NaN, not a previous answer (tests/support/checks.py)."""
    if out.is_cuda:
        poison_free_memory()
    out.backward(grad)


def softmax_cases(kernel_cases: list, shapes: list) -> list:
    """pytest params (kernel, precision, shape, dim) of each (kernel, precision) param at
    each (shape, dim, id) the kernel takes: the split softmax takes rows only
    (Kernel.refuses), so its other dims are no cases of any machine."""
    from bench import problems

    problem = problems.get("softmax")
    out = []
    for param in kernel_cases:
        kernel, precision = param.values
        for shape, dim, name in shapes:
            parsed = problem.parse_shape("x".join(map(str, shape)) + f":dim={dim % len(shape)}")
            if not kernel.refusal(parsed):
                out.append(pytest.param(kernel, precision, shape, dim, id=f"{param.id}-{name}"))
    return out


def check_matmul_gradients(fn, a, b, precision, inner_a, inner_b, copies_a=1, copies_b=1):
    """Backward through fn(a, b) against the float64 reference; inner_a, inner_b: how many
    products each element of dA, dB sums (N and M, times the batch copies summed). Each
    element must lie within its matmul bound (bench/families/matmul/problems.py: the
    magnitudes are the float64 gradients of |A| @ |B| for |g|) of the reference, or, at
    tf32, of the nearest one of the references with A, B and g cut to TF32 either way.
    copies_a, copies_b: the batch copies an input was broadcast to; its gradient is their
    sum, each copy's product rounded to the output type and the sum made in it, so the
    bound adds 2 copies u_out of the magnitude (a rounding per product and per addition)."""
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    c = fn(a, b)
    g = torch.randn(c.shape, generator=torch.Generator().manual_seed(7)).to(c.dtype)
    g = g.to(c.device)
    backward(c, g)
    if c.is_cuda:
        torch.cuda.synchronize()
    mags = autograd_reference(torch.matmul, (a.abs(), b.abs()), g.abs())
    cuts = ROUNDINGS.get(precision, ("kept",))
    dist = [None, None]
    for ha in cuts:
        for hb in cuts:
            for hg in cuts:
                cut = [tf32_rounded(t.detach(), h) for t, h in ((a, ha), (b, hb), (g, hg))]
                for i, (t, ref) in enumerate(zip((a, b), autograd_reference(torch.matmul,
                                                                            cut[:2], cut[2]))):
                    near = (t.grad.double() - ref).abs()
                    dist[i] = near if dist[i] is None else torch.minimum(dist[i], near)
    refs = autograd_reference(torch.matmul, (a, b), g)
    u_out = prec.get(precision).output_roundoff
    for name, t, d, ref, mag, inner, copies in (
            ("dA", a, dist[0], refs[0], mags[0], inner_a, copies_a),
            ("dB", b, dist[1], refs[1], mags[1], inner_b, copies_b)):
        assert t.grad is not None and t.grad.dtype == t.dtype, name
        bound = matmul_bound(ref, mag, inner, precision)
        if copies > 1:
            bound = bound + 2 * copies * u_out * mag
        err = gradient_error(d, torch.zeros_like(d), bound)
        assert err <= 1, f"{name}: error {err:.3g} times its bound"
