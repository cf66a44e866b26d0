"""Reads past the inputs, found by running a failed kernel once more under the Triton interpreter.

A NaN in a failed output means one of two things: the kernel never wrote the element (every
output starts as NaN: bench/device.py), or it computed the element from memory it read past
the end of an input (the CPU tier poisons every empty tensor with NaN, and whatever lies past
an input may be one). The first run cannot tell them apart, and what lies past an input
changes from run to run. So on the CPU a failed check runs the kernel once more (bench/check.py,
failure_note), here:

  1. every input tensor is copied into the middle of a larger buffer whose margins hold
     GUARD (a finite value, 4096 for floats), with the same strides, so that a read past an
     input lands in its own margin rather than in a neighbouring tensor;
  2. every `tl.load` of the interpreter is checked against the tensors the launch was given
     (InterpreterBuilder.create_masked_load: masked loads, block pointers and tensor
     descriptors all come through it): an address outside every one of them is recorded
     (which kernel argument it is nearest to, the element index, how far past the end, the
     program) and reads GUARD instead of memory, so the rerun is the same every time.

The rerun's output is then the output of a kernel whose reads past the inputs give GUARD:
repeatable, and wrong exactly where those reads reach. Only loads are checked (stores and
atomics are not). Nothing is patched outside `rerun`, which restores the interpreter on exit.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

GUARD = 4096.0          # what a read past the inputs gives in the rerun (floats)
GUARD_INT = 77          # the same, for integer inputs (fits int8 and uint8)
MARGIN = 1 << 14        # elements of guard before and after each input, at least
ALIGN = 64              # bytes: torch's CPU allocations start at multiples of 64


@dataclass(frozen=True)
class Extent:
    """The memory one kernel argument covers: [start, end) in bytes."""
    parameter: str      # the @triton.jit function's argument ("b_ptr")
    start: int
    end: int
    tensor: object      # the torch.Tensor


@dataclass
class OutOfBoundsRead:
    """The first read outside every tensor of a launch, for the tensor it lies nearest to."""
    kernel: str                     # the @triton.jit function
    parameter: str                  # its argument the address lies nearest to
    tensor: object = field(repr=False)   # that argument's tensor
    offset: int                     # elements from the tensor's first element
    program: tuple[int, int, int]   # tl.program_id of the program that read it
    count: int = 1                  # element reads outside the launch's tensors, near it


@dataclass
class Rerun:
    """What the checked rerun saw: its output, how many Triton launches it checked (0: the
    kernel launched no Triton kernel, so nothing could read past the inputs) and the reads
    outside the launches' tensors, one per tensor, in the order they first happened."""
    out: object
    launches: int = 0
    reads: list[OutOfBoundsRead] = field(default_factory=list)
    names: dict = field(default_factory=dict)    # data_ptr of a guarded input -> its name

    def name(self, read: OutOfBoundsRead) -> str:
        """The tensor a read lies nearest to, as the op names it: an input's name (the
        Problem's arguments: "b"), "the output", or else the kernel's argument ("ws_ptr")."""
        t = read.tensor
        if t.data_ptr() in self.names:
            return self.names[t.data_ptr()]
        out = self.out
        if hasattr(out, "untyped_storage") and \
                t.untyped_storage().data_ptr() == out.untyped_storage().data_ptr():
            return "the output"
        return read.parameter

    def describe(self) -> str:
        """One clause per tensor read out of bounds, then what the rerun was: "reads past
        the inputs: b[19, 0], 1 past the end of b (19x13): b_ptr of matmul_kernel, first
        in program (0, 0, 0), 338 element reads in all; a rerun that checked every load
        (such reads gave 4096 there)"."""
        named = [(self.name(r), r) for r in self.reads]
        inputs = all(name in self.names.values() for name, _ in named)
        return ("reads past the inputs: " if inputs else "reads out of bounds: ") + "; ".join(
            _clause(name, r) for name, r in named) + (
            f"; a rerun that checked every load (such reads gave {GUARD:g} there)")


