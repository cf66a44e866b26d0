"""GPU tier, slow: compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over every
CUDA and Triton kernel of the registry, through the torch ops and the Triton wrappers, at odd
shapes and with misaligned inputs (tests/support/sanitize_target.py).

This is the one place the suite sanitizes its kernels. The standalone drivers
(cuda/driver/matmul_driver.cu, tensor_core_driver.cu, memory_driver.cu) launch the same
kernels through the same launchers, and every path they take is reached here too: the
scalar paths of the FFMA and tensor-core rungs by odd K and N and by the misaligned inputs,
the memory-bound ops' scalar paths by odd lengths and misaligned inputs, the TMA paths by
the 16-byte shapes, the split softmax's other launch forms by sanitize_target's
_split_forms. So the drivers are not sanitized again; the slow tier checks their answers
(test_driver_checks_every_version in tests/gpu/test_matmul_cuda.py, the standalone driver
tests of tests/gpu/test_tensor_core_rungs.py, test_driver_checks_every_kernel in
tests/gpu/test_memory_ops.py).

A report is traced to its kernel by the marker line the target prints before each launch;
the test prints a table kernel x tool -> errors.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.profile import find_cuda_tool
from tests.support.sanitize_target import RACECHECK_TRITON_MATMUL, errors_by_kernel

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")


# The kernels in two halves, one sanitizer process each, so that pytest-xdist runs them side
# by side: with every kernel in one process, memcheck and racecheck on two workers did not
# both finish within 6 minutes on the H100. The target launches each autotuning candidate
# once, untimed (sanitize_target.untimed_tuning): with the candidates timed, racecheck over
# the Triton half did not finish within 7 minutes while the other five passed; untimed, it
# still did not finish within 8.5 minutes, so it runs smaller matmul shapes
# (sanitize_target.RACECHECK_TRITON_MATMUL).
GROUPS = ("cuda_*", "triton_*")


@pytest.mark.slow
@pytest.mark.timeout(1000)       # beyond the subprocess's own 900 s, which reports the log
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("tool", TOOLS)
def test_compute_sanitizer_over_every_kernel(tool, group):
    sanitizer = find_cuda_tool("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer not found")
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_INTERPRET="0")
    cmd = [sanitizer, "--tool", tool, "--error-exitcode", "3", "--target-processes", "all",
           "--print-limit", "50", sys.executable, "-m", "tests.support.sanitize_target",
           "--kernels", group]
    if tool == "initcheck":   # TMA stores are invisible to initcheck: see bench.device.poison_free_memory
        cmd.append("--poison-outputs")
    if tool == "racecheck" and group == "triton_*":   # its cost: sanitize_target's comment
        cmd += ["--matmul-shapes", RACECHECK_TRITON_MATMUL]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    log = proc.stdout + proc.stderr
    by_kernel = errors_by_kernel(log)
    table = "\n".join(f"  {k:<36} {tool}: {n} error(s)" for k, n in sorted(by_kernel.items()))
    print(f"{tool} ({group}): exit {proc.returncode}\n{table or '  no errors'}")
    summary = re.findall(r"ERROR SUMMARY: (\d+) error", log)
    assert "ran " in log, f"{tool}: the target did not finish:\n{log[-3000:]}"
    assert proc.returncode == 0 and all(int(n) == 0 for n in summary), (
        f"{tool} found errors:\n{table}\n{log[-6000:]}")
