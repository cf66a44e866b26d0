"""Interpreter tier: training through the Triton ops (bindings/derivatives.py).

Every Triton kernel of the registry whose op has a derivative, called as a user calls it
(bench.kernels), gives through autograd the gradients that torch's own autograd gives the
float64 reference, within the bound of the forward's check at that precision: matmuls by
the error measure of bench/families/matmul/problems.py, whose magnitudes (the sums of
|terms|) are the float64 gradients of |A| @ |B| for the upstream gradient |g|. ReLU +
dropout's backward keeps the forward's mask; the MLP of docs/examples/train_mlp.py learns
on the Triton kernels, step for step as in plain PyTorch. rgb_to_grey (uint8) has none.

Every precision the interpreter runs (bench.device.can_run: not bf16); the GPU tier
(tests/gpu/test_autograd.py) runs bf16 and the CUDA ops.
"""
from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench import device, kernels, problems, registry
from bench.families.memory.problems import relu_dropout_expected
from bindings import precision as prec
from tests.support.gradients import (autograd_reference, check_matmul_gradients,
                                     gradient_error, softmax_cases)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "train_mlp.py"
F32 = prec.get("fp32").output_roundoff


def triton_kernels(op: str) -> list:
    return [k for k in registry.kernels() if k.backend == "triton" and k.op == op
            and not registry.deliberately_wrong(k)]


# --------------------------------------------------------------------------- matmul

def cases(op: str) -> list:
    """(kernel, precision) of the Triton kernels of `op` that run here: bench.device.can_run
    leaves out bf16, which the interpreter gets wrong (as the harness's check does)."""
    return [pytest.param(k, p, id=f"{k.name}-{p}") for k in triton_kernels(op)
            for p in k.precisions if device.can_run(k, "cpu", p)[0]]


@pytest.mark.parametrize("layout", ["row-major", "transposed"])
@pytest.mark.parametrize("kernel,precision", cases("matmul"))
def test_matmul_gradients(kernel, precision, layout):
    """dA = dC Bᵀ and dB = Aᵀ dC by the same kernel at the same precision, 17x13x7; with
    transposed (column-major) leaves too, whose gradients autograd hands back as such."""
    M, N, K = 17, 13, 7
    g = torch.Generator().manual_seed(M)
    dtype = prec.torch_dtype(precision)
    if layout == "transposed":
        a, b = torch.randn(K, M, generator=g).T, torch.randn(N, K, generator=g).T
    else:
        a, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
    fn = kernels.get(kernel.name)
    check_matmul_gradients(lambda x, y: fn(x, y, precision=precision), a.to(dtype),
                           b.to(dtype), precision, inner_a=N, inner_b=M)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("a_shape,b_shape", [((2, 1, 5, 6), (3, 6, 4)), ((5, 6), (2, 6, 4))],
                         ids=["both-broadcast", "2-D-A"])
def test_batched_matmul_sums_over_broadcast_dimensions(a_shape, b_shape, precision):
    """A gradient is summed over the batch copies its input was broadcast to, as torch's."""
    g = torch.Generator().manual_seed(3)
    dtype = prec.torch_dtype(precision)
    a, b = torch.randn(a_shape, generator=g).to(dtype), torch.randn(b_shape, generator=g).to(dtype)
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    copies_a = math.prod(batch) // math.prod(a.shape[:-2])
    copies_b = math.prod(batch) // math.prod(b.shape[:-2])
    check_matmul_gradients(kernels.triton_batched, a, b, precision,
                           inner_a=b.shape[-1] * copies_a, inner_b=a.shape[-2] * copies_b,
                           copies_a=copies_a, copies_b=copies_b)


def test_no_gradient_asked_none_computed():
    """Only the inputs that require a gradient get one (the other product is skipped)."""
    a = torch.randn(9, 5, requires_grad=True)
    b = torch.randn(5, 3)
    kernels.triton_v3_smem_tiling(a, b).sum().backward()
    assert b.grad is None
    torch.testing.assert_close(a.grad, torch.ones(9, 3) @ b.T)


# --------------------------------------------------------------------------- memory-bound ops

@pytest.mark.parametrize("kernel,precision", cases("vector_add"))
def test_vector_add_passes_the_gradient_to_both(kernel, precision):
    dtype = prec.torch_dtype(precision)
    x, y, g = (torch.randn(33, 17).to(dtype) for _ in range(3))
    x.requires_grad_(), y.requires_grad_()
    fn = kernels.get(kernel.name)
    fn(x, y).backward(g)
    assert torch.equal(x.grad, g) and torch.equal(y.grad, g)
    x.grad = None
    fn(x, x).backward(g)                        # both operands: the gradient twice
    assert torch.equal(x.grad, g + g)


