"""GPU tier: training through the CUDA and Triton ops, natively (bindings/derivatives.py).

Gradients against torch's autograd of the float64 reference, within the bound of the
forward's check at each precision (the measures of tests/interpreter/test_autograd.py):
every op of CVT_MATMUL_OPS and every Triton matmul of the registry at every precision it
takes, at 17x13x7 and 130x129x33 (MxNxK), with row-major and transposed leaves; the
batched matmul's broadcast dimensions summed; the memory-bound ops of both languages
(vector_add, copy, relu_dropout: exact, the same bits in both languages; softmax over rows,
columns and a middle dimension). Then opcheck with test_autograd_registration, a training
step under torch.compile, and the MLP of docs/examples/train_mlp.py on the CUDA and the
Triton kernels.
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
import torch

from bench import device, kernels, problems, registry
from bench.device import poison_free_memory
from bench.families.memory.problems import relu_dropout_expected
from bindings import config
from bindings import precision as prec
from tests.support.gradients import (autograd_reference, backward, check_matmul_gradients,
                                     gradient_error, softmax_cases)

ROOT = Path(__file__).resolve().parents[2]
F32 = prec.get("fp32").output_roundoff
SHAPES = [(17, 13, 7), (130, 129, 33)]          # M, N, K
SHAPE_IDS = ["x".join(map(str, s)) for s in SHAPES]


@pytest.fixture(scope="module")
def ops():
    import bindings

    return bindings.ops()


def registered(op: str, backend: str) -> list:
    return [k for k in registry.kernels() if k.backend == backend and k.op == op
            and not registry.deliberately_wrong(k)]


def cases(op: str, backends=("cuda", "triton")) -> list:
    return [pytest.param(k, p, id=f"{k.name}-{p}") for b in backends for k in registered(op, b)
            for p in k.precisions]


def runnable(kernel, precision):
    runs, why = device.can_run(kernel, "cuda", precision)
    if not runs:
        pytest.skip(why)
    return kernels.get(kernel.name)


def matmul_leaves(shape, precision, layout, seed=0):
    M, N, K = shape
    g = torch.Generator().manual_seed(seed + M)
    if layout == "transposed":          # column-major leaves: views of the transposes
        a, b = torch.randn(K, M, generator=g).T, torch.randn(N, K, generator=g).T
    else:
        a, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
    dtype = prec.torch_dtype(precision)
    return a.to(dtype=dtype, device="cuda"), b.to(dtype=dtype, device="cuda")


# --------------------------------------------------------------------------- matmul

@pytest.mark.parametrize("layout", ["row-major", "transposed"])
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("op", config.MATMUL_OPS)
def test_every_cuda_ladder_op(ops, op, shape, layout):
    """Every op of CVT_MATMUL_OPS, called as torch.ops.cvt.<op> (a new rung too)."""
    M, N, _K = shape
    a, b = matmul_leaves(shape, "fp32", layout)
    check_matmul_gradients(getattr(ops, op), a, b, "fp32", inner_a=N, inner_b=M)


@pytest.mark.parametrize("layout", ["row-major", "transposed"])
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("kernel,precision", cases("matmul"))
def test_every_matmul_kernel_at_every_precision(kernel, precision, shape, layout):
    """Through bench.kernels, as a user calls them: dA and dB by the same kernel at the
    forward's precision (tf32 stays tf32, fp32 stays IEEE)."""
    fn = runnable(kernel, precision)
    M, N, _K = shape
    a, b = matmul_leaves(shape, precision, layout)
    check_matmul_gradients(lambda x, y: fn(x, y, precision=precision), a, b, precision,
                           inner_a=N, inner_b=M)


# One token, and N small with a long K: the auto entries run their skinny path there, whose
# op takes only skinny shapes, while dB = Aᵀ g is K x N (33 x 40 here, 2000 x 3): the
# backward runs the language's auto entry again (bindings/derivatives.py, dispatched_matmul).
SKINNY_SHAPES = [(1, 40, 33), (50, 3, 2000)]
SKINNY_IDS = ["x".join(map(str, s)) for s in SKINNY_SHAPES]


