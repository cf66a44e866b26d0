"""Where kernels run: the GPU if there is one, else the CPU (Triton through its interpreter)."""
from __future__ import annotations

import os


def has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def setup() -> str:
    """Returns "cuda" or "cpu". Without a GPU, switches Triton to its interpreter; this must
    happen before any Triton kernel is defined, so call it before importing triton_impl."""
    if has_gpu():
        return "cuda"
    os.environ.setdefault("TRITON_INTERPRET", "1")
    return "cpu"


def can_run(kernel, device: str) -> tuple[bool, str]:
    """Whether `kernel` can run on `device`, and why not."""
    if device == "cuda":
        return True, ""
    if kernel.runs_on_cpu:
        return True, ""
    return False, "needs a GPU"


def poison_output_memory(nbytes: int, device: str) -> None:
    """Fills the allocator's next block of this size with NaN, so that an output the kernel
    allocates there starts as NaN and an element it forgets to write fails the check.
    (PyTorch's caching allocator hands a freed block of the same size straight back.)"""
    if device != "cuda" or nbytes == 0:
        return
    import torch

    block = torch.empty(nbytes, dtype=torch.uint8, device=device)
    block.fill_(0xFF)  # 0xFFFFFFFF / 0xFFFF are NaN in fp32, fp16 and bf16
    del block
