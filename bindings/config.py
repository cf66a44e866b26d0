"""The CUDA ops' names and limits, and the kernels' compile-time parameters, read from
cuda/matmul_config.h (never copied).

The header is the single source of truth for the ladder's tiles. This module is its one
reader: the fake kernels here, the Triton twins (triton_impl/tiles.py) and the harness's
traffic models all take their numbers from it, so a retuned CUDA kernel moves its twin and
its model with it. Pure Python (no torch, no build), so anything may import it.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

CONFIG = Path(__file__).resolve().parent.parent / "cuda" / "matmul_config.h"
NAMESPACE = "cvt"          # torch.ops.cvt.<op>

# The ops of the matmul ladder, in ladder order. tests/test_layout.py checks that this
# list, the schemas in bindings/*.cpp, the kernel files in cuda/ and the registry agree.
MATMUL_OPS = (
    "matmul_v1_naive",
    "matmul_v1_coalesced",
    "matmul_v1_5_thread_tiling",
    "matmul_v2_register_tiling",
    "matmul_v3_smem_tiling",
)
MAX_DIM = 2**31 - 1        # the kernels take int sizes
MAX_GRID_Y = 65535         # CUDA's limit on gridDim.y


@lru_cache(maxsize=None)
def params() -> dict[str, int]:
    """Every `#define CVT_<NAME> <int>` of cuda/matmul_config.h, as NAME -> value."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^#define\s+CVT_(\w+)\s+(\d+)\s*$", CONFIG.read_text(), re.M)}