@pytest.mark.parametrize("shape", SKINNY_SHAPES, ids=SKINNY_IDS)
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("name", ["cuda_auto", "triton_auto"])
def test_auto_entries_through_their_skinny_paths(name, precision, shape):
    fn = runnable(registry.get(name), precision)
    M, N, _K = shape
    a, b = matmul_leaves(shape, precision, "row-major")
    check_matmul_gradients(lambda x, y: fn(x, y, precision=precision), a, b, precision,
                           inner_a=N, inner_b=M)


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16", "bf16"])
@pytest.mark.parametrize("a_shape,b_shape", [((2, 1, 17, 13), (3, 13, 7)), ((17, 13), (2, 13, 7)),
                                             ((4, 130, 33), (33, 129))],
                         ids=["both-broadcast", "2-D-A", "2-D-B"])
def test_batched_matmul_sums_over_broadcast_dimensions(a_shape, b_shape, precision):
    g = torch.Generator().manual_seed(3)
    dtype = prec.torch_dtype(precision)
    a = torch.randn(a_shape, generator=g).to(dtype=dtype, device="cuda")
    b = torch.randn(b_shape, generator=g).to(dtype=dtype, device="cuda")
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    copies_a = math.prod(batch) // math.prod(a.shape[:-2])
    copies_b = math.prod(batch) // math.prod(b.shape[:-2])
    check_matmul_gradients(lambda x, y: kernels.triton_batched(x, y, precision=precision),
                           a, b, precision, inner_a=b.shape[-1] * copies_a,
                           inner_b=a.shape[-2] * copies_b, copies_a=copies_a, copies_b=copies_b)


# --------------------------------------------------------------------------- memory-bound ops

@pytest.mark.parametrize("kernel,precision", cases("vector_add") + cases("copy"))
def test_vector_add_and_copy_pass_the_gradient_on(kernel, precision):
    fn = runnable(kernel, precision)
    dtype = prec.torch_dtype(precision)
    x, y, g = (torch.randn(129, 257, device="cuda").to(dtype) for _ in range(3))
    x.requires_grad_(), y.requires_grad_()
    if kernel.op == "copy":
        fn(x.T).backward(g.T)                   # a transposed view: its gradient too
        assert torch.equal(x.grad, g)
        return
    fn(x, y).backward(g)
    assert torch.equal(x.grad, g) and torch.equal(y.grad, g)
    x.grad = None
    fn(x, x).backward(g)                        # both operands: the gradient twice
    assert torch.equal(x.grad, g + g)


@pytest.mark.parametrize("p", [0.0, 0.3])
@pytest.mark.parametrize("kernel,precision", cases("relu_dropout"))
def test_relu_dropout_backward_keeps_the_forward_mask(kernel, precision, p):
    """dx = g * relu_dropout(1[x > 0], p, seed), exactly: the forward's mask and scale
    (bench/families/memory/problems.relu_dropout_expected), zero where it wrote zero.
    129 x 1001 elements: not a multiple of 4, so the last Philox group is partial."""
    fn = runnable(kernel, precision)
    gen = torch.Generator().manual_seed(11)
    dtype = prec.torch_dtype(precision)
    x = torch.randn(129, 1001, generator=gen).to(dtype=dtype, device="cuda").requires_grad_()
    g = (torch.rand(129, 1001, generator=gen) + 0.5).to(dtype=dtype, device="cuda")
    y = fn(x, p, 5)
    backward(y, g)
    kept = y.detach() != 0
    assert torch.equal(x.grad != 0, kept)
    assert torch.equal(x.grad, g * relu_dropout_expected((x.detach() > 0).to(dtype), p, 5))
    if p == 0:
        assert torch.equal(kept, x.detach() > 0)


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_relu_dropout_gradients_are_the_same_bits_in_both_languages(precision):
    dtype = prec.torch_dtype(precision)
    x = torch.randn(1000, 333, device="cuda").to(dtype)
    g = torch.randn(1000, 333, device="cuda").to(dtype)
    grads = []
    for name in ("cuda_relu_dropout", "triton_relu_dropout"):
        leaf = x.clone().requires_grad_()
        backward(kernels.get(name)(leaf, 0.4, 21), g)
        grads.append(leaf.grad)
    assert torch.equal(grads[0], grads[1])
    # and both the gradient of the forward's mask: g * relu_dropout(1[x > 0]) (the mask of
    # Philox's bits, bench/families/memory/problems.py)
    assert torch.equal(grads[0], g * relu_dropout_expected((x > 0).to(dtype), 0.4, 21))