@pytest.mark.parametrize("kernel,precision", cases("copy"))
def test_copy_passes_the_gradient_on(kernel, precision):
    dtype = prec.torch_dtype(precision)
    x, g = torch.randn(33, 17).to(dtype).requires_grad_(), torch.randn(33, 17).to(dtype)
    kernels.get(kernel.name)(x.T).backward(g.T)     # a transposed view: its gradient too
    assert torch.equal(x.grad, g)


@pytest.mark.parametrize("p", [0.0, 0.3])
@pytest.mark.parametrize("kernel,precision", cases("relu_dropout"))
def test_relu_dropout_backward_keeps_the_forward_mask(kernel, precision, p):
    """dx = g * (x > 0) * keep / (1 - p): zero exactly where the forward wrote zero (the
    same mask, recomputed from the seed, nothing stored), the forward's scale elsewhere
    (exact: bench/families/memory/problems.relu_dropout_expected)."""
    gen = torch.Generator().manual_seed(11)
    dtype = prec.torch_dtype(precision)
    x = torch.randn(37, 29, generator=gen).to(dtype).requires_grad_()
    g = (torch.rand(37, 29, generator=gen) + 0.5).to(dtype)       # no zeros: 0.5 to 1.5
    y = kernels.get(kernel.name)(x, p, 5)
    y.backward(g)
    kept = y.detach() != 0                      # x > 0 and not dropped
    assert torch.equal(x.grad != 0, kept)
    if p == 0:
        assert torch.equal(kept, x.detach() > 0)
    local = relu_dropout_expected((x.detach() > 0).to(dtype), p, 5)
    assert torch.equal(x.grad, g * local)
    (ref,) = autograd_reference(lambda t: t.relu() * kept / (1 - p), (x,), g)
    bound = 2 * prec.get(precision).output_roundoff + 2 * F32   # the scale, the product
    err = gradient_error(x.grad, ref, ref.abs() + (~kept).double())
    assert err <= bound, f"error {err:.3e} > bound {bound:.3e}"


SOFTMAX_SHAPES = [((7, 33), -1, "rows"), ((20, 6), 0, "columns"), ((4, 3, 5), 1, "middle-dim")]


@pytest.mark.parametrize("kernel,precision,shape,dim", softmax_cases(cases("softmax"),
                                                                     SOFTMAX_SHAPES))
def test_softmax_jacobian_vector_product(kernel, precision, shape, dim):
    """dx = y * (g - sum(g * y, dim)) against float64 autograd; error per element relative to
    y (|g| + sum |g| y), the size of its terms, within twice the forward's bound."""
    gen = torch.Generator().manual_seed(len(shape) + dim)
    dtype = prec.torch_dtype(precision)
    x = (3 * torch.randn(shape, generator=gen)).to(dtype).requires_grad_()
    g = torch.randn(shape, generator=gen).to(dtype)
    problem = problems.get("softmax")
    parsed = problem.parse_shape("x".join(map(str, shape)) + f":dim={dim % len(shape)}")
    bound = 2 * problem.tolerance(parsed, precision)
    y64 = torch.softmax(x.detach().double(), dim)
    magnitude = y64 * (g.double().abs() + (g.double().abs() * y64).sum(dim, keepdim=True))
    kernels.get(kernel.name)(x, dim).backward(g)
    (ref,) = autograd_reference(lambda t: torch.softmax(t, dim), (x,), g)
    err = gradient_error(x.grad, ref, magnitude + torch.finfo(dtype).tiny)
    assert x.grad.dtype == dtype and err <= bound, f"error {err:.3e} > bound {bound:.3e}"


# --------------------------------------------------------------------------- training

def load_example():
    spec = importlib.util.spec_from_file_location("train_mlp", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_learns_on_the_triton_kernels():
    """docs/examples/train_mlp.py: 16 -> 32 -> 4 on 32 points, v3 matmuls, the Triton bias
    add, ReLU (dropout 0) and online softmax; the loss falls, as plain PyTorch's does."""
    example = load_example()
    sizes = dict(steps=8, points=32)
    losses = example.train("triton", **sizes)
    assert losses[-1] < 0.7 * losses[0], losses
    torch.testing.assert_close(losses, example.train("torch", **sizes), rtol=1e-4, atol=1e-5)


def test_the_example_runs_as_a_script_with_the_grouped_matmul_and_dropout(tmp_path):
    """As docs/api.md shows it, from another folder: the checkout's packages are found."""
    out = subprocess.run([sys.executable, str(EXAMPLE), "--backend", "triton", "--steps", "3",
                          "--points", "16", "--matmul", "triton_grouped", "--dropout", "0.2"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    first, last = re.search(r"triton: loss (\S+) -> (\S+) in 3 steps", out.stdout).groups()
    assert float(last) < float(first), out.stdout
