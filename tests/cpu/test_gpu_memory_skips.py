"""CPU tier: the rule of tests/support/gpu_memory.py, run by pytest itself on stand-in tests
under the GPU tier's own conftest (tests/gpu/conftest.py), with torch.cuda.mem_get_info
faked: out of memory while a test allocates its inputs (inside inputs_or_skip) is a skip
naming the memory, as is too little free memory before it; out of memory in the kernel call
(after the block) fails, and so does any other error inside the block."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = "from tests.gpu.conftest import *  # noqa: F401,F403\n"
TESTS = '''
import pytest
import torch

from tests.support.gpu_memory import GROUP, inputs_or_skip

pytestmark = pytest.mark.xdist_group(GROUP)
OOM = "CUDA out of memory. Tried to allocate 8.00 GiB"


@pytest.fixture(autouse=True)
def free_memory(monkeypatch):
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (3 * 2**30, 80 * 2**30))


def test_inputs_out_of_memory():
    with inputs_or_skip(2):
        raise torch.OutOfMemoryError(OOM)


def test_too_little_free_memory():
    with inputs_or_skip(12):
        raise AssertionError("the block must not run")


def test_kernel_out_of_memory():
    with inputs_or_skip(2):
        pass
    raise torch.OutOfMemoryError(OOM)


def test_inputs_wrong():
    with inputs_or_skip(2):
        assert 1 == 2
'''


def test_only_the_inputs_may_skip_out_of_memory(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_stand_ins.py").write_text(TESTS)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                        "no:xdist", "-rfs", "-q", str(tmp_path)], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=300)
    out = r.stdout + r.stderr
    assert "2 failed, 2 skipped" in out, out[-3000:]
    assert "while allocating the inputs" in out and "3.0 of 80 GiB free now" in out, out[-3000:]
    assert "8.00 GiB" in out and "needs 12 GiB of free GPU memory, 3.0 GiB free" in out, out[-3000:]
    assert "FAILED test_stand_ins.py::test_kernel_out_of_memory" in out, out[-3000:]
    assert "FAILED test_stand_ins.py::test_inputs_wrong" in out, out[-3000:]