SOFTMAX_SHAPES = [((7, 1000), -1, "rows"), ((1000, 33), 0, "columns"),
                  ((4, 3, 1001), 1, "middle-dim"), ((2, 20000), -1, "long-rows")]


@pytest.mark.parametrize("kernel,precision,shape,dim", softmax_cases(cases("softmax"),
                                                                     SOFTMAX_SHAPES))
def test_softmax_jacobian_vector_product(kernel, precision, shape, dim):
    """dx = y * (g - sum(g * y, dim)) against float64 autograd; error per element relative to
    y (|g| + sum |g| y), the size of its terms, within twice the forward's bound."""
    problem = problems.get("softmax")
    parsed = problem.parse_shape("x".join(map(str, shape)) + f":dim={dim % len(shape)}")
    fn = runnable(kernel, precision)
    gen = torch.Generator().manual_seed(len(shape) + dim)
    dtype = prec.torch_dtype(precision)
    x = (3 * torch.randn(shape, generator=gen)).to(dtype=dtype, device="cuda").requires_grad_()
    g = torch.randn(shape, generator=gen).to(dtype=dtype, device="cuda")
    bound = 2 * problem.tolerance(parsed, precision)
    y64 = torch.softmax(x.detach().double(), dim)
    magnitude = y64 * (g.double().abs() + (g.double().abs() * y64).sum(dim, keepdim=True))
    backward(fn(x, dim), g)
    (ref,) = autograd_reference(lambda t: torch.softmax(t, dim), (x,), g)
    err = gradient_error(x.grad, ref, magnitude + torch.finfo(dtype).tiny)
    assert x.grad.dtype == dtype and err <= bound, f"error {err:.3e} > bound {bound:.3e}"


# --------------------------------------------------------------------------- torch.library

def triton_ops() -> dict:
    """name -> (torch.ops.cvt_triton op, its arguments after the tensors)."""
    from triton_impl import (copy, matmul_autotuned, matmul_batched, matmul_grouped,
                             matmul_persistent, matmul_v1_5_thread_tiling, matmul_v1_naive,
                             matmul_v2_register_tiling, matmul_v3_smem_tiling, relu_dropout,
                             softmax, softmax_split, vector_add)

    ladder = (matmul_v1_naive, matmul_v1_5_thread_tiling, matmul_v2_register_tiling,
              matmul_v3_smem_tiling)
    out = {m.__name__.rsplit(".", 1)[-1]: (m.op(), ()) for m in ladder}
    out.update(matmul_grouped=(matmul_grouped.op(), ("fp32",)),
               matmul_autotuned=(matmul_autotuned.op(), ("fp32",)),
               matmul_batched=(matmul_batched.op(), ("fp32",)),
               vector_add=(vector_add.op(), ()), copy=(copy.op(), ()),
               relu_dropout=(relu_dropout.op(), (0.3, 5)),
               softmax_row_sram=(softmax.op("row_sram"), (0,)),
               softmax_online=(softmax.op("online"), (-1,)),
               softmax_split=(softmax_split.op(), (-1,)))
    if torch.cuda.get_device_capability() >= (9, 0):
        out["matmul_persistent"] = (matmul_persistent.op(), ("tf32",))
    return out


