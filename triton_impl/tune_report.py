"""`python -m triton_impl.tune_report --out DIR`: triton_autotuned against cuBLAS on the GPU.

For each precision, at N x N x N (4096 by default), in one run:
  1. fresh random inputs (torch.randn, not zeros: the tensor cores' power depends on data);
  2. the autotuned op once, which tunes (not timed), and a correctness check against the
     float64 reference with the suite's bound (bench/problems.py);
  3. triton.testing.do_bench (median of runs with an L2 flush between them) of the op and
     of torch.matmul (cuBLAS; TF32 switched on for the tf32 label only);
  4. the ratio against the target, the winning configuration (kernel.best_config) and
     every candidate's tuning time.
Then the tf32 diagnosis (see matmul_autotuned's header): three single configurations at
the same size, which show where TF32 time goes:
  tf32 row-major B, A @ B       B is MN-major: Triton transposes it through registers and
                                cannot pipeline it (the tutorial's case)
  tf32 column-major B, A @ B    B is K-major in memory: nothing to transpose
  tf32 row-major B, B^T A^T     the fix: B^T from registers, A^T pipelined

Writes DIR/tune_report.json. Needs a CUDA GPU; a run takes about two minutes on an H100,
most of it compiling the candidates.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

TARGETS = {"fp32": 0.95, "tf32": 0.90, "fp16": 0.98, "bf16": 0.98}
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


def _cublas(precision: str):
    import torch

    def run(a, b):
        old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        try:
            return torch.matmul(a, b)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = old

    return run


def _inputs(n: int, precision: str, seed: int, b_column_major: bool = False):
    import torch

    from bench.problems import input_dtype

    g = torch.Generator(device="cuda").manual_seed(seed)
    dtype = input_dtype(precision)
    a = torch.randn(n, n, device="cuda", generator=g).to(dtype)
    if b_column_major:
        b = torch.randn(n, n, device="cuda", generator=g).to(dtype).T  # K-major view
    else:
        b = torch.randn(n, n, device="cuda", generator=g).to(dtype)
    return a, b


def _tflops(n: int, ms: float) -> float:
    return 2 * n**3 / (ms * 1e-3) / 1e12


def _median_ms(fn) -> float:
    """Median milliseconds of fn, timed by triton.testing.do_bench (L2 flushed between runs)."""
    import triton

    return float(triton.testing.do_bench(fn, return_mode="median"))


def _config_text(cfg) -> str:
    if cfg is None:
        return "-"
    kw = dict(getattr(cfg, "kwargs", {}))
    kw.update(num_warps=getattr(cfg, "num_warps", None), num_stages=getattr(cfg, "num_stages", None))
    return " ".join(f"{k}={v}" for k, v in kw.items())


def tune(n: int, precisions, seed: int) -> list[dict]:
    import torch

    from bench.problems import matmul_error, matmul_tolerance
    from triton_impl import matmul_autotuned

    rows = []
    for precision in precisions:
        a, b = _inputs(n, precision, seed)
        op = matmul_autotuned.op()
        t0 = time.time()
        out = op(a, b, precision)                 # tunes on first call at this (M, N, K)
        torch.cuda.synchronize()
        tune_s = time.time() - t0
        err = matmul_error(out, a, b)
        bound = matmul_tolerance(precision, n)
        kernel = matmul_autotuned.kernel_for(precision)
        triton_ms = _median_ms(lambda: op(a, b, precision))
        cublas = _cublas(precision)
        cublas_ms = _median_ms(lambda: cublas(a, b))
        timings = getattr(kernel, "configs_timings", None) or {}
        candidates = sorted(
            ({"config": _config_text(c), "ms": (t[0] if isinstance(t, (list, tuple)) else t)}
             for c, t in timings.items()), key=lambda r: r["ms"])
        ratio = cublas_ms / triton_ms
        rows.append(dict(
            precision=precision, n=n, triton_ms=triton_ms, cublas_ms=cublas_ms,
            triton_tflops=_tflops(n, triton_ms), cublas_tflops=_tflops(n, cublas_ms),
            ratio=ratio, target=TARGETS[precision], meets_target=ratio >= TARGETS[precision],
            best_config=_config_text(kernel.best_config), tuning_s=tune_s,
            max_rel_error=err, error_bound=bound, correct=err <= bound, candidates=candidates))
        del a, b, out
        torch.cuda.empty_cache()
    return rows


def diagnose_tf32(n: int, seed: int) -> list[dict]:
    """The three tf32 cases of the module doc, each one configuration, plus cuBLAS."""
    from triton_impl import matmul_autotuned, tiles

    base = dict(tiles.AUTOTUNE_CONFIGS["tf32"][0])
    cases = [("row-major B, A @ B (tutorial)", False, dict(base, B_FROM_REGISTERS=False)),
             ("column-major B, A @ B", True, dict(base, B_FROM_REGISTERS=False)),
             ("row-major B, C^T = B^T A^T (fix)", False, dict(base, B_FROM_REGISTERS=True))]
    cublas = _cublas("tf32")
    rows = []
    for label, col_major, cfg in cases:
        a, b = _inputs(n, "tf32", seed, b_column_major=col_major)
        try:
            ms = _median_ms(lambda: matmul_autotuned.matmul(a, b, "tf32", config=cfg))
            note = ""
        except Exception as exc:  # noqa: BLE001 - report a failing candidate, keep going
            ms, note = math.nan, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        cublas_ms = _median_ms(lambda: cublas(a, b))
        rows.append(dict(case=label, config=" ".join(f"{k}={v}" for k, v in cfg.items()),
                         ms=ms, tflops=_tflops(n, ms) if ms == ms else math.nan,
                         cublas_ms=cublas_ms, ratio=cublas_ms / ms if ms == ms else math.nan,
                         note=note))
    return rows


def _environment() -> dict:
    import torch
    import triton

    env = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
               triton=triton.__version__, cuda=torch.version.cuda)
    try:
        from bench import env as bench_env

        env["git_sha"] = bench_env.git_sha()
    except Exception:  # noqa: BLE001 - environment facts are best effort
        pass
    return env


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m triton_impl.tune_report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="directory for tune_report.json")
    p.add_argument("--n", type=int, default=4096, help="M = N = K (default 4096)")
    p.add_argument("--precision", default=",".join(PRECISIONS))
    p.add_argument("--no-diagnose", action="store_true", help="skip the tf32 diagnosis")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("tune_report: needs a CUDA GPU (autotuning times kernels)", file=sys.stderr)
        return 2
    precisions = [x.strip() for x in args.precision.split(",") if x.strip()]
    t0 = time.time()
    rows = tune(args.n, precisions, args.seed)
    print(f"triton_autotuned vs cuBLAS at {args.n}^3 ({torch.cuda.get_device_name()})")
    print(f"{'prec':5} {'triton TFLOP/s':>14} {'cuBLAS TFLOP/s':>14} {'ratio':>6} {'target':>6}"
          f"  {'ok':3} {'err/bound':>9}  best config")
    for r in rows:
        print(f"{r['precision']:5} {r['triton_tflops']:14.1f} {r['cublas_tflops']:14.1f} "
              f"{r['ratio']:6.3f} {r['target']:6.2f}  {'yes' if r['meets_target'] else 'NO':3} "
              f"{r['max_rel_error'] / r['error_bound']:9.2e}  {r['best_config']}")
    for r in rows:
        print(f"\n{r['precision']}: candidates (tuning median ms), tuned in {r['tuning_s']:.1f} s")
        for c in r["candidates"]:
            print(f"  {c['ms']:8.3f}  {c['config']}")
    diagnosis = []
    if not args.no_diagnose and "tf32" in precisions:
        diagnosis = diagnose_tf32(args.n, args.seed)
        print(f"\ntf32 diagnosis at {args.n}^3 (one config each):")
        for d in diagnosis:
            print(f"  {d['case']:34} {d['tflops']:7.1f} TFLOP/s  {d['ratio']:6.3f} x cuBLAS "
                  f"{d['note']}")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "tune_report.json")
    with open(path, "w") as f:
        json.dump(dict(environment=_environment(), n=args.n, results=rows, tf32_diagnosis=diagnosis,
                       wall_s=time.time() - t0), f, indent=2)
    print(f"\nwrote {path} ({time.time() - t0:.0f} s)")
    bad = [r["precision"] for r in rows if not r["correct"]]
    if bad:
        print(f"tune_report: WRONG results at {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
