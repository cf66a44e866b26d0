"""What a submission's call may and may not do, watched from inside the call.

`watching()` wraps one call of a student's function:

    torch ops     a TorchDispatchMode sees every aten op the call issues (and the suite's
                  own CUDA ops, namespace cvt: they are torch ops too). Allocation, views
                  and metadata pass (ALLOWED); anything that computes (mm, addmm, bmm,
                  _softmax, add, mul, copy_, clone, sum, _to_copy ...) is refused on the
                  spot, and the call fails with the op's name.
    launches      every Triton launch (JITFunction.run, and InterpretedFunction.run under
                  the interpreter) is recorded with the file its kernel is defined in. Inside
                  a launch the mode is off: Triton itself moves the arguments with torch ops
                  under the interpreter.

The grader (bench/grading/grade.py) then asks of the record: did the call launch a kernel
of the declared backend, defined in the submission's own file, and none of this suite's
(triton_impl/)? What it cannot see: a submission that undoes the mode or the patches from
inside its own process before the call (the grader's verdict is still made in another
process, from the outputs alone; docs/labs.md, "What the grader trusts, and what it does
not").
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

# aten ops a kernel's Python wrapper may issue: allocation, views, metadata.
ALLOWED = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
    "zeros", "zeros_like", "new_zeros", "full", "full_like", "new_full", "ones", "ones_like",
    "new_ones", "arange", "zero_", "fill_", "lift_fresh", "detach", "alias",
    "view", "_unsafe_view", "_reshape_alias", "reshape", "as_strided", "t", "transpose",
    "permute", "expand", "squeeze", "unsqueeze", "select", "slice", "narrow", "split",
    "split_with_sizes", "unbind", "flatten", "unflatten", "view_as", "contiguous",
    "is_contiguous", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "size",
    "stride", "numel", "dim", "_local_scalar_dense", "result_type", "is_same_size", "set_",
    "resize_", "as_strided_",
})


# where this suite's own kernels live: launching one is no lab's work
SUITE_PACKAGES = ("triton_impl", "bench", "bindings")
SUITE_DIRS = tuple(str(Path(__file__).resolve().parents[2] / d) + os.sep
                   for d in SUITE_PACKAGES)


class Refused(RuntimeError):
    """A torch op that computes, called inside a graded call."""


@dataclass
class Record:
    """What one watched call did."""
    refused: list[str] = field(default_factory=list)      # op names, in order
    launches: list[tuple[str, str]] = field(default_factory=list)   # (kernel, its file)


_inside = threading.local()


def _op_name(func) -> str:
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func)
    namespace = getattr(func, "namespace", "aten")
    return name if namespace == "aten" else f"{namespace}::{name}"


def _mode(record: Record):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = _op_name(func)
            if getattr(_inside, "launch", 0) == 0 and name not in ALLOWED:
                record.refused.append(name)
                what = (f"this suite's own kernel {name}" if "::" in name
                        else f"torch's {name}")
                raise Refused(f"the call computed with {what}: a lab's kernel must do the "
                              f"work itself")
            return func(*args, **(kwargs or {}))

    _refuse_wrapped_triton(Watch, record)
    return Watch()


def _refuse_wrapped_triton(mode_class, record: Record) -> None:
    """A Triton kernel behind a torch.library op (torch.library.wrap_triton, as this suite's
    ops are) reaches a dispatch mode as a higher-order op, not as an aten op: refused here
    too, and named by its kernel's file."""
    try:
        from torch._higher_order_ops.triton_kernel_wrap import (
            kernel_side_table, triton_kernel_wrapper_functional, triton_kernel_wrapper_mutation)
    except ImportError:          # a torch without them has no such ops either
        return

    def refuse(mode, *args, kernel_idx=None, **kwargs):
        try:
            kernel = kernel_side_table.get_kernel(kernel_idx)
        except Exception:
            kernel = None
        raise wrapped_refusal(kernel, record)

    for hop in (triton_kernel_wrapper_mutation, triton_kernel_wrapper_functional):
        hop.py_impl(mode_class)(refuse)


def wrapped_refusal(kernel, record: Record) -> Refused:
    """Why a Triton kernel launched through a torch.library op is refused, named."""
    name, file = _kernel_file(kernel) if kernel is not None else ("a Triton kernel", "")
    module = getattr(_unwrap(kernel), "__module__", "") or ""
    record.refused.append(name)
    ours = file.startswith(SUITE_DIRS) or module.split(".")[0] in SUITE_PACKAGES
    what = (f"this suite's own kernel {name}" if ours
            else f"the Triton kernel {name} through a torch.library op")
    return Refused(f"the call computed with {what}: a lab's kernel must do the work itself, "
                   f"launched from the file handed in")


def _unwrap(fn):
    """The Python function inside a JITFunction, or an Autotuner or heuristics around one."""
    while fn is not None and getattr(fn, "__code__", None) is None and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def _kernel_file(fn) -> tuple[str, str]:
    """(name, file) of a kernel: a JITFunction, or an Autotuner or heuristics around one."""
    inner = _unwrap(fn)
    code = getattr(inner, "__code__", None)
    return (getattr(inner, "__name__", "kernel"),
            str(Path(code.co_filename).resolve()) if code else "")


@contextlib.contextmanager
def watching():
    """Record and refuse inside the block (module doc); everything is restored on exit."""
    from triton.runtime import jit

    record = Record()
    classes = [jit.JITFunction]
    try:
        from triton.runtime import interpreter
        classes.append(interpreter.InterpretedFunction)
    except ImportError:       # a Triton without the interpreter
        pass
    originals = {cls: cls.run for cls in classes}

    def wrap(run):
        def launched(self, *args, **kwargs):
            record.launches.append(_kernel_file(self))
            _inside.launch = getattr(_inside, "launch", 0) + 1
            try:
                return run(self, *args, **kwargs)
            finally:
                _inside.launch -= 1
        return launched

    for cls, run in originals.items():
        cls.run = wrap(run)
    try:
        with _mode(record):
            yield record
    finally:
        for cls, run in originals.items():
            cls.run = run
