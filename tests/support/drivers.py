"""How the GPU tier builds the standalone memory driver (cuda/driver/memory_driver.cu) with
nvcc alone, shared with the CPU tier, which links the same command without a GPU: a kernel
file the driver calls but the command leaves out fails on the CPU, not first on the GPU."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

def memory_driver_command(nvcc: str, out: Path, arch: str = "sm_90") -> list[str]:
    """The driver and one kernel file per op of CVT_MEMORY_OPS (cuda/memory_config.h: each
    op NAME is cuda/NAME.cu), so a new op is linked without a list to keep."""
    from bindings import config

    sources = [ROOT / "cuda" / "driver" / "memory_driver.cu"] + [
        ROOT / "cuda" / f"{op}.cu" for op in config.MEMORY_OPS]
    return [nvcc, f"-arch={arch}", "-O3", "-std=c++17", "-lineinfo", f"-I{ROOT / 'cuda'}",
            *map(str, sources), "-o", str(out)]
