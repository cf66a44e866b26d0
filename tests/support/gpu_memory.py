"""Large-memory GPU tests (pytest-xdist group "large-memory": tens of GB each) beside other
processes: a test checks the free memory before it allocates, but between its check and its
allocations another worker's process (compute-sanitizer over every kernel, above all) can
take that memory. tests/gpu/conftest.py turns such an out-of-memory error into a skip that
names the memory, where it would otherwise fail as if a kernel were wrong; any other error,
and an out-of-memory error of any other test, still fails."""
from __future__ import annotations

GROUP = "large-memory"


def is_large_memory(item) -> bool:
    """Whether a collected test is in the large-memory group (its xdist_group marker)."""
    return any(m.args[:1] == (GROUP,) for m in item.iter_markers("xdist_group"))


def skip_reason(item, exc: BaseException) -> str | None:
    """Why this failure is a skip (a large-memory test out of GPU memory), or None."""
    import torch

    if not (is_large_memory(item) and isinstance(exc, torch.OutOfMemoryError)):
        return None
    free, total = torch.cuda.mem_get_info()
    first = (str(exc).splitlines() or [""])[0][:160]
    return (f"out of GPU memory, taken by another process after the test's own check "
            f"({free / 2**30:.1f} of {total / 2**30:.0f} GiB free now): {first}")
