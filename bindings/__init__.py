"""Loads the CUDA ops (namespace ``torch.ops.cvt``) built from ``cuda/`` and ``bindings/``.

Two ways to get them, tried in this order by :func:`ops`:

1. the extension that ``python setup.py build_ext --inplace`` (or ``pip install``) built,
   ``bindings/_C*.so``, unless a source file is newer than it or ``CVT_JIT=1`` is set;
2. a just-in-time build with ``torch.utils.cpp_extension.load`` and ninja. It is cached
   and rebuilt only when a source changes, so a student can edit ``cuda/*.cu`` and rerun.

Without a CUDA build of PyTorch, :func:`ops` raises :class:`CudaOpsUnavailable` with the
reason. Importing this package does nothing; the first call to :func:`ops` loads.
"""
from __future__ import annotations

import glob
import os
import threading
import warnings
from pathlib import Path

from bindings import config
from bindings.config import NAMESPACE

ROOT = Path(__file__).resolve().parent.parent
CUDA_DIR = ROOT / "cuda"
BINDINGS_DIR = ROOT / "bindings"

NVCC_FLAGS = ["-O3", "-std=c++17", "-lineinfo", "-Xptxas=-v"]


def cxx_flags() -> list[str]:
    """Host compiler flags for bindings/*.cpp.

    The C++ ABI flag is passed explicitly: a host compiler whose default std::string ABI
    differs from the one torch was built with compiles fine and runs fine until the first
    TORCH_CHECK builds an error message, which then crashes the process instead of raising.
    """
    import torch

    return ["-O3", "-std=c++17", f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"]

_lock = threading.Lock()
_loaded = False


def __getattr__(name: str):
    """bindings.MATMUL_OPS and bindings.MEMORY_OPS: the op lists of cuda/'s headers, read by
    bindings/config.py on first use."""
    if name in ("MATMUL_OPS", "MEMORY_OPS"):
        return getattr(config, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class CudaOpsUnavailable(RuntimeError):
    """The CUDA ops cannot be loaded here (no CUDA build of torch, or no GPU)."""


def sources() -> list[str]:
    """Every file compiled into the extension: kernels (pure CUDA) plus the torch bindings."""
    cu = sorted(glob.glob(str(CUDA_DIR / "*.cu")))
    cpp = sorted(glob.glob(str(BINDINGS_DIR / "*.cpp")))
    return cu + cpp


def _watched_files() -> list[str]:
    headers = glob.glob(str(CUDA_DIR / "*.h")) + glob.glob(str(CUDA_DIR / "*.cuh"))
    return sources() + headers


def _prebuilt() -> str | None:
    found = sorted(glob.glob(str(BINDINGS_DIR / "_C*.so")))
    return found[0] if found else None


def _is_stale(library: str) -> bool:
    built = os.path.getmtime(library)
    return any(os.path.getmtime(f) > built for f in _watched_files())


def _jit_build() -> None:
    from torch.utils import cpp_extension

    from ._toolchain import use_safe_cxx

    use_safe_cxx()
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    build_dir = os.environ.get("CVT_BUILD_DIR", str(ROOT / "build" / "jit"))
    os.makedirs(build_dir, exist_ok=True)
    cpp_extension.load(
        name="cvt_ops",
        sources=sources(),
        extra_include_paths=[str(CUDA_DIR)],
        extra_cflags=cxx_flags(),
        extra_cuda_cflags=NVCC_FLAGS,
        build_directory=build_dir,
        is_python_module=False,
        verbose=os.environ.get("CVT_VERBOSE_BUILD") == "1",
    )


def ops():
    """Returns ``torch.ops.cvt`` after making sure the extension is loaded (once per process)."""
    global _loaded
    import torch

    with _lock:
        if _loaded:
            return getattr(torch.ops, NAMESPACE)
        if torch.version.cuda is None:
            raise CudaOpsUnavailable(
                f"cuda-vs-triton: the CUDA ops need a CUDA build of PyTorch; this one is "
                f"{torch.__version__} (CPU only). Triton kernels still run on the CPU through "
                f"the interpreter (TRITON_INTERPRET=1)."
            )
        library = _prebuilt()
        if library and os.environ.get("CVT_JIT") != "1":
            if _is_stale(library):
                warnings.warn(
                    f"{os.path.basename(library)} is older than a source in cuda/ or bindings/; "
                    f"building just in time instead (rerun setup.py to refresh it)",
                    stacklevel=2,
                )
                _jit_build()
            else:
                torch.ops.load_library(library)
        else:
            _jit_build()
        from . import _fake

        _fake.register()
        _loaded = True
        return getattr(torch.ops, NAMESPACE)
