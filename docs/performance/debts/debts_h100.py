"""The performance debts of the existing kernels, measured side by side in one process.

    python docs/performance/debts/debts_h100.py OUT [--sections softmax,tf32,batched]
                                                    [--rounds N] [--quick] [--plan]
                                                    [--variants REGEX] [--softmax-shapes RxN,...]

Three debts (NOTES.md beside this file says why each kernel is slow, what each variant
changes and what we predict):

  softmax  every registered row softmax (versions 1, 2 and 3: "cuda split (op)" and
           "triton split (op)" are the registry's split kernels) beside torch.softmax, and
           the forms of version 3 (cvt::softmax_rows_variant for CUDA: "split", one row per
           cluster, and "split_refill", persistent, each block copying its next row while it
           writes the current one; the op picks one of them, cuda/memory_launchers.h; for
           Triton triton_impl/softmax_split.py with other segments, two launches, load
           hints), at 4096 x 32768 and 4096 x 393216, float32/float16/bfloat16, dim = -1;
           GB/s counted on the compulsory bytes (read N once + write N once), against the
           copy bandwidth measured in the same run. --variants REGEX keeps the kernels whose
           names it finds; --softmax-shapes measures other shapes (the split's crossover
           between segments in registers and in shared memory: NOTES.md).
  tf32     triton_persistent against cuBLAS (TF32) at 4096^3 and 8192^3, row-major B, timed
           by the harness's method (bench/timing.py) and by triton.testing.do_bench, and by
           two variants of the harness's loop that isolate its one difference in kind (the
           GPU spin before each launch, sized per kernel by its host cost), alternating
           kernels in every round, with the SM clock and the power sampled during each
           measurement.
  batched  triton_batched at 4096^3 (batch 1, 2-D inputs as the harness gives them; against
           torch.matmul) and A (128, 512, 1024) @ B (128, 1024, 2048) (against torch.bmm),
           fp16/bf16/tf32: its default, a TMA kernel with a batch axis (3-D descriptors;
           fp16/bf16 matmul_persistent's kernel, tf32 the Gluon swap matmul_swap_gluon),
           beside the autotuned pointer kernel (tma=False; the variant that won the run of
           NOTES.md over the tiles of "Meet Triton"). The table's config column says which
           ran.

Every variant is checked against a float64 reference before it is timed (a failure is
reported and the variant is not timed). Timings: bench.timing.time_launches (CUDA events
around each launch, L2 flushed before each, warm-up, median) in `--rounds` rounds whose
order alternates; a variant's time is the median of its round medians and its ratio to the
reference the median of the per-round ratios. The CUDA ops are built on first use
(bindings.ops(): the prebuilt extension, or a just-in-time build, ~1-2 min); meanwhile
worker processes compile the Triton kernels into Triton's cache. Rows go to OUT/debts.csv as
they are measured; OUT/table.txt and OUT/env.json at the end. Needs a CUDA GPU (the cluster
variants: sm_90).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import statistics
import sys
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SECTIONS = ("softmax", "tf32", "batched")
SOFTMAX_SHAPES = ((4096, 32768), (4096, 393216))


def parse_shapes(text: str) -> tuple:
    """"4096x32768,4096x393216" -> ((4096, 32768), (4096, 393216)) by the harness's parser
    (the softmax problem's); ValueError names a shape that is not ROWSxN, both positive."""
    from bench import problems

    parsed = problems.get("softmax").parse_shapes(text)
    shapes = [s.dims for s in parsed]
    bad = [s for s in parsed if len(s.dims) != 2 or min(s.dims) < 1
           or s.dim not in (None, -1, 1)]                      # rows: the last dimension
    if bad or not shapes:
        raise ValueError(f"expected ROWSxN with both positive, got {text!r}")
    return tuple(shapes)


def format_shapes(shapes) -> str:
    return ",".join(f"{r}x{n}" for r, n in shapes)
SOFTMAX_DTYPES = ("fp32", "fp16", "bf16")
TF32_SIZES = (4096, 8192)
BATCHED_CASES = (("4096^3, batch 1", None, (4096, 4096), (4096, 4096)),
                 ("(128,512,1024)@(128,1024,2048)", 128, (512, 1024), (1024, 2048)))
BATCHED_PRECISIONS = ("fp16", "bf16", "tf32")


# --------------------------------------------------------------------------- measuring

class Sampler:
    """SM clock (MHz) and board power (W) polled every 5 ms while a measurement runs
    (pynvml); mean and minimum. Empty where NVML is missing."""

    def __init__(self):
        self.clocks, self.power = [], []
        self._stop = threading.Event()
        self._nv = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self._nv = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(_device_index())
        except Exception:  # noqa: BLE001 - no NVML: no samples, the numbers still stand
            self._nv = None

    def _run(self):
        nv = self._nv
        while not self._stop.is_set():
            try:
                self.clocks.append(nv.nvmlDeviceGetClockInfo(self._handle, nv.NVML_CLOCK_SM))
                self.power.append(nv.nvmlDeviceGetPowerUsage(self._handle) / 1000)
            except Exception:  # noqa: BLE001
                return
            time.sleep(0.005)

    def __enter__(self):
        if self._nv is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._nv is not None:
            self._thread.join()

    def summary(self) -> dict:
        if not self.clocks:
            return dict(clock_mhz=None, clock_min_mhz=None, power_w=None)
        return dict(clock_mhz=round(statistics.mean(self.clocks)), clock_min_mhz=min(self.clocks),
                    power_w=round(statistics.mean(self.power)))


def _device_index() -> int:
    import torch
    return torch.cuda.current_device()


def events_ms(fn, flush, reps: int, sleep_s: float, warmup: int = 10) -> list[float]:
    """bench/timing.py's loop (flush, spin, start event, fn, end event) with a given spin:
    the harness sizes the spin per kernel (twice its host cost); here it is fixed."""
    import torch

    from bench.timing import CYCLES_PER_SECOND
    for _ in range(warmup):
        flush()
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        flush()
        if sleep_s > 0:
            torch.cuda._sleep(int(sleep_s * CYCLES_PER_SECOND))
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


class Timer:
    """The methods of the measurement: 'harness' is bench.timing.time_launches with the
    policy given; the others are named in the tf32 section."""

    def __init__(self, flush, policy):
        self.flush, self.policy = flush, policy

    def harness(self, fn, policy=None) -> dict:
        from bench.timing import time_launches
        with Sampler() as s:
            t = time_launches(fn, self.flush, policy or self.policy)
        return dict(ms=t.median_ms, iqr_ms=t.iqr_ms, reps=t.reps, **s.summary())

    def fixed_spin(self, fn, sleep_s: float, reps: int) -> dict:
        with Sampler() as s:
            ms = sorted(events_ms(fn, self.flush, reps, sleep_s))
        return dict(ms=statistics.median(ms), iqr_ms=_iqr(ms), reps=reps, **s.summary())

    def do_bench(self, fn) -> dict:
        import triton.testing
        with Sampler() as s:
            ms = triton.testing.do_bench(fn, return_mode="all")
        return dict(ms=statistics.median(ms), mean_ms=statistics.mean(ms), iqr_ms=_iqr(sorted(ms)),
                    reps=len(ms), **s.summary())


def _iqr(sorted_ms: list[float]) -> float:
    if len(sorted_ms) < 2:
        return 0.0
    q = statistics.quantiles(sorted_ms, n=4, method="inclusive")
    return q[2] - q[0]


# --------------------------------------------------------------------------- output

class Out:
    """OUT/debts.csv, one row per measurement (written as it comes), and the printed tables."""

    FIELDS = ["section", "case", "dtype", "variant", "method", "round", "ms", "iqr_ms", "reps",
              "mean_ms", "metric", "unit", "x_ref", "pct_copy", "clock_mhz", "clock_min_mhz",
              "power_w", "status", "error", "tolerance", "note"]

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._csv = open(folder / "debts.csv", "w", newline="")
        self._writer = csv.DictWriter(self._csv, fieldnames=self.FIELDS, extrasaction="ignore")
        self._writer.writeheader()
        self.lines: list[str] = []
        self.t0 = time.monotonic()

    def row(self, **fields):
        self._writer.writerow({k: _fmt(v) for k, v in fields.items()})
        self._csv.flush()

    def say(self, text: str = ""):
        line = f"[{time.monotonic() - self.t0:6.1f}s] {text}" if text else ""
        print(line, flush=True)

    def table(self, text: str = ""):
        print(text, flush=True)
        self.lines.append(text)

    def close(self, env: dict):
        self._csv.close()
        (self.folder / "table.txt").write_text("\n".join(self.lines) + "\n")
        (self.folder / "env.json").write_text(json.dumps(env, indent=1, default=str) + "\n")


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


# --------------------------------------------------------------------------- softmax

def softmax_auto_cluster(n: int, elem: int) -> int:
    """The cluster size launch_softmax_split picks (cuda/softmax_split.cu): the smallest power
    of two whose slices fit kSplitSliceBytes (vector path)."""
    from bindings import config
    p = config.memory_params()
    vec = 16 // elem
    nvec = n // vec
    c = 1
    while c < p["SPLIT_MAX_CLUSTER"] and -(-nvec // c) * vec * elem > p["SPLIT_SLICE_BYTES"]:
        c *= 2
    return c


def softmax_auto_cluster_refill(n: int, elem: int) -> int:
    """The cluster size the split_refill variant picks: softmax_auto_cluster, at most 8 (the
    portable cluster size) where a slice of 1/8 of the row fits a block's shared memory."""
    c = softmax_auto_cluster(n, elem)
    from bindings import config
    cap = config.memory_params()["SPLIT_REFILL_MAX_CLUSTER"]
    return cap if c > cap and -(-n // cap) * elem <= 227 * 1024 else c


def softmax_variants(n: int, elem: int, quick: bool = False, keep: str = "") -> list[dict]:
    """The kernels to measure on rows of n elements: dicts with name, kind ('ref', 'default'
    or 'variant'), make (() -> (x -> softmax(x, -1))) and max_n (the longest row it takes);
    with ``keep`` (a regular expression), the reference and the kernels whose names it
    finds. Nothing is built or compiled here."""
    out = _softmax_variants(n, elem, quick)
    return [v for v in out if v["kind"] == "ref" or not keep or re.search(keep, v["name"])]


def _softmax_variants(n: int, elem: int, quick: bool) -> list[dict]:
    from bindings import config
    from triton_impl import tiles
    sram_max = config.memory_params()["SOFTMAX_SRAM_MAX_N"]
    smem_max = 227 * 1024                    # the H100's shared memory per block (opt-in)
    any_n = 2**31 - 2**16

    def registry_runner(name, precision):
        def make():
            from bench import registry
            fn = registry.get(name).runner(precision)
            return lambda x: fn(x, -1)
        return make

    def cuda_variant(variant, cluster=0):
        def make():
            import bindings
            op = bindings.ops().softmax_rows_variant
            return lambda x: op(x, variant, cluster)
        return make

    def triton_split(block=None, warps=None, two_launches=False, **keywords):
        def make():     # keywords: load_hint, packed (softmax_split.py)
            from triton_impl import softmax_split
            return lambda x: softmax_split.softmax_split(x, block=block, warps=warps,
                                                         two_launches=two_launches, **keywords)
        return make

    def entry(name, kind, make, max_n=any_n):
        return dict(name=name, kind=kind, make=make, max_n=max_n)

    p = _precision_of(elem)
    out = [entry("torch.softmax", "ref", registry_runner("torch_softmax", p))]
    if n <= sram_max:
        out += [entry("cuda row_sram", "default", registry_runner("cuda_softmax_row_sram", p), sram_max)]
    out += [entry("cuda online", "default", registry_runner("cuda_softmax_online", p))]
    out += [entry("cuda split (op)", "default", registry_runner("cuda_softmax_split", p))]
    auto = softmax_auto_cluster(n, elem)
    out.append(entry(f"cuda split C={auto} (auto)", "variant", cuda_variant("split", 0)))
    out.append(entry(f"cuda split_refill C={softmax_auto_cluster_refill(n, elem)} (auto)",
                     "variant", cuda_variant("split_refill", 0)))
    if not quick:
        for c in (auto // 2, auto * 2):
            if 1 <= c <= 16 and -(-n // c) * elem <= smem_max:
                for variant in ("split", "split_refill"):
                    out.append(entry(f"cuda {variant} C={c}", "variant",
                                     cuda_variant(variant, c), c * smem_max // elem - 64))
    if n <= sram_max:
        out += [entry("triton row_sram", "default", registry_runner("triton_softmax_row_sram", p),
                      sram_max)]
    out += [entry("triton online", "default", registry_runner("triton_softmax_online", p))]
    out += [entry("triton split (op)", "default", registry_runner("triton_softmax_split", p))]
    out.append(entry("triton split (default)", "variant", triton_split()))
    if elem == 2:       # the default packs 16-bit rows into int32 pairs; without:
        out.append(entry("triton split unpacked", "variant", triton_split(packed=False)))
    # segments in shared memory (Gluon + TMA, softmax_split_smem.py), and in registers
    out.append(entry("triton split smem", "variant", triton_split(smem=True)))
    out.append(entry("triton split registers", "variant", triton_split(smem=False)))
    # (segment KiB, buffers, warps): programs per SM = 227 KiB // (buffers x segment)
    for kib, buffers, warps in ((96, 2, 8), (48, 2, 8), (96, 1, 8), (96, 1, 4), (48, 1, 8),
                                (112, 1, 8)):
        out.append(entry(f"triton split smem {kib}Kx{buffers}b{warps}w", "variant",
                         triton_split(smem=True, smem_tile=(kib * 1024, buffers, warps))))
    if not quick:
        # segments of the default's elements per thread: 32 (float32), 64 (packed 16-bit)
        if elem == 2:
            default = tiles.SOFTMAX_SPLIT_PACKED[2][0]
            sizes = ((2048, 1), (4096, 2), (8192, 4), (16384, 8), (32768, 16))
        else:
            default = tiles.SOFTMAX_SPLIT[elem][0]
            sizes = ((1024, 1), (2048, 2), (4096, 4), (8192, 8), (16384, 16))
        for block, warps in sizes:
            if block != default and block < n:
                out.append(entry(f"triton split {block}x{warps}w", "variant",
                                 triton_split(block, warps)))
        out.append(entry("triton split two launches", "variant", triton_split(two_launches=True)))
        for hint, label in (("evict_first", "evict"), ("cg", ".cg")):    # names fit the table
            out.append(entry(f"triton split {label}", "variant", triton_split(load_hint=hint)))
    return out


def _precision_of(elem: int) -> str:
    return {4: "fp32", 2: "fp16"}[elem]


def _dtype(label: str):
    from bindings import precision
    return precision.torch_dtype(label)


def softmax_check(fn, x, problem, shape, precision) -> tuple[float, float]:
    """Largest error of fn(x) against the float64 softmax (the harness's measure: each
    output relative to itself), row block by row block; and the harness's bound."""
    import torch
    y = fn(x)
    torch.cuda.synchronize()
    rows, n = x.shape
    block = max(1, (1 << 27) // n)               # ~1 GiB of float64 work per block
    worst = 0.0
    for r in range(0, rows, block):
        worst = max(worst, problem.error(y[r:r + block], (x[r:r + block], -1)))
        if worst == math.inf:
            break
    return worst, problem.tolerance(shape, precision)


SMALL_CHECKS = (("7x1000", "random"), ("5x30001", "random"), ("5x100003", "random"),
                ("3x393224", "random"), ("4x300", "nonfinite"), ("6x20000", "nonfinite"),
                ("3x40000", "nonfinite"))


def softmax_small_checks(fn, problem, precision, max_n: int) -> str:
    """Odd lengths (the scalar paths), slice tails and non-finite rows (a NaN, a +inf, half
    and all -inf) on the rows the kernel takes: '' or what failed."""
    import torch
    from bench.families.memory.models import TensorShape
    failed = []
    for text, mode in SMALL_CHECKS:
        shape = TensorShape.parse(text)
        if shape.dims[-1] > max_n:
            continue
        x, _ = problem.inputs(shape, precision, seed=1, mode=mode, device="cuda")
        try:
            y = fn(x)
            torch.cuda.synchronize()
            err = problem.error(y, (x, -1))
        except Exception as exc:  # noqa: BLE001
            failed.append(f"{text}: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
            continue
        if not err <= problem.tolerance(shape, precision):
            failed.append(f"{text} {mode}: error {err:.3g}")
    return "; ".join(failed)


def run_softmax(out: Out, timer: Timer, copy_gbps: float, rounds: int, quick: bool,
                keep: str = "", shapes=SOFTMAX_SHAPES):
    import torch

    from bench import problems
    from bench.families.memory.models import TensorShape
    problem = problems.get("softmax")
    summary = []
    for rows, n in shapes:
        for precision in SOFTMAX_DTYPES:
            dtype = _dtype(precision)
            elem = torch.empty((), dtype=dtype).element_size()
            shape = TensorShape.parse(f"{rows}x{n}")
            case = f"{rows}x{n}"
            x, _ = problem.inputs(shape, precision, seed=0, device="cuda")
            nbytes = 2 * x.numel() * elem                    # compulsory: read once, write once
            entries = []
            for v in softmax_variants(n, elem, quick, keep):
                name, kind = v["name"], v["kind"]
                try:
                    fn = v["make"]()
                    err, tol = softmax_check(fn, x, problem, shape, precision)
                    small = (softmax_small_checks(fn, problem, precision, v["max_n"])
                             if kind == "variant" else "")
                    ok = err <= tol and not small
                    status = "ok" if ok else "FAIL"
                    note = small
                except Exception as exc:  # noqa: BLE001 - one broken variant must not stop the rest
                    err, tol, status = None, None, "ERROR"
                    note = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                    traceback.print_exc()
                out.say(f"softmax {case} {precision} {name}: {status} "
                        f"(error {err if err is None else f'{err:.3g}'} / bound "
                        f"{tol if tol is None else f'{tol:.3g}'}) {note}")
                if status != "ok":
                    out.row(section="softmax", case=case, dtype=precision, variant=name,
                            status=status, error=err, tolerance=tol, note=note)
                    continue
                entries.append(dict(name=name, kind=kind, fn=fn, err=err, tol=tol, rounds=[]))
            for r in range(rounds):
                order = entries if r % 2 == 0 else entries[::-1]
                for e in order:
                    try:
                        t = timer.harness(lambda e=e: e["fn"](x))
                    except Exception as exc:  # noqa: BLE001
                        t = dict(ms=None, note=f"{type(exc).__name__}: {exc}")
                    e["rounds"].append(t)
                ref = next((e for e in entries if e["kind"] == "ref"), None)
                for e in entries:
                    t = e["rounds"][-1]
                    ref_ms = ref["rounds"][-1]["ms"] if ref else None
                    x_ref = ref_ms / t["ms"] if ref_ms and t.get("ms") else None
                    out.row(section="softmax", case=case, dtype=precision, variant=e["name"],
                            method="harness", round=r, ms=t.get("ms"), iqr_ms=t.get("iqr_ms"),
                            reps=t.get("reps"), metric=nbytes / t["ms"] / 1e6 if t.get("ms") else None,
                            unit="GB/s", x_ref=x_ref,
                            pct_copy=100 * nbytes / t["ms"] / 1e6 / copy_gbps if t.get("ms") else None,
                            clock_mhz=t.get("clock_mhz"), clock_min_mhz=t.get("clock_min_mhz"),
                            power_w=t.get("power_w"), status="ok", error=e["err"], tolerance=e["tol"],
                            note=t.get("note", ""))
            out.say(f"softmax {case} {precision}: timed {len(entries)} kernels x {rounds} rounds")
            for e in entries:
                summary.append(_summarise(e, entries, case, precision, nbytes, copy_gbps))
            del x, entries
            torch.cuda.empty_cache()
    out.table("\nSOFTMAX (dim=-1; GB/s on compulsory bytes 2*N*size; x torch = torch.softmax ms / ms, "
              "median of per-round ratios)")
    out.table(f"{'shape':>11} {'dtype':5} {'kernel':32} {'ms':>8} {'GB/s':>7} {'x torch':>7} "
              f"{'% copy':>6} {'rounds x torch':>22} {'MHz':>5}")
    for s in summary:
        out.table(f"{s['case']:>11} {s['dtype']:5} {s['name']:32} {_f(s['ms'], 4):>8} "
                  f"{_f(s['gbps'], 0):>7} {_f(s['x_ref'], 3):>7} {_f(s['pct'], 1):>6} "
                  f"{s['per_round']:>22} {_f(s['clock'], 0):>5}")


def _summarise(e, entries, case, precision, nbytes, copy_gbps) -> dict:
    ref = next((r for r in entries if r["kind"] == "ref"), None)
    ms = [t["ms"] for t in e["rounds"] if t.get("ms")]
    ratios = []
    if ref:
        for t, tr in zip(e["rounds"], ref["rounds"]):
            if t.get("ms") and tr.get("ms"):
                ratios.append(tr["ms"] / t["ms"])
    med = statistics.median(ms) if ms else None
    clocks = [t["clock_mhz"] for t in e["rounds"] if t.get("clock_mhz")]
    return dict(case=case, dtype=precision, name=e["name"], ms=med,
                gbps=nbytes / med / 1e6 if med else None,
                x_ref=statistics.median(ratios) if ratios else None,
                pct=100 * nbytes / med / 1e6 / copy_gbps if med else None,
                per_round=" ".join(f"{r:.2f}" for r in ratios),
                clock=statistics.mean(clocks) if clocks else None)


def _f(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


# --------------------------------------------------------------------------- tf32

def matmul_rows_check(c, a, b, precision, rows: int = 128) -> tuple[float, float]:
    """The harness's matmul error (bench/families/matmul/problem.py) on the first and the last
    `rows` rows of C (a full float64 check of 8192^3 would take longer than the timing)."""
    from bench.families.matmul.problem import matmul_error
    M = a.shape[0]
    worst = 0.0
    for r0 in sorted({0, max(0, M - rows)}):
        worst = max(worst, matmul_error(c[r0:r0 + rows], a[r0:r0 + rows], b, precision))
    return worst, 1.0       # errors in units of each element's bound


def run_tf32(out: Out, timer: Timer, rounds: int, quick: bool):
    import torch

    from bench import registry
    from bench.families.matmul.models import MatmulShape
    from bench.families.matmul.problem import MatmulProblem
    from bench.timing import Policy, host_cost_s
    from triton_impl import matmul_persistent

    problem = MatmulProblem()
    kernels = {"cublas": registry.get("cublas").runner("tf32"),
               "triton_persistent": registry.get("triton_persistent").runner("tf32")}
    # the methods: (name, function of fn)
    equal_spin_s = 1e-3
    methods = [
        ("harness", lambda fn: timer.harness(fn, Policy())),          # make report's policy
        ("flush_only", lambda fn: timer.fixed_spin(fn, 0.0, 100)),   # no spin: do_bench's gap
        (f"equal_spin_{equal_spin_s * 1e3:g}ms", lambda fn: timer.fixed_spin(fn, equal_spin_s, 100)),
        ("do_bench", lambda fn: timer.do_bench(fn)),
    ]
    results = {}
    for size in TF32_SIZES:
        shape = MatmulShape.parse(f"{size}x{size}x{size}")
        a, b = problem.inputs(shape, "tf32", seed=0, device="cuda")    # the harness's inputs
        case = f"{size}^3"
        out.say(f"tf32 {case}: triton_persistent takes the '{matmul_persistent.tf32_mode(a, b)}' "
                f"path for this row-major B")
        fns = {}
        for name, fn in kernels.items():
            try:
                c = fn(a, b)
                err, tol = matmul_rows_check(c, a, b, "tf32")
                del c
                host = host_cost_s(lambda: fn(a, b)) * 1e6
                status = "ok" if err <= tol else "FAIL"
            except Exception as exc:  # noqa: BLE001
                err = tol = host = None
                status = f"ERROR {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            out.say(f"tf32 {case} {name}: {status} (error {err} / bound {tol}), host cost "
                    f"{host if host is None else f'{host:.0f} us'} per call")
            out.row(section="tf32", case=case, dtype="tf32", variant=name, method="check",
                    status=status, error=err, tolerance=tol, note=f"host {host} us")
            if status == "ok":
                fns[name] = lambda fn=fn: fn(a, b)
        if len(fns) < 2:
            continue
        for r in range(rounds):
            for method, measure in methods:
                order = list(fns) if r % 2 == 0 else list(fns)[::-1]
                for name in order:
                    t = measure(fns[name])
                    results.setdefault((case, method, name), []).append(t)
                    out.row(section="tf32", case=case, dtype="tf32", variant=name, method=method,
                            round=r, ms=t["ms"], iqr_ms=t.get("iqr_ms"), reps=t.get("reps"),
                            mean_ms=t.get("mean_ms"), metric=2 * size**3 / t["ms"] / 1e9,
                            unit="TFLOP/s", clock_mhz=t.get("clock_mhz"),
                            clock_min_mhz=t.get("clock_min_mhz"), power_w=t.get("power_w"),
                            status="ok")
            out.say(f"tf32 {case}: round {r + 1}/{rounds}")
        # Two controls, one do_bench each, both kernels: the input data (uniform [0, 1)
        # instead of the harness's normal values) and cuBLAS with TF32 allowed once for the
        # whole run instead of around each call (what a plain do_bench script does).
        if not quick:
            a_u, b_u = torch.rand_like(a), torch.rand_like(b)
            for name in fns:
                fn = kernels[name]
                t = timer.do_bench(lambda fn=fn: fn(a_u, b_u))
                results.setdefault((case, "do_bench, uniform [0,1) inputs", name), []).append(t)
            del a_u, b_u
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                control = {"cublas": lambda: torch.matmul(a, b), "triton_persistent": fns.get("triton_persistent")}
                for name, fn in control.items():
                    t = timer.do_bench(fn)
                    results.setdefault((case, "do_bench, TF32 allowed globally", name), []).append(t)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
            for (c_, method, name), ts in results.items():
                if c_ == case and method.startswith("do_bench, "):
                    t = ts[-1]
                    out.row(section="tf32", case=case, dtype="tf32", variant=name, method=method,
                            round=0, ms=t["ms"], mean_ms=t.get("mean_ms"), reps=t.get("reps"),
                            metric=2 * size**3 / t["ms"] / 1e9, unit="TFLOP/s",
                            clock_mhz=t.get("clock_mhz"), power_w=t.get("power_w"), status="ok")
        del a, b
        torch.cuda.empty_cache()
    out.table("\nTF32, row-major B: triton_persistent / cuBLAS (ratio = cuBLAS ms / persistent ms; "
              "per round, and the median)")
    out.table(f"{'size':>6} {'method':34} {'cuBLAS ms':>9} {'pers ms':>8} {'ratio':>6} "
              f"{'rounds':>32} {'MHz cuBLAS/pers':>16} {'W cuBLAS/pers':>14}")
    for case in dict.fromkeys(k[0] for k in results):
        for method in dict.fromkeys(k[1] for k in results if k[0] == case):
            cb = results.get((case, method, "cublas"), [])
            tp = results.get((case, method, "triton_persistent"), [])
            ratios = [c["ms"] / p["ms"] for c, p in zip(cb, tp)]
            med = lambda ts, key="ms": statistics.median([t[key] for t in ts if t.get(key)]) if ts else None  # noqa: E731
            line = (f"{case:>6} {method:34} {_f(med(cb), 4):>9} {_f(med(tp), 4):>8} "
                    f"{_f(statistics.median(ratios) if ratios else None, 3):>6} "
                    f"{' '.join(f'{x:.3f}' for x in ratios):>32} "
                    f"{_f(med(cb, 'clock_mhz'), 0):>7}/{_f(med(tp, 'clock_mhz'), 0):<8} "
                    f"{_f(med(cb, 'power_w'), 0):>6}/{_f(med(tp, 'power_w'), 0):<7}")
            out.table(line)
            if method == "do_bench":
                means = [c["mean_ms"] / p["mean_ms"] for c, p in zip(cb, tp)]
                out.table(f"{case:>6} {'do_bench (mean, its default)':34} "
                          f"{_f(statistics.median([c['mean_ms'] for c in cb]), 4):>9} "
                          f"{_f(statistics.median([p['mean_ms'] for p in tp]), 4):>8} "
                          f"{_f(statistics.median(means), 3):>6} "
                          f"{' '.join(f'{x:.3f}' for x in means):>32}")


# --------------------------------------------------------------------------- batched

def batched_check(c, a, b, precision) -> tuple[float, float]:
    """The harness's matmul error on a few matrices of the stack (first, second, middle,
    last) and, for a 2-D product, on its first and last 128 rows."""
    if a.dim() == 2:
        return matmul_rows_check(c, a, b, precision)
    from bench.families.matmul.problem import matmul_error
    n = a.shape[0]
    worst = max(matmul_error(c[i], a[i], b[i], precision) for i in sorted({0, 1, n // 2, n - 1}))
    return worst, 1.0       # errors in units of each element's bound


def _config_text(cfg) -> str:
    """A triton.Config as 'BMxBNxBK w8 s3 g8' (+ ' swap' for the tf32 operand swap)."""
    if cfg is None:
        return ""
    k = cfg.kwargs
    return (f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} w{cfg.num_warps} s{cfg.num_stages} "
            f"g{k['GROUP_M']}" + (" swap" if k.get("B_FROM_REGISTERS") else ""))


def _batched_note(mb, name: str, a, b, precision: str) -> str:
    """What a triton_batched entry ran: a TMA kernel (tf32: the Gluon swap; fp16/bf16:
    matmul_persistent's kernel with a batch axis, its tuned winner) or the autotuned pointer
    kernel's winner."""
    if not name.startswith("triton_batched"):
        return ""
    plan = mb.tma_plan(a, b, precision) if name == "triton_batched" else None
    if plan is not None:
        if precision == "tf32":
            from triton_impl import matmul_swap_gluon as mg
            c = mg.CONFIG
            return (f"gluon swap {c['BLOCK_M']}x{c['BLOCK_N']}x{c['BLOCK_K']} s{c['STAGES']} "
                    f"in-flight {c['IN_FLIGHT']}, 3-D TMA")
        from triton_impl import matmul_persistent as mp
        stack = any(a3.shape[0] > 1 for a3, *_ in plan)     # the list it was tuned over
        cfg = mp.best_config(mp.candidates_key(precision, stack=stack))
        ws = " ws" if cfg is not None and cfg.kwargs.get("WARP_SPECIALIZE") else ""
        return "persistent " + _config_text(cfg) + ws + ", 3-D TMA"
    return _config_text(mb.best_config(precision)) if precision in mb.AUTOTUNED else ""


def run_batched(out: Out, timer: Timer, rounds: int, quick: bool):
    import torch

    from triton_impl import matmul_batched as mb
    summary = []
    for case, batch, (m, k), (k2, n) in BATCHED_CASES:
        for precision in BATCHED_PRECISIONS:
            dtype = _dtype(precision)
            g = torch.Generator(device="cuda").manual_seed(0)
            lead = () if batch is None else (batch,)
            a = torch.randn(*lead, m, k, generator=g, device="cuda").to(dtype)
            b = torch.randn(*lead, k2, n, generator=g, device="cuda").to(dtype)
            flops = 2 * (batch or 1) * m * n * k

            def reference(a=a, b=b, precision=precision, batch=batch):
                old = torch.backends.cuda.matmul.allow_tf32
                torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
                try:
                    return torch.matmul(a, b) if batch is None else torch.bmm(a, b)
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = old

            entries = [("torch.matmul" if batch is None else "torch.bmm", "ref", reference),
                       ("triton_batched", "default",
                        lambda a=a, b=b, p=precision: mb.matmul(a, b, p))]
            # the default is a TMA kernel; the autotuned pointer kernel beside it
            entries.append(("triton_batched pointer", "variant",
                            lambda a=a, b=b, p=precision: mb.matmul(a, b, p, tma=False)))
            good = []
            for name, kind, fn in entries:
                try:
                    c = fn()                     # autotuning happens here, never in the timing
                    torch.cuda.synchronize()
                    err, tol = batched_check(c, a, b, precision)
                    del c
                    status = "ok" if err <= tol else "FAIL"
                    note = _batched_note(mb, name, a, b, precision)
                except Exception as exc:  # noqa: BLE001
                    err = tol = None
                    status, note = "ERROR", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                    traceback.print_exc()
                out.say(f"batched {case} {precision} {name}: {status} (error {err} / bound {tol}) {note}")
                out.row(section="batched", case=case, dtype=precision, variant=name, method="check",
                        status=status, error=err, tolerance=tol, note=note)
                if status == "ok":
                    good.append(dict(name=name, kind=kind, fn=fn, err=err, tol=tol, note=note,
                                     rounds=[]))
            for r in range(rounds):
                for e in (good if r % 2 == 0 else good[::-1]):
                    e["rounds"].append(timer.harness(e["fn"]))
                ref = next((e for e in good if e["kind"] == "ref"), None)
                for e in good:
                    t = e["rounds"][-1]
                    out.row(section="batched", case=case, dtype=precision, variant=e["name"],
                            method="harness", round=r, ms=t["ms"], iqr_ms=t["iqr_ms"], reps=t["reps"],
                            metric=flops / t["ms"] / 1e9, unit="TFLOP/s",
                            x_ref=ref["rounds"][-1]["ms"] / t["ms"] if ref else None,
                            clock_mhz=t.get("clock_mhz"), power_w=t.get("power_w"), status="ok",
                            error=e["err"], tolerance=e["tol"], note=e["note"])
            out.say(f"batched {case} {precision}: timed {len(good)} x {rounds} rounds")
            for e in good:
                s = _summarise(e, good, case, precision, 1, 1)
                s["tflops"] = flops / s["ms"] / 1e9 if s["ms"] else None
                s["note"] = e["note"]
                summary.append(s)
            del a, b
            torch.cuda.empty_cache()
    out.table("\nBATCHED (x ref = torch.matmul / torch.bmm ms / ms at the same precision, median "
              "of per-round ratios)")
    out.table(f"{'case':>31} {'prec':5} {'kernel':28} {'ms':>8} {'TFLOP/s':>8} {'x ref':>6} "
              f"{'rounds':>17}  config")
    for s in summary:
        out.table(f"{s['case']:>31} {s['dtype']:5} {s['name']:28} {_f(s['ms'], 4):>8} "
                  f"{_f(s['tflops'], 1):>8} {_f(s['x_ref'], 3):>6} {s['per_round']:>17}  {s['note']}")


# --------------------------------------------------------------------------- warm-up

def _warm(task: str) -> str:
    """Runs in a worker process: compiles the Triton kernels of one task into Triton's cache
    (same specialisations as the measured calls: sizes divisible by 16, unit inner strides),
    so the measuring process finds them compiled. Returns what it did, or the error."""
    import torch
    t0 = time.monotonic()
    try:
        if task.startswith("batched:"):
            from triton_impl import matmul_batched as mb
            precision = task.split(":")[1]
            dtype = _dtype(precision)
            for lead in ((), (16,)):       # 2-D (batch 1) and a stack, like the two cases
                a = torch.randn(*lead, 512, 512, device="cuda").to(dtype)
                b = torch.randn(*lead, 512, 512, device="cuda").to(dtype)
                mb.matmul(a, b, precision)
                mb.matmul(a, b, precision, tma=False)
        elif task == "tf32":
            from bench import registry
            a = torch.randn(512, 512, device="cuda")
            registry.get("triton_persistent").runner("tf32")(a, a)
        elif task.startswith("softmax:"):
            _, precision, shapes, keep = task.split(":", 3)
            dtype = _dtype(precision)
            elem = torch.empty((), dtype=dtype).element_size()
            small = [tuple(int(d) for d in text.split("x")) for text, _mode in SMALL_CHECKS]
            for _rows, n in parse_shapes(shapes):
                for v in softmax_variants(n, elem, keep=keep):
                    if not v["name"].startswith("triton"):
                        continue
                    fn = v["make"]()
                    # the measured rows (16 of them: the same specialisation as 4096), then
                    # the small checks' shapes, which the variants also run
                    shapes = [(16, n)] + ([s for s in small if s[1] <= v["max_n"]]
                                          if v["kind"] == "variant" else [])
                    for shape in shapes:
                        fn(torch.randn(*shape, device="cuda").to(dtype))
        torch.cuda.synchronize()
        return f"{task}: compiled in {time.monotonic() - t0:.0f} s"
    except Exception as exc:  # noqa: BLE001 - the measuring process compiles what is missing
        return f"{task}: warm-up failed ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"


def start_warmup(sections, keep: str = "", shapes: str = "") -> object:
    import concurrent.futures
    import multiprocessing
    tasks = []
    if "batched" in sections:
        tasks += [f"batched:{p}" for p in BATCHED_PRECISIONS]
    if "tf32" in sections:
        tasks.append("tf32")
    if "softmax" in sections:
        tasks += [f"softmax:{p}:{shapes}:{keep}" for p in SOFTMAX_DTYPES]
    if not tasks:
        return None
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=len(tasks), mp_context=multiprocessing.get_context("spawn"))
    return pool, [pool.submit(_warm, t) for t in tasks]


# --------------------------------------------------------------------------- main

def plan(sections, quick, keep: str = "", shapes=SOFTMAX_SHAPES) -> list[str]:
    """What a run measures, without a GPU (--plan)."""
    lines = []
    if "softmax" in sections:
        for rows, n in shapes:
            for precision in SOFTMAX_DTYPES:
                elem = 4 if precision == "fp32" else 2
                names = [v["name"] for v in softmax_variants(n, elem, quick, keep)]
                lines.append(f"softmax {rows}x{n} {precision}: {', '.join(names)}")
    if "tf32" in sections:
        for size in TF32_SIZES:
            lines.append(f"tf32 {size}^3: cublas, triton_persistent x harness, flush_only, "
                         f"equal_spin_1ms, do_bench (+ uniform inputs, TF32 allowed globally)")
    if "batched" in sections:
        for case, *_ in BATCHED_CASES:
            lines.append(f"batched {case} {'/'.join(BATCHED_PRECISIONS)}: reference, "
                         f"triton_batched (tf32: the Gluon swap, 3-D TMA; fp16/bf16: "
                         f"autotuned), tf32 also triton_batched pointer (the autotuned pointer kernel)")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder for debts.csv, table.txt, env.json")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated, in this order: {','.join(SECTIONS)}")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (tf32: at least 5)")
    ap.add_argument("--quick", action="store_true", help="defaults and the main variants only")
    ap.add_argument("--plan", action="store_true", help="print what would be measured and stop")
    ap.add_argument("--softmax-shapes", default=format_shapes(SOFTMAX_SHAPES), metavar="RxN,...",
                    help="softmax: the shapes (rows x n), default %(default)s")
    ap.add_argument("--variants", default="", metavar="REGEX",
                    help="softmax: only the kernels whose names this regular expression finds "
                         "(and torch.softmax, the reference)")
    args = ap.parse_args(argv)
    try:
        re.compile(args.variants)
    except re.error as exc:
        ap.error(f"--variants: not a regular expression: {args.variants!r} ({exc})")
    try:
        shapes = parse_shapes(args.softmax_shapes)
    except ValueError as exc:
        ap.error(f"--softmax-shapes: {exc}")
    sections = [s for s in args.sections.split(",") if s]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        ap.error(f"unknown sections {unknown}; choose from {SECTIONS}")
    if args.plan:
        print("\n".join(plan(sections, args.quick, args.variants, shapes)))
        return 0

    import torch
    if not torch.cuda.is_available():
        print("debts_h100: needs a CUDA GPU", file=sys.stderr)
        return 2
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 8))
    out = Out(args.out)
    from bench import device as dev
    from bench import env as env_mod
    dev.setup()
    env = env_mod.environment("cuda")
    out.say(f"{env.get('gpu')}, driver {env.get('driver')}, torch {env.get('torch')}, triton "
            f"{env.get('triton')}, git {env.get('git_sha')}, SM clock {env.get('sm_clock_mhz_before')} MHz")

    warm = start_warmup(sections, args.variants, format_shapes(shapes))
    if "softmax" in sections:
        t0 = time.monotonic()
        import bindings
        bindings.ops()
        out.say(f"CUDA ops loaded in {time.monotonic() - t0:.0f} s")
    if warm:
        pool, futures = warm
        for f in futures:
            try:
                out.say(f.result())
            except Exception as exc:  # noqa: BLE001 - a crashed worker: compile here instead
                out.say(f"warm-up worker failed: {type(exc).__name__}: {exc}")
        pool.shutdown()

    from bench.ceilings import copy_bandwidth
    from bench.timing import L2Flusher, Policy
    flush = L2Flusher(dev.l2_cache_bytes())
    copy = copy_bandwidth(flush, Policy(min_reps=20))
    out.say(f"copy bandwidth {copy['copy_gbps']:.0f} GB/s (read + write, 1 GiB)")
    out.row(section="ceiling", variant="copy 1 GiB", method="harness", ms=copy["copy_ms"],
            metric=copy["copy_gbps"], unit="GB/s", status="ok")
    # a shorter policy than make report's (0.4 s per measurement): rounds average instead
    timer = Timer(flush, Policy(target_s=0.15, min_reps=10, max_reps=100, budget_s=1.5,
                                warmup_s=0.03))
    for section in sections:
        try:
            if section == "softmax":
                run_softmax(out, timer, copy["copy_gbps"], args.rounds, args.quick,
                            args.variants, shapes)
            elif section == "tf32":
                run_tf32(out, timer, max(5, args.rounds), args.quick)
            elif section == "batched":
                run_batched(out, timer, args.rounds, args.quick)
        except Exception:  # noqa: BLE001 - keep what the other sections measured
            out.say(f"{section}: failed")
            traceback.print_exc()
    copy_after = copy_bandwidth(flush, Policy(min_reps=20))
    out.table(f"\ncopy bandwidth: {copy['copy_gbps']:.0f} GB/s before, "
              f"{copy_after['copy_gbps']:.0f} GB/s after")
    env_mod.finish(env)
    env.update(copy_before=copy, copy_after=copy_after, seconds=round(time.monotonic() - out.t0))
    out.close(env)
    out.say(f"done: {args.out / 'debts.csv'}, {args.out / 'table.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
