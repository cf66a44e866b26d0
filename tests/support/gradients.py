"""What the autograd tests of both tiers share: torch's own float64 gradients of a
reference, and the error of a kernel's gradient against them."""
from __future__ import annotations

import math

import torch


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