def test_opcheck_autograd_registration(ops):
    """Every op with a derivative, inputs requiring gradients: the autograd kernel is
    registered, and AOT autograd traces the backward (the fake kernels, the formulas) and
    gets eager's gradients. Odd sizes (33, 17, 29): no row is 16-byte aligned."""
    def leaf(*shape):
        return torch.randn(*shape, device="cuda", requires_grad=True)

    checks = [(getattr(ops, op), (leaf(33, 17), leaf(17, 29))) for op in config.MATMUL_OPS]
    x = leaf(33, 17)
    checks += [(ops.vector_add, (x, leaf(33, 17))), (ops.copy, (x,)),
               (ops.relu_dropout, (x, 0.3, 5)), (ops.softmax_row_sram, (x, 0)),
               (ops.softmax_online, (x, -1)), (ops.softmax_split, (x, -1))]
    for name, (op, extra) in triton_ops().items():
        if name.startswith("matmul_"):
            checks.append((op, (leaf(33, 17), leaf(17, 29), *extra)))
        elif name == "vector_add":
            checks.append((op, (x, leaf(33, 17))))
        else:
            checks.append((op, (x, *extra)))
    for op, args in checks:
        utils = ("test_schema", "test_autograd_registration", "test_faketensor")
        # A compiled backward runs in autograd's device thread, where the allocator that
        # matmul_persistent's wrapper gives Triton for its TMA descriptors (a context
        # variable, set by the thread that traced) is not set: AOT autograd cannot run its
        # backward graph. Eager backward through it is tested above.
        if "matmul_persistent" not in op.default.name():
            utils += ("test_aot_dispatch_static",)
        torch.library.opcheck(op.default, args, test_utils=utils)


@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_torch_compile_of_a_training_step(ops, backend):
    """The forward of a two-layer MLP compiled with fullgraph=True; AOT autograd traces the
    registered backward formulas into the compiled backward. Gradients as in eager."""
    if backend == "cuda":
        mm, drop, smax = ops.matmul_v3_smem_tiling, ops.relu_dropout, ops.softmax_online
    else:
        t = triton_ops()
        mm, drop, smax = t["matmul_v3_smem_tiling"][0], t["relu_dropout"][0], t["softmax_online"][0]

    def loss_of(x, w1, w2):
        h = drop(mm(x, w1), 0.25, 3)
        return -smax(mm(h, w2), -1)[:, 0].log().mean()

    # the float64 reference: the same step in torch, dropout's mask from Philox's bits
    keep = relu_dropout_expected(torch.ones(67, 31, device="cuda"), 0.25, 3).double()

    def reference(x, w1, w2):
        h = torch.relu(x @ w1) * keep
        return -torch.softmax(h @ w2, -1)[:, 0].log().mean()

    g = torch.Generator().manual_seed(0)
    x = torch.randn(67, 45, generator=g).cuda()
    params = [(torch.randn(45, 31, generator=g) / 7).cuda().requires_grad_(),
              (torch.randn(31, 5, generator=g) / 6).cuda().requires_grad_()]
    eager = torch.autograd.grad(loss_of(x, *params), params)
    compiled = torch.compile(loss_of, fullgraph=True)
    poison_free_memory()              # the gradients land on NaN (tests/support/gradients.py)
    got = torch.autograd.grad(compiled(x, *params), params)
    refs = autograd_reference(reference, (x, *params), torch.tensor(1.0, device="cuda"))[1:]
    for e, c, ref in zip(eager, got, refs):
        torch.testing.assert_close(c, e, rtol=1e-5, atol=1e-6)
        err = gradient_error(c, ref, ref.abs().max().expand_as(ref))   # float32 steps: ~1e-6
        assert err <= 1e-4, f"error {err:.3e} against float64, relative to the largest gradient"


# --------------------------------------------------------------------------- training

def load_example():
    spec = importlib.util.spec_from_file_location(
        "train_mlp", ROOT / "docs" / "examples" / "train_mlp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_mlp_learns_on_the_kernels(backend):
    """docs/examples/train_mlp.py with its defaults (64 points, 20 steps, v3 matmuls): the loss
    falls, step for step as in plain PyTorch (float32 on the GPU: TF32 is off for matmuls)."""
    example = load_example()
    losses = example.train(backend)
    assert losses[-1] < 0.5 * losses[0], losses
    torch.testing.assert_close(losses, example.train("torch"), rtol=1e-4, atol=1e-5)
    dropped = example.train(backend, dropout=0.2, matmul=f"{backend}_v1_naive")
    assert dropped[-1] < dropped[0], dropped
