"""Large-memory GPU tests (pytest-xdist group "large-memory": tens of GB each) beside other
processes: a test checks the free memory before it allocates, but between its check and its
allocations another worker's process can take that memory.

Only the allocation of a test's inputs may turn out of memory into a skip: a test allocates
them inside `inputs_or_skip(gib)`, which skips when less than `gib` GiB is free (the inputs
and what the kernel call needs beside them: its output, any staging copy) and turns an
out-of-memory error raised inside it into a skip that names the memory. The kernel call
stays outside: an out-of-memory error there fails, as any other error of a kernel does
(a kernel that allocates more than it should is a bug). tests/cpu/test_gpu_memory_skips.py
proves the rule with stand-ins."""
from __future__ import annotations

import contextlib

import pytest

GROUP = "large-memory"


def _free_gib() -> tuple[float, float]:
    import torch

    free, total = torch.cuda.mem_get_info()
    return free / 2**30, total / 2**30


def needs(gib: float) -> None:
    """Skips the test unless `gib` GiB of GPU memory are free."""
    free, _total = _free_gib()
    if free < gib:
        pytest.skip(f"needs {gib:.0f} GiB of free GPU memory, {free:.1f} GiB free")


@contextlib.contextmanager
def inputs_or_skip(gib: float):
    """The block that allocates a test's inputs: skipped unless `gib` GiB are free, and
    skipped, naming the memory, if the allocations run out of memory all the same (another
    process took it after the check). Any other error, and any error after the block (the
    kernel call), stands."""
    import torch

    needs(gib)
    try:
        yield
    except torch.OutOfMemoryError as exc:
        free, total = _free_gib()
        first = (str(exc).splitlines() or [""])[0][:160]
        pytest.skip(f"out of GPU memory while allocating the inputs, taken by another process "
                    f"after the test's own check ({free:.1f} of {total:.0f} GiB free now): "
                    f"{first}")
