"""Traffic counted under the Triton interpreter: what a Triton kernel's loads and stores move,
launch by launch, on a machine without a GPU.

On a GPU, `bench profile` reads what the hardware moved from Nsight Compute's counters. On a
CPU there are no counters, but the Triton interpreter (TRITON_INTERPRET=1) runs every
`tl.load` and `tl.store` of a kernel as one call of its builder with the whole block of
pointers and its mask (InterpreterBuilder.create_masked_load and create_masked_store; block
pointers and tensor descriptors come through them too). `counting()` wraps those calls and
adds up, per launch:

    loads, stores     elements of lanes whose mask is true (a masked-off lane asks for
                      nothing, as on the GPU)
    load_bytes, ...   the same, times the element's size
    atomics           elements of tl.atomic_* calls (not in loads or stores)

It departs from the hardware where the hardware does more than the program asks: no cache (a
value loaded twice is counted twice, so the count is what the threads request, the models'
"global loads", not what DRAM or L2 moves: `bench profile` measures those), no 32-byte sectors
or 128-byte lines (a strided load counts its elements, not the sectors it touches), and no
prefetch or TMA boxes beyond the mask. CUDA kernels are not counted here: the CUDA emulator
(bench/cuda_emulator) counts a lab's CUDA kernels through their pointer parameters
(counted.cuh, bench/grading/cuda_lab.py), element by element in the same way.

    from bench import counted
    with counted.counting() as c:
        kernel(a, b)
    c.loads, c.store_bytes, c.launches[0].kernel

Nothing is patched outside the `with` block, which restores the interpreter on exit.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field


@dataclass
class Launch:
    """One Triton launch's counts (see the module doc)."""
    kernel: str
    loads: int = 0
    stores: int = 0
    load_bytes: int = 0
    store_bytes: int = 0
    atomics: int = 0


@dataclass
class Counted:
    """Every launch inside a `counting()` block, in order, and their totals."""
    launches: list[Launch] = field(default_factory=list)

    def _total(self, name: str) -> int:
        return sum(getattr(x, name) for x in self.launches)

    @property
    def loads(self) -> int:
        return self._total("loads")

    @property
    def stores(self) -> int:
        return self._total("stores")

    @property
    def load_bytes(self) -> int:
        return self._total("load_bytes")

    @property
    def store_bytes(self) -> int:
        return self._total("store_bytes")

    @property
    def atomics(self) -> int:
        return self._total("atomics")


@contextlib.contextmanager
def counting():
    """Counts the loads and stores of every Triton launch in the block (module doc). Needs
    the interpreter: on a GPU, where kernels are compiled, nothing would pass through it."""
    from triton_impl import _common

    if not _common.interpreting():
        raise RuntimeError("counting traffic needs the Triton interpreter (TRITON_INTERPRET=1, "
                           "as on a machine without a GPU); on a GPU, `python -m bench profile` "
                           "reads the hardware's counters")
    import numpy as np
    from triton.runtime import interpreter as interp

    executor, builder = interp.GridExecutor, interp.InterpreterBuilder
    call = executor.__call__
    load, store = builder.create_masked_load, builder.create_masked_store
    rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas
    counts = Counted()

    def current() -> Launch:
        if not counts.launches:        # a builder call outside a launch: not expected
            counts.launches.append(Launch("(outside a launch)"))
        return counts.launches[-1]

    def lanes(ptrs, mask) -> tuple[int, int]:
        """(elements of true lanes, bytes per element) of a block of pointers."""
        size = ptrs.get_element_ty().primitive_bitwidth // 8
        if mask is None:
            return int(np.size(ptrs.data)), size
        return int(np.count_nonzero(np.broadcast_to(mask.data, np.shape(ptrs.data)))), size

    def counted_call(self, *args, **kwargs):
        counts.launches.append(Launch(getattr(self.fn, "__name__", "kernel")))
        return call(self, *args, **kwargs)

    def counted_load(self, ptrs, mask, other, *rest, **kw):
        n, size = lanes(ptrs, mask)
        c = current()
        c.loads += n
        c.load_bytes += n * size
        return load(self, ptrs, mask, other, *rest, **kw)

    def counted_store(self, ptrs, value, mask, *rest, **kw):
        n, size = lanes(ptrs, mask)
        c = current()
        c.stores += n
        c.store_bytes += n * size
        return store(self, ptrs, value, mask, *rest, **kw)

    def counted_rmw(self, op, ptr, val, mask, *rest, **kw):
        current().atomics += lanes(ptr, mask)[0]
        return rmw(self, op, ptr, val, mask, *rest, **kw)

    def counted_cas(self, ptr, cmp, val, *rest, **kw):
        current().atomics += lanes(ptr, None)[0]
        return cas(self, ptr, cmp, val, *rest, **kw)

    executor.__call__ = counted_call
    builder.create_masked_load, builder.create_masked_store = counted_load, counted_store
    builder.create_atomic_rmw, builder.create_atomic_cas = counted_rmw, counted_cas
    try:
        yield counts
    finally:
        executor.__call__ = call
        builder.create_masked_load, builder.create_masked_store = load, store
        builder.create_atomic_rmw, builder.create_atomic_cas = rmw, cas


# `bench model --counted` counts a row only up to this many model loads or FMAs (the
# interpreter runs a few tens of millions of element loads a second: a 256^3 matmul in
# seconds, 4096^3 not in an hour)
MAX_LOADS = 1 << 24
MAX_FMA = 1 << 28


def add_to_rows(rows) -> list[str]:
    """`bench model --counted`: each model row of a Triton kernel gets the loads and stores
    counted in one call at its shape and precision (counted_loads, counted_stores and their
    bytes), in place. Returns a note per row left uncounted: not a Triton kernel, too large
    for the interpreter, or the call raised."""
    from bench import problems, registry

    notes = []
    for r in rows:
        kernel = registry.by_name().get(r["kernel"])
        where = f"{r['kernel']} {r['shape']} {r['precision']}"
        if kernel is None or kernel.backend != "triton" or not kernel.runs_on_cpu:
            notes.append(f"{where}: not counted (only Triton kernels run under the interpreter)")
            continue
        if r["global_loads"] > MAX_LOADS or r.get("fma", 0) > MAX_FMA:
            notes.append(f"{where}: not counted (too large for the interpreter: give smaller "
                         f"--shapes)")
            continue
        problem = problems.get(kernel.op)
        try:
            c = count_kernel(kernel, problem, problem.parse_shape(r["shape"]), r["precision"])
        except Exception as exc:       # one kernel's failure is said, the others counted
            notes.append(f"{where}: not counted ({type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:120]})")
            continue
        r.update(counted_loads=c.loads, counted_stores=c.stores,
                 counted_load_bytes=c.load_bytes, counted_store_bytes=c.store_bytes,
                 counted_launches=len(c.launches))
    return notes


def count_kernel(kernel, problem, shape, precision: str, seed: int = 0) -> Counted:
    """One call of a registry kernel at a shape, counted: its inputs drawn as `bench check`
    draws them, one call first outside the count (autotuning and first-call work)."""
    fn = kernel.runner(precision)
    inputs = problem.inputs(shape, precision, seed=seed, device="cpu")
    fn(*inputs)
    with counting() as c:
        fn(*inputs)
    return c
