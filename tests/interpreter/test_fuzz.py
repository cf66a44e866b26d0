"""Property-based tests (tests/support/fuzz.py: strategies, oracles) of every Triton kernel
that runs here, through the interpreter with the "cpu" profile, and the fuzzer finding the
deliberately wrong kernels."""
from __future__ import annotations

import pytest

from bench import registry
from tests.support.fuzz import KERNELS, fuzzer


@pytest.mark.slow
@pytest.mark.parametrize("kernel,precision", KERNELS)
def test_fuzz(kernel, precision):
    fuzzer(kernel, precision, "cpu")()


@pytest.mark.parametrize("name", ["triton_copy_bug_pid_times_n", "triton_softmax_bug_flush_small"])
def test_fuzz_finds_the_deliberately_wrong_kernels(name):
    """The fuzzer can fail: it must find an input that shows each wrong kernel wrong."""
    with pytest.raises(Exception) as caught:      # hypothesis groups distinct failures
        fuzzer(registry.get(name), "fp32", "cpu", max_examples=30)()
    found = getattr(caught.value, "exceptions", [caught.value])
    assert any(isinstance(e, AssertionError) for e in found), found
