"""Timing integrity: the answers after the timing loop are checked, and a clock that fell
during a kernel's timing is flagged (bench/timing.py). The decisions are pure functions,
tested here on the CPU; the GPU tier runs them inside `perf.run` (tests/gpu/test_harness_timing.py)."""
from __future__ import annotations

import torch

from bench import problems
from bench.timing import clock_note, verify_after_timing


def _matmul_judge(a, b):
    problem = problems.get("matmul")
    shape = problem.parse_shape(f"{a.shape[0]}x{b.shape[1]}x{a.shape[1]}")
    tol = problem.tolerance(shape, "fp32")

    def judge(out):
        err = problem.error(out, (a, b))
        return "" if err <= tol else f"error {err:.3g} > bound {tol:.3g}"
    return judge


def test_a_kernel_right_once_and_wrong_when_repeated_fails():
    a, b = torch.randn(9, 7), torch.randn(7, 5)
    calls = []

    def flaky():                                  # right on the first call only
        calls.append(1)
        out = a @ b
        return out if len(calls) == 1 else out + 1

    first = flaky()
    assert _matmul_judge(a, b)(first) == ""
    why = verify_after_timing(flaky(), flaky, _matmul_judge(a, b))
    assert why.startswith("wrong after timing (last timed launch): error")


def test_a_kernel_that_writes_nothing_when_repeated_fails():
    """Its last timed output looks right (the block still held an earlier answer); the
    launch into a poisoned block shows that it writes nothing."""
    a, b = torch.randn(9, 7), torch.randn(7, 5)
    good = a @ b
    lazy = lambda: torch.full_like(good, float("nan"))     # noqa: E731: what a poisoned block holds
    why = verify_after_timing(good.clone(), lazy, _matmul_judge(a, b))
    assert why.startswith("wrong after timing (a launch into a poisoned output)")


def test_a_correct_kernel_passes():
    a, b = torch.randn(9, 7), torch.randn(7, 5)
    assert verify_after_timing(a @ b, lambda: a @ b, _matmul_judge(a, b)) == ""


def test_clock_drops_are_flagged():
    assert clock_note(1980, 1980) == ""
    assert clock_note(1980, 1900) == ""                      # 4%: within the noise
    assert clock_note(1980, 1650) == ("throttled: SM clock 1980 -> 1650 MHz during the "
                                      "timing (17% lower)")
    assert clock_note(None, 1650) == "" and clock_note(1980, None) == ""
