"""Builds and runs kernels of cuda/ on the CPU emulator (bench/cuda_emulator/): the
kernel files rewritten by emulate.py, one runner compiled with g++ and AddressSanitizer,
run at the given (M, N, K, offset) shapes. Used by the FFMA and the tensor-core rungs'
CPU tests."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EMULATOR = ROOT / "bench" / "cuda_emulator"


def gxx_with_barrier() -> str | None:
    """g++ if it has C++20's <barrier> (the emulator's block and warp barriers)."""
    gxx = shutil.which("g++")
    if gxx is None:
        return None
    probe = subprocess.run([gxx, "-std=c++20", "-x", "c++", "-fsyntax-only", "-"],
                           input="#include <barrier>\n", capture_output=True, text=True)
    return gxx if probe.returncode == 0 else None


def build(tmp_path: Path, runner: str, kernels: str, defines: dict | None = None) -> Path:
    """Compiles EMULATOR/`runner` with the rewritten kernels of `kernels` (all_kernels.inc:
    the FFMA ladder; tensor_core_kernels.inc: the tensor-core rungs) and the macros
    `defines` (-DNAME=VALUE, e.g. CVT_MAX_GRID_YZ) into tmp_path/runner; the test fails on a
    build error, and is skipped without a C++20 g++."""
    gxx = gxx_with_barrier()
    if gxx is None:
        pytest.skip("needs g++ with C++20 <barrier>")
    sys.path.insert(0, str(EMULATOR))
    try:
        import emulate
    finally:
        sys.path.pop(0)
    out = emulate.main(tmp_path / "kernels")
    build = subprocess.run(
        [gxx, "-std=c++20", "-O1", "-g", "-fsanitize=address,undefined", "-pthread",
         f"-I{out}", f"-I{EMULATOR}", f"-I{ROOT / 'cuda'}", f'-DEMULATED_KERNELS="{kernels}"',
         *(f"-D{name}={value}" for name, value in (defines or {}).items()),
         str(EMULATOR / runner), "-o", str(tmp_path / "runner")],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    return tmp_path / "runner"


def run_built(runner: Path, shapes, *options: str) -> str:
    """Runs a runner made by build() at `shapes` ((M, N, K, offset) tuples), after its
    `options` (runner.cpp: --only=VERSION), and returns its output; the test fails on a wrong
    element."""
    args = [str(x) for shape in shapes for x in shape]
    done = subprocess.run([str(runner), *options, *args], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


def run(tmp_path: Path, runner: str, kernels: str, shapes) -> str:
    """build() and run_built() at `shapes`: the output of every version at every shape."""
    return run_built(build(tmp_path, runner, kernels), shapes)
