"""Fixtures shared by the GPU tier (its markers, skips and time limits: tests/conftest.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cmake_build() -> Path:
    """The CMake build of the standalone drivers (CMakeLists.txt), made once per test run:
    every pytest-xdist worker asks for it, the first builds under a file lock, the others
    wait for it and find the run's stamp (tests/support/build_once.py: they never rebuild
    a driver another worker may be running)."""
    from tests.support.build_once import build_once

    if shutil.which("cmake") is None:
        pytest.skip("cmake not on PATH")
    build = ROOT / "build" / "pytest-cmake"

    def cmake():
        for cmd in (["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
                    ["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)]):
            out = subprocess.run(cmd, capture_output=True, text=True)
            assert out.returncode == 0, out.stdout + out.stderr

    build_once(build, cmake)
    return build


@pytest.fixture(scope="session")
def driver(cmake_build) -> Path:
    """The matmul driver (cuda/driver/matmul_driver.cu): every rung, checked and timed."""
    return cmake_build / "matmul_driver"
