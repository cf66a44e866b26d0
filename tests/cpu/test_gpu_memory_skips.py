"""CPU tier: the GPU tier's hook (tests/gpu/conftest.py, tests/support/gpu_memory.py) that
turns a large-memory test's out-of-memory error into a skip naming the memory, run by pytest
itself on three stand-in tests: a large-memory test out of memory is skipped, an ordinary
test out of memory and a large-memory test with another error still fail."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = "from tests.gpu.conftest import pytest_runtest_call  # noqa: F401\n"
TESTS = '''
import pytest
import torch

@pytest.fixture(autouse=True)
def free_memory(monkeypatch):
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (3 * 2**30, 80 * 2**30))

@pytest.mark.xdist_group("large-memory")
def test_starved():
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")

def test_ordinary_out_of_memory():
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")

@pytest.mark.xdist_group("large-memory")
def test_wrong_answer():
    assert 1 == 2
'''


def test_only_a_large_memory_test_out_of_memory_is_skipped(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_stand_ins.py").write_text(TESTS)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                        "no:xdist", "-rfs", "-q", str(tmp_path)], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=300)
    out = r.stdout + r.stderr
    assert "2 failed, 1 skipped" in out, out[-3000:]
    assert "SKIPPED" in out and "3.0 of 80 GiB free now" in out and "8.00 GiB" in out, out[-3000:]
    assert "FAILED test_stand_ins.py::test_ordinary_out_of_memory" in out, out[-3000:]
    assert "FAILED test_stand_ins.py::test_wrong_answer" in out, out[-3000:]
