"""How the GPU tier builds the standalone memory driver (cuda/driver/memory_driver.cu) with
nvcc alone, shared with the CPU tier, which links the same command without a GPU: a kernel
file the driver calls but the list leaves out fails on the CPU, not first on the GPU."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The kernel files the driver links: one per op of CVT_MEMORY_OPS (cuda/memory_config.h).
MEMORY_KERNEL_FILES = ("vector_add", "copy", "relu_dropout", "softmax_row_sram",
                       "softmax_online", "softmax_split", "rgb_to_grey")


def memory_driver_command(nvcc: str, out: Path, arch: str = "sm_90") -> list[str]:
    sources = [ROOT / "cuda" / "driver" / "memory_driver.cu"] + [
        ROOT / "cuda" / f"{f}.cu" for f in MEMORY_KERNEL_FILES]
    return [nvcc, f"-arch={arch}", "-O3", "-std=c++17", "-lineinfo", f"-I{ROOT / 'cuda'}",
            *map(str, sources), "-o", str(out)]
