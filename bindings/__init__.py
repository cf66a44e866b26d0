"""Loads the CUDA ops (namespace ``torch.ops.cvt``) built from ``cuda/`` and ``bindings/``.

Two ways to get them, tried in this order by :func:`ops`:

1. the extension that ``python setup.py build_ext --inplace`` (or ``pip install
   --no-build-isolation .``) built, ``bindings/_C*.so``, unless a source file is newer than
   it, it was built for other GPUs than this one (``bindings/_C.arch``), or ``CVT_JIT=1``;
2. a just-in-time build with ``torch.utils.cpp_extension.load`` and ninja, for the GPUs of
   this machine (``TORCH_CUDA_ARCH_LIST`` overrides). It is cached (``build/jit`` in a
   checkout, ``~/.cache/cuda-vs-triton/jit`` in an installed copy, ``CVT_BUILD_DIR``
   overrides) and rebuilt only when a source changes, so a student can edit
   ``cuda/*.cu`` and rerun.

Once loaded, every op has a fake kernel (bindings/_fake.py, for torch.compile) and, where
it has a derivative, a backward (bindings/_autograd.py), so a model can train on them.

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

BINDINGS_DIR = Path(__file__).resolve().parent
CUDA_DIR = config.CUDA_DIR          # cuda/ of the checkout, or the installed copy's

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
    """bindings.MATMUL_OPS, bindings.TENSOR_CORE_OPS, bindings.TF32_OPS, bindings.SKINNY_OPS
    and bindings.MEMORY_OPS: the op lists of cuda/'s headers, read by bindings/config.py on
    first use."""
    if name in ("MATMUL_OPS", "TENSOR_CORE_OPS", "TF32_OPS", "SKINNY_OPS", "MEMORY_OPS"):
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


def _other_gpu(library: str) -> str | None:
    """Why the prebuilt library cannot run on this GPU (built for other architectures,
    per the _C.arch file beside it), or None if it can or nothing says otherwise."""
    import torch

    from ._toolchain import ARCH_FILE, covers

    arch_file = Path(library).with_name(ARCH_FILE)
    if not arch_file.exists() or not torch.cuda.is_available():
        return None
    built_for = arch_file.read_text().strip()
    capability = torch.cuda.get_device_capability()
    if covers(built_for, capability):
        return None
    return (f"{os.path.basename(library)} was built for {built_for}, this GPU is "
            f"sm_{capability[0]}{capability[1]}")


def build_dir() -> str:
    """Where the just-in-time build keeps its files: CVT_BUILD_DIR, else build/jit in a
    checkout, else the user's cache (an installed copy may sit in a read-only folder)."""
    if os.environ.get("CVT_BUILD_DIR"):
        return os.environ["CVT_BUILD_DIR"]
    checkout = BINDINGS_DIR.parent
    if (checkout / "setup.py").exists() and (checkout / "cuda").is_dir():
        return str(checkout / "build" / "jit")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "cuda-vs-triton", "jit")


def _jit_build() -> None:
    from torch.utils import cpp_extension

    from ._toolchain import use_arch_list, use_safe_cxx

    use_safe_cxx()
    archs = use_arch_list()
    # one folder per architecture list: a checkout shared by two GPUs keeps both builds
    directory = os.path.join(build_dir(), "arch-" + archs.replace(";", "_").replace("+", ""))
    os.makedirs(directory, exist_ok=True)
    cpp_extension.load(
        name="cvt_ops",
        sources=sources(),
        extra_include_paths=[str(CUDA_DIR)],
        extra_cflags=cxx_flags(),
        extra_cuda_cflags=NVCC_FLAGS,
        build_directory=directory,
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
            stale = (f"{os.path.basename(library)} is older than a source in cuda/ or "
                     f"bindings/" if _is_stale(library) else _other_gpu(library))
            if stale:
                warnings.warn(f"{stale}; building just in time instead (rerun "
                              f"`python setup.py build_ext --inplace` to refresh it)",
                              stacklevel=2)
                _jit_build()
            else:
                torch.ops.load_library(library)
        else:
            _jit_build()
        from . import _autograd, _fake

        _fake.register()
        _autograd.register()      # backward formulas: bindings/derivatives.py
        _loaded = True
        return getattr(torch.ops, NAMESPACE)
