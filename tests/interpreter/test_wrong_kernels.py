"""Every deliberately wrong kernel ("_bug_" in its name) fails `bench check` on the default
check shapes of the CPU, at every precision the interpreter runs (bf16 is the GPU's:
bench/device.py): the bound catches a lost K tile, one output in a hundred, a dropped N tail,
one mis-normalised row in a thousand, a zeroed dropout tail, an unwritten image tail. The GPU
tier makes the same check on the GPU's default shapes (tests/gpu/test_wrong_kernels.py)."""
from __future__ import annotations

import pytest

from bench import check, device, registry

WRONG = registry.select("*_bug_*")
CASES = [(k, p) for k in WRONG for p in k.precisions if device.can_run(k, "cpu", p)[0]]


@pytest.mark.parametrize("kernel,precision", CASES, ids=[f"{k.name}-{p}" for k, p in CASES])
def test_fails_its_default_check(kernel, precision):
    results = check.run([kernel], precisions=[precision], device="cpu")
    failed = [r for r in results if r.status == "FAIL"]
    assert failed, [(r.shape, r.status, r.error) for r in results]
    assert not [r for r in results if r.status == "ERROR"], results
