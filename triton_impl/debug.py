"""Debugging Triton kernels in the interpreter: checks before a launch, and prints and
breakpoints that fire only in the programs you name (the helpers of "A Practitioner's
Guide to Triton", made into a tested utility).

With TRITON_INTERPRET=1 (set before any kernel is defined) Triton runs a kernel as Python
on the CPU, one program after another, so `print` and `breakpoint()` work inside it. With a
grid of hundreds of programs you want them in one program only: that is what the pid
conditions are for.

    conditions  one per grid axis, comma-separated, empty = any:
                "=0"       pid_0 == 0
                ",>1"      pid_1 > 1
                ">1,=0"    pid_0 > 1 and pid_1 == 0
                "<=2,,!=3" pid_0 <= 2 and pid_2 != 3
                operators: =  !=  <  <=  >  >=

    @triton.jit
    def copy_kernel(x_ptr, z_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask)
        print_if(f"pid {pid} | offs {offs} mask {mask} x {x}", ">=1")   # programs 1, 2, ...
        breakpoint_if("=2")                                             # pdb in program 2
        tl.store(z_ptr + offs, x, mask)

Inside an interpreted kernel the program ids are read from the running program; elsewhere
pass them (pid_0=..., pid_1=..., pid_2=...). These helpers are plain Python: a kernel that
calls them compiles only under the interpreter (on the GPU use tl.device_print).

Fixes against the Practitioner's Guide: `assert t.is_contiguous` there never fails (the
method itself is truthy; it must be called), a two-character operator such as ">=" was
read as ">" followed by the number "=1", and conditions were checked with eval. Its
`test_pid_conds` is `pid_conds_hold` here (pytest would collect a function named test_*).
"""
from __future__ import annotations

import operator
import os
import re

_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}
_COND = re.compile(r"^(<=|>=|!=|<|>|=)(-?\d+)$")


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def cdiv(a: int, b: int) -> int:
    """Ceiling division: how many blocks of size b cover a elements."""
    return (a + b - 1) // b


def check_tensors_gpu_ready(*tensors) -> None:
    """Raises ValueError unless every tensor is contiguous and, outside the interpreter, on
    a CUDA device (under the interpreter CPU tensors are what the kernel needs)."""
    for i, t in enumerate(tensors):
        if not t.is_contiguous():
            raise ValueError(f"check_tensors_gpu_ready: tensor {i} (shape {tuple(t.shape)}, "
                             f"strides {t.stride()}) is not contiguous")
        if not interpreting() and not t.is_cuda:
            raise ValueError(f"check_tensors_gpu_ready: tensor {i} is on {t.device}, not on a "
                             f"CUDA device (set TRITON_INTERPRET=1 to run on the CPU)")


def _as_int(pid) -> int:
    """A program id as an int, from an int, a [v] list, a numpy/torch scalar or array, or an
    interpreter tensor (which wraps a numpy array in .handle.data)."""
    if hasattr(pid, "handle") and hasattr(pid.handle, "data"):
        pid = pid.handle.data
    if isinstance(pid, (list, tuple)):
        pid = pid[0]
    if hasattr(pid, "reshape"):          # numpy or torch array of one element
        pid = pid.reshape(-1)[0]
    return int(pid)


def _pid(axis: int, given):
    """The program id along `axis`: the one given, else the running interpreted kernel's."""
    if given is not None:
        return _as_int(given)
    if not interpreting():
        raise RuntimeError("pid conditions: pass pid_0/pid_1/pid_2, or call from a kernel "
                           "running under TRITON_INTERPRET=1")
    import triton.language as tl

    try:
        return _as_int(tl.program_id(axis))
    except Exception as exc:  # noqa: BLE001 - explain instead of an interpreter traceback
        raise RuntimeError("pid conditions: no interpreted kernel is running here; pass "
                           "pid_0/pid_1/pid_2 explicitly") from exc


def pid_conds_hold(conds: str, pid_0=None, pid_1=None, pid_2=None) -> bool:
    """True if the program ids satisfy every condition (see the module doc for the syntax)."""
    parts = conds.replace(" ", "").split(",")
    if len(parts) > 3:
        raise ValueError(f"pid conditions: at most 3 (one per grid axis), got {conds!r}")
    for part in parts:
        if part and not _COND.match(part):
            raise ValueError(f"pid conditions: {part!r} is not <op><int> with op one of "
                             f"{', '.join(_OPS)} (in {conds!r})")
    for axis, (part, given) in enumerate(zip(parts, (pid_0, pid_1, pid_2))):
        if part:                              # only the axes with a condition are read
            op, value = _COND.match(part).groups()
            if not _OPS[op](_pid(axis, given), int(value)):
                return False
    return True


def print_if(txt, conds: str, pid_0=None, pid_1=None, pid_2=None) -> None:
    """print(txt) in the programs that satisfy the conditions."""
    if pid_conds_hold(conds, pid_0, pid_1, pid_2):
        print(txt)


def breakpoint_if(conds: str, pid_0=None, pid_1=None, pid_2=None) -> None:
    """Stops in the debugger (Python's breakpoint(), so PYTHONBREAKPOINT chooses which) in
    the programs that satisfy the conditions."""
    if pid_conds_hold(conds, pid_0, pid_1, pid_2):
        breakpoint()  # noqa: T100 - this is the point of the helper
