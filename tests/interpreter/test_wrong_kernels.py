"""Every deliberately wrong kernel ("_bug_" in its name) fails `bench check` on the default
check shapes of the CPU, at every precision the interpreter runs (bf16 is the GPU's:
bench/device.py): the bound catches a lost K tile, one output in a hundred, a dropped N tail,
one mis-normalised row in a thousand, a zeroed dropout tail, an unwritten image tail. The GPU
tier makes the same check on the GPU's default shapes (tests/gpu/test_wrong_kernels.py)."""
from __future__ import annotations

import pytest

from tests.support.checks import assert_fails_its_default_check, wrong_kernel_cases


@pytest.mark.parametrize("kernel,precision", wrong_kernel_cases("cpu"))
def test_fails_its_default_check(kernel, precision):
    assert_fails_its_default_check(kernel, precision, "cpu")
