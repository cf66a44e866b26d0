"""Timing integrity: the answers after the timing loop are checked, and a clock that fell
during a kernel's timing is flagged (bench/timing.py). The decisions are pure functions,
tested here on the CPU; the GPU tier runs them inside `perf.run` (tests/gpu/test_harness_timing.py)."""
from __future__ import annotations

import pytest
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


def test_the_spin_keeps_the_host_ahead_and_vanishes_for_long_kernels():
    from bench.timing import CYCLES_PER_SECOND, spin_cycles

    # a 20 us kernel behind a 300 us Python wrapper: spin 580 us, so that one repetition
    # gives the GPU twice the host's time
    assert spin_cycles(300e-6, 20e-6) == pytest.approx(580e-6 * CYCLES_PER_SECOND, abs=1)
    # a kernel longer than twice the host's cost runs back to back (after its flush only),
    # as in a real program and in triton.testing.do_bench: no idle GPU between launches
    assert spin_cycles(300e-6, 0.7e-3) == 0
    assert spin_cycles(15e-6, 2.8e-3) == 0


def test_alternating_rounds_time_the_kernel_then_the_reference_each_round():
    """bench time --alternate R: R rounds, each the kernel then the reference (a ratio of two
    timings seconds apart), the median ratio kept; off by default."""
    from bench.timing import Policy, alternating_ratio

    calls = []
    times = iter([2.0, 1.0, 2.0, 2.0, 1.0, 3.0])     # round ratios 0.5, 1.0, 3.0

    def timer(fn):
        calls.append(fn())
        return next(times)

    ratio, pairs = alternating_ratio(lambda: "kernel", lambda: "reference", 3, timer)
    assert calls == ["kernel", "reference"] * 3
    assert pairs == [(2.0, 1.0), (2.0, 2.0), (1.0, 3.0)] and ratio == 1.0
    with pytest.raises(ValueError, match="rounds must be >= 1, got 0"):
        alternating_ratio(lambda: None, lambda: None, 0, timer)
    assert Policy().alternate == 0


def test_alternating_rounds_reach_below_the_cross_checks_floor():
    """Rows of 0.1-100 ms get the rounds (4096^3 on tensor cores: ~0.18 ms, which do_bench
    does not time); shorter or longer rows, or --alternate 0, none."""
    from bench.timing import Policy

    policy = Policy(alternate=3)
    assert [policy.alternates(ms) for ms in (0.05, 0.1, 0.18, 0.2, 100.0, 150.0)] == \
        [False, True, True, True, True, False]
    assert not policy.crosschecks(0.18) and policy.crosschecks(0.2)
    assert not Policy().alternates(0.18)


def test_alternating_rounds_are_sustained_by_default(monkeypatch):
    """The rounds' default timer is sustained_ms: one warm-up launch, one timed launch that
    sizes the run (about `seconds` of launches, at least 10), then the launches back to back
    inside one event pair, their mean returned."""
    import inspect

    import torch

    from bench import timing

    assert "timer = timer or sustained_ms" in inspect.getsource(timing.alternating_ratio)
    elapsed = iter([2.0, 1000.0])   # ms: the sizing launch, then the whole run

    class Event:
        def __init__(self, enable_timing=False):
            assert enable_timing

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return next(elapsed)

    monkeypatch.setattr(torch.cuda, "Event", Event)
    launches = []
    ms = timing.sustained_ms(lambda: launches.append(1), seconds=1.0)
    assert len(launches) == 2 + 500 and ms == 1000.0 / 500   # 1 s / 2 ms = 500 launches
    elapsed = iter([400.0, 4000.0])   # a 400 ms kernel: still 10 launches
    launches.clear()
    assert timing.sustained_ms(lambda: launches.append(1)) == 400.0 and len(launches) == 12


def test_the_alternate_flag_is_checked_before_any_work():
    from bench import cli

    parser = cli.build_parser()
    assert parser.parse_args(["time", "--alternate", "5"]).alternate == 5
    assert parser.parse_args(["report"]).alternate == 0
    for bad in ("-1", "21", "x"):
        with pytest.raises(SystemExit):
            parser.parse_args(["time", "--alternate", bad])


def test_the_do_bench_cross_check_takes_only_kernels_it_can_time():
    from bench.timing import Policy

    policy = Policy()
    assert not policy.crosschecks(0.05)      # do_bench's events would hold host time
    assert policy.crosschecks(0.2) and policy.crosschecks(3.0)
    assert not policy.crosschecks(300.0)     # v1 naive at 4096^3: a budget, not a check
    assert not Policy(crosscheck_ms=None).crosschecks(3.0)


def test_the_two_judgements_share_one_reference_and_still_fail_a_wrong_rerun(monkeypatch):
    """Within the matmul problem's judging() the float64 product of one pair of inputs is
    made once; a rerun that is wrong still fails, and a write into an input makes a new one."""
    from bench.families.matmul import problems as mp

    made = []
    real = torch.Tensor.double
    monkeypatch.setattr(torch.Tensor, "double", lambda t: made.append(1) or real(t))
    a, b = torch.randn(9, 7), torch.randn(7, 5)
    problem = problems.get("matmul")
    with problem.judging():
        assert verify_after_timing(a @ b, lambda: a @ b, _matmul_judge(a, b)) == ""
        first = len(made)
        assert first == 4                         # the two outputs, and A and B once
        assert verify_after_timing(a @ b, lambda: a @ b + 1, _matmul_judge(a, b)).startswith(
            "wrong after timing (a launch into a poisoned output)")
        assert len(made) - first == 2            # the two outputs only: no new product
        a.add_(1.0)                               # the same tensor, other values
        assert mp.matmul_reference(a, b)[0].equal(real(a) @ real(b))
    assert mp._REFERENCE == {}                   # nothing kept once the context ends
    ref, _mag = mp.matmul_reference(a, b)
    assert mp._REFERENCE == {}                   # nor outside it
    with torch.inference_mode():                 # no version counter: never kept
        a, b = torch.randn(9, 7), torch.randn(7, 5)
        with problem.judging():
            assert verify_after_timing(a @ b, lambda: a @ b, _matmul_judge(a, b)) == ""
            assert "key" not in mp._REFERENCE


def test_matmul_inputs_are_new_tensors_of_values_drawn_once_per_shape(monkeypatch):
    """Every call gives tensors of its own (a nonfinite case writes NaN into them), with the
    values of a fresh draw; the draw itself happens once per shape and seed."""
    from bench.families.matmul import problems as mp

    draws = []
    real = torch.randn
    monkeypatch.setattr(torch, "randn", lambda *a, **k: draws.append(1) or real(*a, **k))
    problem = problems.get("matmul")
    shape = problem.parse_shape("33x17x9")
    bad_a, _ = problem.inputs(shape, "fp32", mode="nonfinite")
    assert bad_a.isnan().any()
    a32, b32 = problem.inputs(shape, "fp32")
    a16, b16 = problem.inputs(shape, "fp16")
    assert not a32.isnan().any() and a32.data_ptr() != bad_a.data_ptr()
    assert a16.equal(a32.half()) and b16.equal(b32.half())
    assert len(draws) == 2                         # A and B, once
    mp._DRAWN.clear()
    g = torch.Generator().manual_seed(0)
    assert a32.equal(real((33, 9), generator=g))   # the values of a fresh draw from the seed
    problem.inputs(problem.parse_shape("33x17x10"), "fp32")
    assert len(draws) == 4                          # a new shape draws again
