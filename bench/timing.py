"""Timing: how long one launch of a kernel takes on the GPU, measured so it can be trusted.

The recipe (and why):

- Setup is never timed. The caller makes the inputs and calls the kernel once before
  timing; that first call is when the extension loads, Triton compiles, and an
  autotuner tries its configurations.
- CUDA events around each launch, not a host clock: they measure the GPU timeline.
- L2 is flushed before every timed launch by writing a buffer twice the L2 size
  (outside the events). Otherwise a 1024^3 matmul, whose 12 MB of inputs fit in the
  50 MB L2, reads them from L2 on every repeat and looks faster than it ever is in a
  real program. The flush also keeps the GPU busy while the host enqueues the next
  launch, so the host-side launch cost (Python, allocation of the output) hides under
  it instead of appearing as idle time between the events.
- The host must stay ahead of the GPU, so that the host's launch cost (Python, argument
  checks, an autotuner's cache lookup) never sits between the two events, whatever the
  language. Measured on the H100 (192,311-element add, host time per call): PyTorch eager
  11 us, the CUDA op 12 us, a bare Triton `kernel[grid](...)` 16 us, the same kernel as a
  torch.library triton_op 85-94 us, and its Python wrapper called outside the op 305 us
  (wrap_triton then builds its tracing wrapper on every call). Without care, a fixed 50 us
  gap left Triton matmul medians at 0.36-0.45 ms instead of 0.19 ms. So the wrapper's host
  cost H is measured first; before the timed launches the GPU spins (torch.cuda._sleep)
  for 2 H, which puts the host ahead; and each repetition (flush, spin, launch) keeps at
  least 2 H of GPU work, so the host stays ahead: the spin before a launch is 2 H minus
  the kernel's own time, and none for a kernel longer than 2 H. Long kernels therefore run
  back to back, each after its flush, as in a real program and in
  `triton.testing.do_bench`. (A spin before every launch, whatever its length, lifted the
  ratio of tensor-core kernels that run at the power limit by 3-4% at 8192^3 on the H100:
  the GPU idled and its clocks recovered between launches; docs/performance/fast_matmul.md,
  "tf32 with a row-major B".)
- Warm-up launches (clocks ramp up, caches of the driver fill) before any recorded one.
- Many repetitions, then the median and the interquartile range: the median ignores the
  odd slow launch (another process, a clock dip); the IQR says how noisy the numbers are.
  The number of repetitions adapts: enough for ~0.4 s of kernel time, at least 20, at most
  300 for a microsecond kernel (each repetition also pays a flush and a spin), and a
  kernel that takes a second per launch (v1 naive at 4096^3) gets a few repetitions only,
  or the default suite would not fit its 10-minute budget.
- The answer is checked again after the timing loop (`verify_after_timing`): the output of
  the last timed launch, then that of one more launch into a poisoned output block. A
  kernel that is right once and wrong when repeated, or that depends on what an earlier
  launch left behind (a buffer, a counter, the output block itself), fails the timing step
  instead of lending its speed to a wrong answer.
- A cross-check by another timer: kernels of 0.2-100 ms are timed a second time with
  `triton.testing.do_bench` (`do_bench_ms`: its own cache flush, launches back to back,
  the median), and the report sets the two ratios to the reference side by side. Below
  0.2 ms do_bench's events take in the host's launch cost of a Triton wrapper (it has no
  spin), so the two would differ by design, not by error.
- Alternating sustained rounds (opt-in, `bench time --alternate R`): at 700 W a
  tensor-core kernel and its reference, timed minutes apart, may run at different clocks
  (1260-1980 MHz on the H100), which moves their ratio by up to 15% at 8192^3. With R > 0,
  every row of 0.1-100 ms (`Policy.alternates`; 4096^3 on tensor cores takes 0.18 ms) is
  also timed in R rounds that alternate the kernel and the reference on the same inputs
  (`alternating_ratio`), each a second of launches back to back (`sustained_ms`: the
  steady state of a training loop, no cache flush), and the row keeps the median of the R
  ratios. do_bench's 100 ms rounds swung by up to +-8% round
  to round at 8192^3 on the H100; second-long rounds agreed within +-1%
  (results/sweeps/h100/t5_stream_k_runs).
- The SM clock is read before and after each kernel's timed launches; a drop of more than
  CLOCK_DROP (throttling: power, temperature) is flagged in the row's note
  (`clock_note`), so a slow number can be told from a slow kernel.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass


@dataclass
class Timing:
    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    reps: int
    host_ms: float | None = None   # the host's time of one call (host_cost_s), where measured

    @property
    def iqr_ms(self) -> float:
        return self.q3_ms - self.q1_ms

    def as_dict(self) -> dict:
        d = asdict(self)
        d["iqr_ms"] = self.iqr_ms
        return d


@dataclass
class Policy:
    """How many launches to time. The defaults fit the default suite in its budget."""

    target_s: float = 0.4      # aim for this much kernel time per measurement
    min_reps: int = 20         # ... but at least this many launches
    max_reps: int = 300        # ... and at most this many (tiny kernels)
    budget_s: float = 4.0      # a slow kernel gets at most ~this much time
    floor_reps: int = 3        # ... but never fewer launches than this
    warmup_s: float = 0.05     # warm-up time before the recorded launches
    # The cross-check: rows whose median lies in this range (ms) are timed a second time
    # with triton.testing.do_bench (do_bench_ms); None: never.
    crosscheck_ms: tuple[float, float] | None = (0.2, 100.0)
    # Alternating rounds with the reference (alternating_ratio): 0 (off) or how many rounds,
    # for the rows whose median lies in alternate_ms (ms). Its floor is lower than the
    # cross-check's: each round launches back to back inside one event pair, so the host's
    # launch cost (up to ~0.05 ms for a Triton wrapper) only has to stay under the kernel's
    # time for the GPU's queue never to run dry.
    alternate: int = 0
    alternate_ms: tuple[float, float] = (0.1, 100.0)

    def crosschecks(self, median_ms: float) -> bool:
        lo_hi = self.crosscheck_ms
        return bool(lo_hi) and lo_hi[0] <= median_ms <= lo_hi[1]

    def alternates(self, median_ms: float) -> bool:
        lo, hi = self.alternate_ms
        return self.alternate > 0 and lo <= median_ms <= hi

    def reps_for(self, estimate_s: float) -> int:
        """Repetitions for a kernel whose one launch takes `estimate_s` seconds."""
        if estimate_s <= 0:
            return self.max_reps
        reps = max(self.min_reps, math.ceil(self.target_s / estimate_s))
        reps = min(reps, self.max_reps)
        affordable = max(self.floor_reps, int(self.budget_s / estimate_s))
        return min(reps, affordable)


def quartiles(samples: list[float]) -> tuple[float, float, float]:
    """(q1, median, q3) with the 'inclusive' method (defined for 1 sample too)."""
    if len(samples) == 1:
        return samples[0], samples[0], samples[0]
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, q2, q3


class L2Flusher:
    """Writes a buffer of twice the L2 size: what was cached before is evicted."""

    def __init__(self, l2_bytes: int):
        import torch

        self.buffer = torch.empty(2 * l2_bytes, dtype=torch.uint8, device="cuda")

    def __call__(self) -> None:
        self.buffer.zero_()


CLOCK_DROP = 0.05   # a fall of the SM clock by more than 5% during a kernel's timing: flagged


def clock_note(before_mhz, after_mhz, drop: float = CLOCK_DROP) -> str:
    """A note for a row whose SM clock fell during its timing ('' if it did not, or if the
    clock could not be read)."""
    if not before_mhz or not after_mhz or after_mhz >= before_mhz * (1 - drop):
        return ""
    return (f"throttled: SM clock {before_mhz} -> {after_mhz} MHz during the timing "
            f"({100 * (1 - after_mhz / before_mhz):.0f}% lower)")


def verify_after_timing(last_output, rerun, judge) -> str:
    """'' if the kernel's answers after timing are right, else why not.

    last_output: the output of the last timed launch; rerun(): one more launch whose output
    block was poisoned first (returns the output); judge(out) -> '' or a reason."""
    why = judge(last_output)
    if why:
        return f"wrong after timing (last timed launch): {why}"
    why = judge(rerun())
    if why:
        return f"wrong after timing (a launch into a poisoned output): {why}"
    return ""


CYCLES_PER_SECOND = 2.0e9  # torch.cuda._sleep counts SM clock cycles (~1.98 GHz on the H100)
MIN_SLEEP_S = 50e-6


def host_cost_s(fn, calls: int = 5) -> float:
    """Median host time of one call of fn() (enqueue only, no synchronisation)."""
    import time

    import torch

    costs = []
    for _ in range(calls):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        costs.append(time.perf_counter() - t)
    torch.cuda.synchronize()
    return sorted(costs)[len(costs) // 2]


def spin_cycles(host_s: float, kernel_s: float) -> int:
    """SM cycles to spin before a launch so that one repetition (flush, spin, launch) gives
    the GPU at least twice the host's cost of a call: the host stays ahead of the GPU. A
    kernel that is itself that long needs no spin."""
    return int(max(0.0, 2 * host_s - kernel_s) * CYCLES_PER_SECOND)


def time_launches(fn, flush, policy: Policy | None = None) -> Timing:
    """Times fn() on the GPU: warm-up, then `policy.reps_for` launches, each after a flush.

    fn must already have run once (setup, compilation, autotuning are not timed).
    """
    import torch

    policy = policy or Policy()
    host = host_cost_s(fn)
    lead_cycles = int(max(MIN_SLEEP_S, 2 * host) * CYCLES_PER_SECOND)

    def one(sleep_cycles: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        flush()
        torch.cuda._sleep(sleep_cycles)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3  # seconds

    estimate = one(lead_cycles)
    # Warm-up: a fast kernel gets ~warmup_s worth of launches; a slow one just the one above.
    for _ in range(min(100, int(policy.warmup_s / max(estimate, 1e-6)))):
        flush()
        fn()
    if estimate < 0.1:
        estimate = min(estimate, one(lead_cycles))  # after warm-up: a better estimate
    reps = policy.reps_for(estimate)
    sleep_cycles = spin_cycles(host, estimate)

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda.synchronize()
    torch.cuda._sleep(lead_cycles)  # the host's lead, kept by every repetition below
    for s, e in zip(starts, ends):
        flush()  # outside the events
        if sleep_cycles:
            torch.cuda._sleep(sleep_cycles)
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    q1, med, q3 = quartiles(ms)
    return Timing(median_ms=med, q1_ms=q1, q3_ms=q3, min_ms=ms[0], reps=reps,
                  host_ms=host * 1e3)


def sustained_ms(fn, seconds: float = 1.0) -> float:
    """The mean time of fn() in ms over about `seconds` of launches back to back (no cache
    flush, no gap), timed by one pair of CUDA events: what a kernel holds in the steady
    state of a loop, clock throttling included. One launch first warms up and sizes the run
    (at least 10 launches)."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    start.record()
    fn()
    end.record()
    end.synchronize()
    n = max(10, int(seconds * 1e3 / max(start.elapsed_time(end), 1e-3)))
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / n


def alternating_ratio(fn, ref_fn, rounds: int, timer=None) -> tuple[float, list[tuple]]:
    """The kernel's speed relative to the reference's, measured in `rounds` rounds that each
    time the kernel, then the reference, with `timer` (sustained_ms): (the median of the
    rounds' reference / kernel time ratios, [(kernel ms, reference ms), ...] in order)."""
    if rounds < 1:
        raise ValueError(f"alternating_ratio: rounds must be >= 1, got {rounds}")
    timer = timer or sustained_ms
    pairs = []
    for _ in range(rounds):
        kernel_ms = timer(fn)
        pairs.append((kernel_ms, timer(ref_fn)))
    return statistics.median(r / k for k, r in pairs), pairs


def do_bench_ms(fn, warmup_ms: int = 10, rep_ms: int = 60) -> float:
    """The median time of fn() in ms by triton.testing.do_bench, the timer the Triton
    tutorials use: a cross-check of time_launches by code we did not write."""
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))
