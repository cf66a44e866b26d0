"""GPU tier, slow: compute-sanitizer (memcheck, racecheck, initcheck) over every CUDA and
Triton kernel of the registry, through the torch ops and the Triton wrappers, at odd shapes
(tests/sanitize_target.py). The standalone CUDA drivers get the same tools in
tests/test_cuda_matmul.py and tests/test_memory_gpu.py.

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

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("memcheck", "racecheck", "initcheck")


def errors_by_kernel(log: str) -> dict[str, int]:
    """Sanitizer error reports ('========= Invalid __global__ read', 'Race reported',
    'Uninitialized __global__ memory read', ...) counted per marker line before them."""
    counts: dict[str, int] = {}
    current = "(before the first kernel)"
    for line in log.splitlines():
        if line.startswith("== "):
            current = line[3:].split()[0]
        elif re.match(r"=+ (Invalid|Race|Uninitialized|Error|Program hit|Barrier|Malloc)", line) \
                or "Race reported" in line or "Potential" in line:
            counts[current] = counts.get(current, 0) + 1
    return counts


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("tool", TOOLS)
def test_compute_sanitizer_over_every_kernel(tool):
    sanitizer = find_cuda_tool("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer not found")
    env = dict(os.environ, PYTHONUNBUFFERED="1", TRITON_INTERPRET="0")
    cmd = [sanitizer, "--tool", tool, "--error-exitcode", "3", "--target-processes", "all",
           "--print-limit", "50", sys.executable, "-m", "tests.sanitize_target"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    log = proc.stdout + proc.stderr
    by_kernel = errors_by_kernel(log)
    table = "\n".join(f"  {k:<36} {tool}: {n} error(s)" for k, n in sorted(by_kernel.items()))
    print(f"{tool}: exit {proc.returncode}\n{table or '  no errors'}")
    summary = re.findall(r"ERROR SUMMARY: (\d+) error", log)
    assert "ran " in log, f"{tool}: the target did not finish:\n{log[-3000:]}"
    assert proc.returncode == 0 and all(int(n) == 0 for n in summary), (
        f"{tool} found errors:\n{table}\n{log[-6000:]}")


def test_error_attribution():
    log = "\n".join(["== triton_copy 1000 fp32", "========= Invalid __global__ read of size 4",
                     "== cuda_copy 1000 fp32", "========= ERROR SUMMARY: 1 error"])
    assert errors_by_kernel(log) == {"triton_copy": 1}