def _span(t) -> int:
    """Elements from a tensor's first element to its last, inclusive (0 when empty)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))


def _index(t, offset: int) -> str:
    """The element `offset` elements from a contiguous tensor's first, as an index whose
    first coordinate may pass the shape ("[19, 0]" of a 19 x 13 tensor); else "[offset]"."""
    if t.dim() < 2 or not t.is_contiguous():
        return f"[{offset}]"
    index, rest = [], offset
    for stride in t.stride():
        index.append(rest // stride)
        rest %= stride
    return f"[{', '.join(map(str, index))}]"


def _clause(name: str, read: OutOfBoundsRead) -> str:
    """"b[19, 0], 1 past the end of b (19x13): b_ptr of matmul_kernel, first in program
    (0, 0, 0), 338 element reads in all"."""
    t, span = read.tensor, _span(read.tensor)
    where = (f"{read.offset - span + 1} past the end" if read.offset >= span
             else f"{-read.offset} before the start")
    shape = "x".join(map(str, t.shape)) or "a scalar"
    argument = "" if name == read.parameter else f"{read.parameter} of "
    count = f", {read.count} element reads in all" if read.count > 1 else ""
    return (f"{name.removeprefix('the ')}{_index(t, read.offset)}, {where} of {name} "
            f"({shape}): {argument}{read.kernel}, first in program {read.program}{count}")


def guard_value(floating: bool):
    """What the margins hold and a read past the inputs gives, for a float or integer type."""
    return GUARD if floating else GUARD_INT


