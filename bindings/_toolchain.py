"""Choosing the host C++ compiler for the torch bindings.

The extension must use the same C++ runtime (libstdc++.so) as torch itself. A compiler
configured to link libstdc++ *statically* (some toolchains shipped for portable builds
are) gives the extension a private copy of the standard library. Everything works until
a TORCH_CHECK fails: formatting its message with the private copy of std::ostream, next
to the process's shared copy, crashes the process instead of raising (seen on the H100
machine, whose $CXX is such a compiler). So before building we ask each candidate
compiler to build a tiny shared library and keep the first one whose result depends on
the shared libstdc++.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

_PROBE = """
#include <sstream>
#include <string>
int cvt_probe(long x) { std::ostringstream s; s << x; return static_cast<int>(s.str().size()); }
"""


def _needed_libraries(library: Path) -> str:
    readelf = shutil.which("readelf")
    if readelf:
        return subprocess.run([readelf, "-d", str(library)], capture_output=True, text=True).stdout
    return subprocess.run(["ldd", str(library)], capture_output=True, text=True).stdout


@lru_cache(maxsize=None)
def shares_cxx_runtime(cxx: str) -> bool:
    """True if shared libraries built by `cxx` load libstdc++ dynamically."""
    with tempfile.TemporaryDirectory() as tmp:
        src, lib = Path(tmp, "probe.cpp"), Path(tmp, "libprobe.so")
        src.write_text(_PROBE)
        built = subprocess.run([cxx, "-shared", "-fPIC", "-O1", str(src), "-o", str(lib)],
                               capture_output=True, text=True)
        return built.returncode == 0 and "libstdc++" in _needed_libraries(lib)


def choose_cxx() -> tuple[str | None, str]:
    """The compiler to build with, and a one-line note when it is not $CXX (else "")."""
    configured = os.environ.get("CXX")
    candidates = [c for c in (configured, "c++", "g++") if c and shutil.which(c)]
    for cxx in dict.fromkeys(candidates):
        if shares_cxx_runtime(cxx):
            if configured and cxx != configured:
                return cxx, (f"cuda-vs-triton: $CXX={configured} links libstdc++ statically, which "
                             f"crashes torch's error messages; building the bindings with {cxx}")
            return cxx, ""
    return configured, ("cuda-vs-triton: warning: no compiler found that links libstdc++ "
                        "dynamically; TORCH_CHECK errors may crash instead of raising")


def use_safe_cxx() -> None:
    """Points $CXX at a compiler that shares torch's C++ runtime, printing why if it changes."""
    cxx, note = choose_cxx()
    if note:
        print(note)
    if cxx:
        os.environ["CXX"] = cxx


@lru_cache(maxsize=None)
def cuda_home() -> str | None:
    """The CUDA toolkit's root, found the way torch does (CUDA_HOME, CUDA_PATH, torch's own
    detection) and then through the nvcc on PATH, which may be a wrapper script that execs
    the real one (as on the machines we build on): `nvcc --dryrun` prints the real
    toolkit's root as TOP. None if there is no toolkit with cuda_runtime.h."""
    def has_headers(root) -> bool:
        return bool(root) and (Path(root) / "include" / "cuda_runtime.h").exists()

    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    try:
        from torch.utils import cpp_extension

        candidates.append(cpp_extension.CUDA_HOME)
    except ImportError:
        pass
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(nvcc).resolve().parent.parent))
        with tempfile.TemporaryDirectory() as tmp:
            probe = Path(tmp, "probe.cu")
            probe.write_text("")
            dry = subprocess.run([nvcc, "--dryrun", "-c", str(probe)], capture_output=True,
                                 text=True)
        for line in (dry.stdout + dry.stderr).splitlines():
            if line.startswith("#$ TOP="):
                candidates.append(str(Path(line.split("=", 1)[1].strip()).resolve()))
    return next((str(Path(c)) for c in candidates if has_headers(c)), None)


# ---------------------------------------------------------------------------------------
# Which GPU architectures to build for
# ---------------------------------------------------------------------------------------

# Without a visible GPU (a build box, a container build), the extension is built for the
# architectures the suite supports from its floor up: Ampere (A100 8.0; RTX 30xx, A10 8.6),
# Ada (L4, RTX 40xx 8.9) and Hopper (H100, H200 9.0), plus PTX of 9.0, which the driver
# compiles for anything newer. Hopper gets two images: 9.0a, with the instructions of the
# tensor-core rungs t2 and t3 (wgmma, TMA), which the driver picks on a 9.0 GPU (measured
# on the H100), and plain 9.0 for the PTX. Every other kernel needs nothing past sm_80.
DEFAULT_ARCH_LIST = "8.0;8.6;8.9;9.0a;9.0+PTX"
ARCH_FLOOR = (8, 0)
ARCH_FILE = "_C.arch"        # beside bindings/_C*.so: the list it was built for


def local_arch_list() -> str | None:
    """The compute capabilities of the visible GPUs ("8.0;9.0"), or None without one."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        caps = {torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())}
    except Exception:       # a CPU-only torch, or no driver
        return None
    # 9.0 -> 9.0a: the arch-specific image, which has t2's and t3's instructions and runs on
    # 9.0 only, the GPU it is built for here
    return ";".join(f"{major}.{minor}" + ("a" if (major, minor) == (9, 0) else "")
                    for major, minor in sorted(caps))


def arch_list() -> tuple[str, str]:
    """The architectures to build for and why: TORCH_CUDA_ARCH_LIST when set, else the
    GPUs of this machine, else DEFAULT_ARCH_LIST."""
    explicit = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if explicit:
        return explicit, "TORCH_CUDA_ARCH_LIST"
    local = local_arch_list()
    if local:
        return local, "the GPUs of this machine"
    return DEFAULT_ARCH_LIST, "no GPU visible: the default list"


def use_arch_list() -> str:
    """Sets TORCH_CUDA_ARCH_LIST for torch's build (see arch_list) and returns it."""
    archs, _why = arch_list()
    os.environ["TORCH_CUDA_ARCH_LIST"] = archs
    return archs


def covers(built_for: str, capability: tuple[int, int]) -> bool:
    """True if an extension built for `built_for` ("8.0;9.0+PTX") runs on a GPU of
    `capability`. Machine code for X.y runs on X.z with z >= y (8.0 code runs on an 8.6
    GPU), except arch-specific code ("9.0a"), which runs on 9.0 only; PTX of any older
    version runs anywhere newer (the driver compiles it)."""
    have = tuple(capability)
    for entry in re.split(r"[;\s]+", built_for.strip()):
        ptx = entry.endswith("+PTX")
        version = entry.removesuffix("+PTX")
        specific = version.endswith("a")
        try:
            major, minor = (int(x) for x in version.rstrip("a").split("."))
        except ValueError:
            continue
        if specific and (major, minor) == have:
            return True
        if not specific and major == have[0] and minor <= have[1]:
            return True
        if ptx and (major, minor) <= have:
            return True
    return False
