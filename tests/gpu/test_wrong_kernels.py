"""Every deliberately wrong kernel ("_bug_" in its name) fails `bench check` on the default
check shapes of the GPU, at every precision it claims, natively: the bound catches a lost K
tile, one output in a hundred, a dropped N tail, one mis-normalised row in a thousand, a
zeroed dropout tail, an unwritten image tail. The CPU tier makes the same check through the
interpreter (tests/interpreter/test_wrong_kernels.py)."""
from __future__ import annotations

import pytest

from tests.support.checks import assert_fails_its_default_check, wrong_kernel_cases


@pytest.mark.parametrize("kernel,precision", wrong_kernel_cases("cuda"))
def test_fails_its_default_check(kernel, precision):
    assert_fails_its_default_check(kernel, precision, "cuda")
