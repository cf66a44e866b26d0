"""CPU tier: the CUDA sources compile for sm_90, without register spills, and the CMake
project (kernels + standalone driver) configures and builds. No GPU needed: nvcc and
CMake run on the CPU."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

# the same on every machine: fast tier without a GPU, slow tier beside one (tests/conftest.py)
pytestmark = pytest.mark.same_everywhere

ROOT = Path(__file__).resolve().parents[2]
KERNEL_FILES = sorted((ROOT / "cuda").glob("*.cu"))
NVCC = shutil.which("nvcc")

needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")


def ptxas_report(cu: Path, tmp_path: Path) -> str:
    """Compiles one kernel file for sm_90 exactly as the extension does and returns ptxas -v."""
    out = subprocess.run(
        [NVCC, "-arch=sm_90", "-O3", "-std=c++17", "-Xptxas=-v", "-c", str(cu),
         "-o", str(tmp_path / (cu.stem + ".o"))],
        capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, f"nvcc failed on {cu.name}:\n{out.stderr}"
    return out.stderr


@needs_nvcc
@pytest.mark.parametrize("cu", KERNEL_FILES, ids=lambda p: p.name)
def test_compiles_for_sm90_without_spills(cu, tmp_path):
    report = ptxas_report(cu, tmp_path)
    functions = re.findall(r"Compiling entry function '(\w+)'", report)
    assert functions, f"{cu.name}: ptxas compiled no kernel:\n{report}"
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
    assert spills, report
    for stores, loads in spills:
        assert (int(stores), int(loads)) == (0, 0), f"{cu.name} spills registers:\n{report}"
    stack = [int(s) for s in re.findall(r"(\d+) bytes stack frame", report)]
    assert max(stack) == 0, f"{cu.name}: a register array went to local memory:\n{report}"


@needs_nvcc
def test_kernel_names_are_readable_in_profiles(tmp_path):
    """ncu and traces show the kernel's name: each file defines matmul_<version>_kernel."""
    for cu in (ROOT / "cuda").glob("matmul_*.cu"):
        assert f"{cu.stem}_kernel" in cu.read_text(), f"{cu.name} should define {cu.stem}_kernel"


@needs_nvcc
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not on PATH")
@pytest.mark.slow   # 50 s on a 2-core machine; every kernel file's own compile is fast-tier
def test_cmake_builds_kernels_and_driver(tmp_path):
    build = tmp_path / "build"
    cfg = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
                         capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    b = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    assert (build / "matmul_driver").exists() and (build / "tensor_core_driver").exists()


@needs_nvcc
def test_the_gpu_tiers_memory_driver_links(tmp_path):
    """The command the GPU tier builds the memory driver with (tests/support/drivers.py)
    compiles and links here: every kernel file the driver calls is in its list (the CMake
    target above links them all through cvt_kernels, so it cannot tell)."""
    from tests.support.drivers import memory_driver_command

    out = tmp_path / "memory_driver"
    r = subprocess.run(memory_driver_command(shutil.which("nvcc"), out), capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert out.exists()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not on PATH")
def test_bindings_compile_against_torch_headers(tmp_path):
    """bindings/*.cpp compile (syntax and types) against this torch's headers, so a broken
    binding fails here rather than on the GPU machine. A CPU-only torch lacks one generated
    CUDA header of c10 (its CMake writes it), so an empty stand-in is provided."""
    import sysconfig

    from torch.utils import cpp_extension

    import bindings

    from bindings._toolchain import cuda_home as find_cuda_home

    cuda_home = find_cuda_home()
    if cuda_home is None:
        # nvcc is on PATH (CI has it): then the toolkit must be found, not skipped
        assert NVCC is None, f"nvcc at {NVCC}, but no CUDA toolkit with cuda_runtime.h found"
        pytest.skip("no CUDA toolkit on this machine")
    stub = tmp_path / "c10" / "cuda" / "impl"
    stub.mkdir(parents=True)
    (stub / "cuda_cmake_macros.h").write_text("#pragma once\n")
    includes = [f"-I{p}" for p in cpp_extension.include_paths()]
    includes += [f"-I{tmp_path}", f"-I{cuda_home}/include", f"-I{sysconfig.get_paths()['include']}"]
    for cpp in sorted((ROOT / "bindings").glob("*.cpp")):
        out = subprocess.run(["g++", *bindings.cxx_flags(), "-fsyntax-only", *includes, str(cpp)],
                             capture_output=True, text=True)
        assert out.returncode == 0, f"{cpp.name}:\n{out.stderr[-4000:]}"
