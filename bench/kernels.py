"""Every kernel of the suite as a Python function: the one way to call them from a script.

    >>> import torch
    >>> from bench import kernels
    >>> a, b = torch.randn(512, 256, device="cuda"), torch.randn(256, 384, device="cuda")
    >>> c = kernels.cuda_v3_smem_tiling(a, b)           # the lecture's v3, in CUDA
    >>> c = kernels.triton_v3_smem_tiling(a, b)         # its Triton twin
    >>> c = kernels.triton_autotuned(a.half(), b.half())         # precision from the dtype
    >>> c = kernels.cublas(a, b, precision="tf32")               # or asked for
    >>> y = kernels.triton_softmax_online(torch.randn(8, 1000), dim=0)   # on a CPU too

A kernel's function has the name `python -m bench list` prints (a dot becomes "_":
cuda_v1_5_thread_tiling), the arguments of its op (matmul: a, b; vector_add: x, y; copy: x;
relu_dropout: x, p, seed; softmax: x, dim; rgb_to_grey: image) and a keyword `precision`
(fp32, tf32, fp16, bf16, u8; default: from the first tensor's dtype, float32 meaning fp32,
IEEE arithmetic, or tf32 for a kernel that only has tf32, such as cuda_t4_tf32). Its docstring says what it does, in which file, and its twin.

    kernels.names(op="matmul")     the names, optionally of one op or backend
    kernels.get("cuda_v1.5_thread_tiling")   a function by its registry name
    help(kernels)                  this text and every kernel with its summary

Without a GPU, the Triton kernels run through Triton's interpreter (slow: small tensors)
and the torch references run on the CPU; the CUDA kernels need a GPU. The same kernels are
torch ops too (torch.ops.cvt.* for CUDA, torch.ops.cvt_triton.* for Triton; docs/api.md),
which torch.compile can trace and autograd differentiates (every op but rgb_to_grey has a
backward, by kernels of its own family: docs/api.md, "Training with your own kernels").
Importing this module does nothing: the registry is read, and a kernel built or compiled,
when a function is first asked for.
"""
from __future__ import annotations

import functools
import inspect

from bindings import precision as prec


def _python_name(name: str) -> str:
    return name.replace(".", "_")


def _registry():
    from bench import registry

    return registry


def _precision_of(kernel, args, asked: str | None) -> str:
    if asked is not None:
        if asked not in kernel.precisions:
            raise ValueError(f"{kernel.name}: precision {asked!r} is not supported; choose "
                             f"from {', '.join(kernel.precisions)}")
        return asked
    tensor = next((a for a in args if hasattr(a, "dtype")), None)
    label = prec.label_of(tensor.dtype) if tensor is not None else None
    only = kernel.precisions[0] if len(kernel.precisions) == 1 else None
    if label not in kernel.precisions and only and tensor is not None \
            and prec.get(only).dtype == prec.dtype_name(tensor.dtype):
        return only     # a kernel of one precision stored as this dtype (cuda_t4_tf32: tf32)
    if label is None or label not in kernel.precisions:
        got = prec.dtype_name(tensor.dtype) if tensor is not None else "no tensor"
        wanted = ", ".join(f"{p} ({prec.get(p).dtype})" for p in kernel.precisions)
        raise TypeError(f"{kernel.name}: inputs of dtype {got} fit none of its precisions: "
                        f"{wanted}")
    return label


def _signature(problem) -> inspect.Signature:
    from bench.problem_base import REQUIRED

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                default=inspect.Parameter.empty if d is REQUIRED else d)
              for n, d in problem.arguments]
    params.append(inspect.Parameter("precision", inspect.Parameter.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _doc(kernel) -> str:
    lines = [kernel.summary, "",
             f"op {kernel.op}, {kernel.backend} ({kernel.version}), precisions "
             f"{', '.join(kernel.precisions)}; source {kernel.source}"]
    if kernel.twin:
        lines.append(f"twin: {_python_name(kernel.twin)}")
    if kernel.min_capability > _registry().ARCH_FLOOR:
        only = " only" if getattr(kernel, "max_capability", None) == kernel.min_capability else ""
        lines.append(f"needs compute capability {kernel.min_capability[0]}."
                     f"{kernel.min_capability[1]}{only} ({kernel.needs})")
    if not kernel.runs_on_cpu:
        lines.append("needs a GPU")
    return "\n".join(lines)


def _function(name: str):
    """The function of the kernel registered as `name` (or its Python spelling)."""
    kernel = next((k for k in _registry().kernels() if name in (k.name, _python_name(k.name))),
                  None)
    if kernel is None:
        import difflib

        close = difflib.get_close_matches(name, names(), n=3)
        raise AttributeError(f"bench.kernels has no kernel {name!r}"
                             + (f"; did you mean {' or '.join(close)}?" if close else
                                "; kernels.names() lists them"))
    return _make(kernel.name)


@functools.lru_cache(maxsize=None)
def _make(registered: str):
    from bench import device, problems

    kernel = _registry().get(registered)
    problem = problems.get(kernel.op)
    signature = _signature(problem)

    def call(*args, precision=None, **kwargs):
        bound = signature.bind(*args, precision=precision, **kwargs)
        bound.apply_defaults()
        values = [bound.arguments[n] for n, _ in problem.arguments]
        chosen = _precision_of(kernel, values, precision)
        where = device.setup()      # without a GPU, Triton runs through its interpreter
        with device.quiet_interpreter(where):
            return kernel.runner(chosen)(*values)

    call.__name__ = call.__qualname__ = _python_name(kernel.name)
    call.__module__ = __name__
    call.__signature__ = signature
    call.__doc__ = _doc(kernel)
    call.kernel = kernel         # the registry record: tile parameters, model, twin
    return call


def names(op: str | None = None, backend: str | None = None) -> list[str]:
    """The Python names of the kernels (deliberately wrong ones included), in registry order."""
    return [_python_name(k.name) for k in _registry().kernels()
            if (op is None or k.op == op) and (backend is None or k.backend == backend)]


def get(name: str):
    """The function of a kernel by its registry name ("cuda_v1.5_thread_tiling") or its
    Python name ("cuda_v1_5_thread_tiling")."""
    return _function(name)


def __getattr__(name: str):
    """kernels.<name>: the function of a kernel (names() lists them)."""
    if name.startswith("__"):
        if name == "__all__":
            return ["names", "get", *names()]
        raise AttributeError(name)
    return _function(name)


def __dir__():
    """The module's own names and every kernel's."""
    return sorted(set(globals()) | set(names()))


def markdown() -> str:
    """The table of every kernel's function that docs/api.md holds (tests keep it current)."""
    from bench import problems
    from bench.problem_base import REQUIRED

    rows = ["| function | op | backend | arguments | precisions | what it is |",
            "|---|---|---|---|---|---|"]
    for k in _registry().kernels():
        args = ", ".join(n if d is REQUIRED else f"{n}={d}"
                         for n, d in problems.get(k.op).arguments)
        rows.append(f"| `{_python_name(k.name)}` | {k.op} | {k.backend} | {args} | "
                    f"{', '.join(k.precisions)} | {k.summary.replace('|', '/')} |")
    return "\n".join(rows)
