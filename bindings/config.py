"""The CUDA ops' names and limits, and the kernels' compile-time parameters, read from
cuda/matmul_config.h and cuda/memory_config.h (never copied).

The two headers are the single source of truth: for the matmul ladder, its versions
(CVT_MATMUL_OPS) and their tiles; for the memory-bound kernels, their ops (CVT_MEMORY_OPS)
and their launch parameters (threads per block, vectors in flight). This module is their one
Python reader: the fake kernels here, the Triton twins (triton_impl/tiles.py) and the
harness's registry and traffic models all take their numbers from it, so a retuned CUDA
kernel moves its twin and its model with it. Pure Python (no torch, no build), so anything
may import it. Values overridden on the compiler command line (-DCVT_...) are not seen here:
this reads the defaults the headers write.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
# The CUDA sources: cuda/ beside bindings/ in a checkout; inside the package in an installed
# copy (pip install puts them in bindings/cuda/: build_backend.py).
CUDA_DIR = _PACKAGE / "cuda" if (_PACKAGE / "cuda").is_dir() else _PACKAGE.parent / "cuda"
CONFIG = CUDA_DIR / "matmul_config.h"
MEMORY_CONFIG = CUDA_DIR / "memory_config.h"
NAMESPACE = "cvt"          # torch.ops.cvt.<op>
MAX_DIM = 2**31 - 1        # the kernels take int sizes
MAX_GRID_X = 2**31 - 1     # CUDA's limit on gridDim.x
MAX_GRID_YZ = 65535        # CUDA's limit on gridDim.y and gridDim.z


def _defines(header: Path) -> dict[str, int]:
    """Every `#define CVT_<NAME> <int>` of `header`, as NAME -> value."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^#define\s+CVT_(\w+)\s+(\d+)\s*$", header.read_text(), re.M)}


def _x_list(header: Path, macro: str) -> tuple[str, ...]:
    """The entries of the X-macro list `#define <macro>(X) X(a) X(b) ...` of `header`, in order
    (its lines joined where they end in a backslash)."""
    text = header.read_text().replace("\\\n", " ")
    found = re.search(rf"^#define\s+{macro}\(X\)(.*)$", text, re.M)
    if found is None:
        raise LookupError(f"{header.name}: no `#define {macro}(X)` list")
    return tuple(re.findall(r"\bX\((\w+)\)", found.group(1)))


@lru_cache(maxsize=None)
def params() -> dict[str, int]:
    """Every `#define CVT_<NAME> <int>` of cuda/matmul_config.h, as NAME -> value."""
    return _defines(CONFIG)


@lru_cache(maxsize=None)
def memory_params() -> dict[str, int]:
    """Every `#define CVT_<NAME> <int>` of cuda/memory_config.h, as NAME -> value
    (ADD_THREADS, ADD_UNROLL, ..., GREY_BY)."""
    return _defines(MEMORY_CONFIG)


@lru_cache(maxsize=None)
def _matmul_ops() -> tuple[str, ...]:
    return tuple(f"matmul_{v}" for v in _x_list(CONFIG, "CVT_MATMUL_OPS"))


@lru_cache(maxsize=None)
def _tensor_core_ops() -> tuple[str, ...]:
    return tuple(f"matmul_{v}" for v in _x_list(CONFIG, "CVT_TENSOR_CORE_OPS"))


@lru_cache(maxsize=None)
def _tf32_ops() -> tuple[str, ...]:
    return tuple(f"matmul_{v}" for v in _x_list(CONFIG, "CVT_TF32_OPS"))


@lru_cache(maxsize=None)
def _skinny_ops() -> tuple[str, ...]:
    return tuple(f"matmul_{v}" for v in _x_list(CONFIG, "CVT_SKINNY_OPS"))


@lru_cache(maxsize=None)
def _memory_ops() -> tuple[str, ...]:
    return _x_list(MEMORY_CONFIG, "CVT_MEMORY_OPS")


def __getattr__(name: str):
    """MATMUL_OPS: the ops of the matmul ladder, in ladder order (CVT_MATMUL_OPS of
    cuda/matmul_config.h: X(v1_naive) is the op matmul_v1_naive), float32.
    TENSOR_CORE_OPS: the tensor-core rungs (CVT_TENSOR_CORE_OPS, the same header), float16
    or bfloat16. TF32_OPS: the tensor-core rungs at tf32 (CVT_TF32_OPS), float32 like the
    ladder. SKINNY_OPS: the paths beside the ladder (CVT_SKINNY_OPS: matmul_skinny, M <= 16 or
    N <= 16, float32, float16 or bfloat16), which a dispatcher calls (no registry record).
    MEMORY_OPS: the memory-bound ops (CVT_MEMORY_OPS of cuda/memory_config.h).
    Each is read from its header on first use, not at import (modules do nothing at import)."""
    if name == "MATMUL_OPS":
        return _matmul_ops()
    if name == "TENSOR_CORE_OPS":
        return _tensor_core_ops()
    if name == "TF32_OPS":
        return _tf32_ops()
    if name == "SKINNY_OPS":
        return _skinny_ops()
    if name == "MEMORY_OPS":
        return _memory_ops()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
