"""The derivatives of the ops, written once for both languages.

An op registered with torch.library has no backward until one is given: without it,
``loss.backward()`` through a ``cvt`` or ``cvt_triton`` op warns and leaves ``.grad`` None.
:func:`register` gives an op the backward formula of its kind, with
``torch.library.register_autograd``. The CUDA ops get theirs when ``bindings.ops()`` loads
them (bindings/_autograd.py), the Triton ops theirs when ``triton_impl._common.register_op``
registers them; both read the formulas here, so the two languages differentiate alike.

Each backward runs the op's own kernels where the derivative is one of them, so a model
trained on the suite's kernels runs them in both passes. ``g`` is the output's gradient:

    kind            forward                          backward
    matmul          C = op(A, B, *rest)              dA = op(g, Bᵀ, *rest)
                                                     dB = op(Aᵀ, g, *rest)
    batched_matmul  C = op(A, B, *rest),             as matmul, each summed over the batch
                    (..., M, K) @ (..., K, N)        dimensions its input was broadcast over
    dispatched      C = op(A, B, *rest), an op that  dA = auto(g, Bᵀ, *rest), dB = auto(Aᵀ, g,
      _matmul       takes only some shapes (skinny)  *rest): the auto entry of the op's language
                                                     picks for each shape (dB of a skinny
                                                     product is K x N, not skinny): cuda_auto
                                                     (bindings/auto.py, at the label of A's
                                                     dtype), or the `dispatch` the op was
                                                     registered with (triton_skinny: triton_auto)
    add             out = x + y (same shapes)        dx = dy = g
    identity        out = x                          dx = g
    relu_dropout    out = relu(x) * keep / (1 - p)   dx = g * op(1[x > 0], p, seed)
    softmax         y = softmax(x, dim)              dx = y * (g - sum(g * y, dim))

``*rest`` is what the op takes after its tensors (a precision label): the backward passes
it on unchanged, so it runs at the forward's precision (float32 stays IEEE FFMA unless the
forward asked for tf32). The transposes are views; the ops accept them (the CUDA ladder
and the Triton twins make them row-major first, the other Triton matmuls read them with
their strides, the persistent one stages what TMA cannot read).

ReLU + dropout stores no mask: its derivative is relu_dropout itself, applied to the
indicator 1[x > 0], with the same p and seed. The kernels draw the mask from (seed,
element index) alone (Philox), so that call drops exactly the elements the forward
dropped and scales the rest by exactly the forward's 1/(1 - p): relu_dropout(1) is that
scale, relu_dropout(0) is 0. p and seed get no gradient; neither does softmax's dim.
Softmax saves its output, not its input: its Jacobian-vector product needs y only (in
float32 for 16-bit types, as torch's own softmax backward computes it).

rgb_to_grey has no derivative (uint8 in, uint8 out): it is registered with kind None.
Nothing happens at import; :func:`register` needs torch.
"""
from __future__ import annotations


def _op(qualname: str):
    """torch.ops.<namespace>.<name> of "namespace::name": what the backward calls."""
    import torch

    namespace, name = qualname.split("::")
    return getattr(getattr(torch.ops, namespace), name)


def _matmul(op, batched: bool):
    def setup_context(ctx, inputs, output):
        a, b, *rest = inputs
        ctx.save_for_backward(a, b)
        ctx.rest = tuple(rest)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        da = op(grad, b.mT, *ctx.rest) if need_a else None
        db = op(a.mT, grad, *ctx.rest) if need_b else None
        if batched:
            # A (..., M, K) broadcast against B's batch dimensions gets the sum of its
            # copies' gradients, as torch.matmul's backward gives it
            da = da.sum_to_size(a.shape) if da is not None else None
            db = db.sum_to_size(b.shape) if db is not None else None
        return (da, db, *(None for _ in ctx.rest))

    return setup_context, backward


def _dispatched_matmul(op, dispatch=None):
    setup_context, _ = _matmul(op, batched=False)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad[:2]
        run = dispatch or _cuda_auto
        da = run(grad, b.mT, *ctx.rest) if need_a else None
        db = run(a.mT, grad, *ctx.rest) if need_b else None
        return (da, db, *(None for _ in ctx.rest))

    return setup_context, backward


def _cuda_auto(a, b):
    """cuda_auto's product at the label of A's dtype (the CUDA skinny op takes no label)."""
    from bindings import auto
    from bindings.precision import label_of

    return auto.matmul(a, b, label_of(a.dtype))


def _add(op):
    def backward(ctx, grad):
        need_x, need_y = ctx.needs_input_grad
        return (grad if need_x else None), (grad if need_y else None)

    return None, backward


def _identity(op):
    def backward(ctx, grad):
        return grad

    return None, backward


def _relu_dropout(op):
    def setup_context(ctx, inputs, output):
        x, p, seed = inputs
        ctx.save_for_backward(x)
        ctx.p, ctx.seed = p, seed

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # (x > 0) * keep / (1 - p), by the forward's kernel: same mask, same scale
        local = op((x > 0).to(x.dtype), ctx.p, ctx.seed)
        return grad * local, None, None

    return setup_context, backward


def _softmax(op):
    def setup_context(ctx, inputs, output):
        _x, dim = inputs
        ctx.save_for_backward(output)
        ctx.dim = dim

    def backward(ctx, grad):
        import torch

        (y,) = ctx.saved_tensors
        wide = y.dtype in (torch.float16, torch.bfloat16)
        y32, g32 = (y.float(), grad.float()) if wide else (y, grad)
        dx = y32 * (g32 - (g32 * y32).sum(ctx.dim, keepdim=True))
        return dx.to(y.dtype), None

    return setup_context, backward


FORMULAS = {
    "matmul": lambda op: _matmul(op, batched=False),
    "batched_matmul": lambda op: _matmul(op, batched=True),
    "dispatched_matmul": _dispatched_matmul,
    "add": _add,
    "identity": _identity,
    "relu_dropout": _relu_dropout,
    "softmax": _softmax,
}
KINDS = tuple(FORMULAS)


def register(qualname: str, kind: str | None, dispatch=None) -> None:
    """Registers the backward of kind `kind` (KINDS) for the op "namespace::name"; None:
    the op has no derivative, nothing is registered. `dispatch(a, b, *rest)`: the product
    a "dispatched_matmul" backward runs (default: cuda_auto's)."""
    import torch

    if kind is None:
        return
    if kind not in FORMULAS:
        raise ValueError(f"{qualname}: derivative kind must be one of {', '.join(KINDS)} or "
                         f"None, got {kind!r}")
    if dispatch is not None and kind != "dispatched_matmul":
        raise ValueError(f"{qualname}: only a dispatched_matmul derivative takes a dispatch, "
                         f"not {kind!r}")
    op = _op(qualname)
    formula = FORMULAS[kind]
    setup_context, backward = formula(op) if dispatch is None else formula(op, dispatch)
    torch.library.register_autograd(qualname, backward, setup_context=setup_context)
