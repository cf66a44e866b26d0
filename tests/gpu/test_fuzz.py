"""Property-based tests (tests/support/fuzz.py: strategies, oracles) of every CUDA and Triton
kernel, natively with the "gpu" profile: more and larger examples than the interpreter's."""
from __future__ import annotations

import pytest

from tests.support.fuzz import KERNELS, fuzzer


@pytest.mark.slow
@pytest.mark.parametrize("kernel,precision", KERNELS)
def test_fuzz(kernel, precision):
    fuzzer(kernel, precision, "gpu")()
