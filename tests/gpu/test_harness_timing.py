"""GPU tier: `perf.run` fails a kernel whose answer goes wrong while it is being timed."""
from __future__ import annotations

import pytest

from bench.registry import Kernel
from bench.timing import Policy


def _kernel(name, make):
    return Kernel(name=name, op="matmul", backend="triton", version="-", summary="",
                  source="", precisions=("fp32",), loader=lambda precision: make())


def _flaky():
    import torch

    calls = []

    def fn(a, b):                 # right on the first call, wrong from then on
        calls.append(1)
        out = torch.matmul(a, b)
        return out if len(calls) == 1 else out.add_(1)
    return fn


def _lazy():
    import torch

    calls = []

    def fn(a, b):                 # computes once, then returns a fresh block it never writes
        calls.append(1)
        if len(calls) == 1:
            return torch.matmul(a, b)
        return torch.empty(a.shape[0], b.shape[1], device=a.device)
    return fn


@pytest.mark.parametrize("make", [_flaky, _lazy], ids=["wrong-when-repeated", "writes-nothing"])
def test_timing_fails_a_kernel_wrong_after_repeats(make):
    import torch

    from bench import perf

    torch.backends.cuda.matmul.allow_tf32 = False
    k = _kernel("wrong_when_timed", make)
    rows, _env, _ceilings = perf.run([k], "256x256x256", ["fp32"],
                                     Policy(target_s=0.02, min_reps=5, budget_s=0.5),
                                     measure_ceilings=False, all_kernels=[k], ceilings={})
    row = next(r for r in rows if r["kernel"] == k.name)
    assert row["status"] == "FAIL" and "wrong after timing" in row["note"], row
    assert row["sm_clock_mhz_before"] is None or row["sm_clock_mhz_before"] > 0


def test_timing_passes_a_correct_kernel():
    import torch

    from bench import perf

    k = _kernel("right_when_timed", lambda: torch.matmul)
    torch.backends.cuda.matmul.allow_tf32 = False
    rows, _env, _c = perf.run([k], "256x256x256", ["fp32"],
                              Policy(target_s=0.02, min_reps=5, budget_s=0.5),
                              measure_ceilings=False, all_kernels=[k], ceilings={})
    row = next(r for r in rows if r["kernel"] == k.name)
    assert row["status"] == "ok", row
    assert 0 < row["host_ms"] < 100, row      # the host's time of one call, recorded