def guarded_copy(t, poison: bool = False):
    """`t`'s values in the middle of a larger buffer (same shape and strides) whose margins,
    at least MARGIN elements on each side, hold GUARD (poison: NaN, or an integer type's
    largest value, what the check's poisoned memory holds). The copy starts at the same address
    modulo ALIGN as `t`, so a wrapper that picks its vector width from the alignment (16-byte
    accesses) takes the same path as in the first run."""
    import torch

    if t.is_complex() or t.dtype == torch.bool or any(s < 0 for s in t.stride()):
        return t.clone()
    span = _span(t)
    margin = -(-max(MARGIN, span) // ALIGN) * ALIGN       # whole ALIGN-byte lines or more
    before = margin + (t.data_ptr() % ALIGN) // t.element_size()
    value = guard_value(t.dtype.is_floating_point)
    if poison:
        value = float("nan") if t.dtype.is_floating_point else torch.iinfo(t.dtype).max
    buf = torch.full((before + span + margin,), value, dtype=t.dtype, device=t.device)
    view = buf.as_strided(t.shape, t.stride(), before)
    view.copy_(t)
    return view


def _extents(args) -> list[Extent]:
    """The tensors among a launch's (name, argument) pairs (in tuples and tensor descriptors
    too)."""
    from triton.runtime import interpreter as interp
    from triton.runtime.jit import TensorWrapper

    found = []

    def visit(name, arg):
        if isinstance(arg, tuple):
            for i, a in enumerate(arg):
                visit(f"{name}[{i}]", a)
        elif isinstance(arg, interp.TensorDescriptor):
            visit(name, arg.base)
        elif isinstance(arg, TensorWrapper):
            visit(name, arg.base)
        elif hasattr(arg, "data_ptr") and hasattr(arg, "stride"):
            start = arg.data_ptr()
            found.append(Extent(name, start, start + _span(arg) * arg.element_size(), arg))

    for name, arg in args:
        visit(name, arg)
    return found


class _Watch:
    """Patches the interpreter: every launch records its tensors, every load is checked."""

    def __init__(self):
        self.launches = 0
        self.kernel = ""
        self.extents: list[Extent] = []
        self.reads: dict[tuple[str, str], OutOfBoundsRead] = {}   # (kernel, argument) -> first

    @contextlib.contextmanager
    def patched(self):
        import numpy as np
        from triton.runtime import interpreter as interp

        executor, builder = interp.GridExecutor, interp.InterpreterBuilder
        call, load = executor.__call__, builder.create_masked_load
        watch = self

        def checked_call(self, *args, **kwargs):
            watch.launches += 1
            watch.kernel = getattr(self.fn, "__name__", "kernel")
            watch.extents = _extents(list(zip(self.arg_names, args)) + list(kwargs.items()))
            return call(self, *args, **kwargs)

        def checked_load(self, ptrs, mask, other, *rest):
            if not watch.extents:
                return load(self, ptrs, mask, other, *rest)
            dtype_np = interp._get_np_dtype(ptrs.get_element_ty())
            width = np.dtype(dtype_np).itemsize
            addr = ptrs.data.astype(np.uint64)
            last = addr + np.uint64(width)
            inside = np.zeros(addr.shape, dtype=bool)
            for e in watch.extents:
                inside |= (addr >= np.uint64(e.start)) & (last <= np.uint64(e.end))
            outside = np.broadcast_to(mask.data, addr.shape) & ~inside
            if not outside.any():
                return load(self, ptrs, mask, other, *rest)
            watch.record(addr[outside], width, self.grid_idx)
            fill = guard_value(np.issubdtype(dtype_np, np.floating))
            base = (np.zeros(addr.shape, dtype=dtype_np) if other is None
                    else np.broadcast_to(other.data, addr.shape).astype(dtype_np))
            other = interp.TensorHandle(np.where(outside, fill, base).astype(dtype_np),
                                        ptrs.get_element_ty())
            mask = interp.TensorHandle(np.broadcast_to(mask.data, addr.shape) & ~outside,
                                       mask.dtype)
            return load(self, ptrs, mask, other, *rest)

        executor.__call__, builder.create_masked_load = checked_call, checked_load
        try:
            yield self
        finally:
            executor.__call__, builder.create_masked_load = call, load

    def record(self, addresses, width: int, grid_idx) -> None:
        """Counts each address against the launch tensor it lies nearest to (the first of
        equals), keeping the first address of each tensor."""
        import numpy as np

        a = addresses.astype(np.int64)
        gaps = np.stack([np.where(a < e.start, e.start - a, np.maximum(0, a - e.end + 1))
                         for e in self.extents])
        near = gaps.argmin(axis=0)
        program = tuple(int(i) for i in grid_idx)
        for k in sorted(set(near.tolist()), key=lambda k: int(np.argmax(near == k))):
            e, hits = self.extents[k], a[near == k]
            key = (self.kernel, e.parameter)
            if key in self.reads:
                self.reads[key].count += len(hits)
            else:
                self.reads[key] = OutOfBoundsRead(self.kernel, e.parameter, e.tensor,
                                                  (int(hits[0]) - e.start) // width, program,
                                                  len(hits))


def poisoned_margins(inputs) -> tuple:
    """The inputs as guarded copies whose margins are poisoned (guarded_copy): what the CPU
    check runs a kernel on, so that a read past an input gives NaN every time instead of
    whatever memory lay there (which could even be a harmless zero)."""
    import torch

    return tuple(guarded_copy(t, poison=True) if isinstance(t, torch.Tensor) else t
                 for t in inputs)


def rerun(fn, inputs, names) -> Rerun | None:
    """Runs `fn(*inputs)` once more on guarded copies of the input tensors (guarded_copy),
    every Triton load checked; `names` are the inputs' names (the Problem's arguments).
    None where the rerun cannot be made (no Triton interpreter here, or the kernel raised)."""
    import torch

    from bench import device as dev

    try:
        from triton.runtime import interpreter  # noqa: F401  (the interpreter must exist)
    except ImportError:
        return None
    guarded = tuple(guarded_copy(t) if isinstance(t, torch.Tensor) else t for t in inputs)
    labels = {t.data_ptr(): n for t, n in zip(guarded, names) if isinstance(t, torch.Tensor)}
    watch = _Watch()
    try:
        with watch.patched(), dev.quiet_interpreter("cpu"), dev.poisoned_cpu_allocations():
            out = fn(*guarded)
    except Exception:            # a diagnosis must never hide the failure itself
        return None
    return Rerun(out, watch.launches, list(watch.reads.values()), labels)
