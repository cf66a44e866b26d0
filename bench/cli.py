"""`python -m bench`: the command line of the harness.

    python -m bench list                                  every kernel, with backend and version
    python -m bench check --kernels 'cuda_*' --shapes 1000x999x37,1x1x1 [--exact] [--nonfinite]
    python -m bench time --kernels '*' --out results/h100          (GPU) timings + ceilings
    python -m bench model --kernels 'cuda_v3*' --shape 4096x4096x4096  closed-form traffic
    python -m bench profile --kernels 'cuda_*' --shapes 1024x1024x1024 --out DIR  (GPU + ncu)
    python -m bench plot --results DIR --out DIR/figures          figures from result files
    python -m bench report --out DIR [--quick]                    everything, plus report.md
    python -m bench readme-table                                  the README's ladder table

Shapes default to each op's defaults for this machine (bench/problems.py). Kernel globs
are comma-separated fnmatch patterns over the names `list` shows.
"""
from __future__ import annotations

import argparse
import math
import sys

from bench import registry

# The matmul check shapes on a GPU (kept for callers that import it; see bench/problems.py).
DEFAULT_CHECK_SHAPES = "1x1x1,17x13x7,64x64x64,127x129x31,256x256x256"


def _table(headers: list[str], rows: list[list]) -> str:
    text = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) if text else len(h)
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in text])


def _select(pattern, what: str):
    try:
        kernels = registry.select(pattern)
    except KeyError as e:
        print(f"bench {what}: {e.args[0]}", file=sys.stderr)
        return []
    if not kernels:
        print(f"bench {what}: no kernel matches {pattern!r}; `python -m bench list` shows them",
              file=sys.stderr)
    return kernels


def cmd_list(args) -> int:
    rows = []
    for k in registry.select(args.kernels, include_wrong=True):
        rows.append([k.name, k.backend, k.version, ",".join(k.precisions), k.twin or "-",
                     k.summary])
    print(_table(["kernel", "backend", "version", "precisions", "twin", "summary"], rows))
    return 0


def _fmt_err(x: float) -> str:
    return "-" if math.isnan(x) else ("inf" if math.isinf(x) else f"{x:.2e}")


def cmd_check(args) -> int:
    from bench import check, device, results
    from bench import env as env_mod

    dev = device.setup()
    kernels = _select(args.kernels, "check")
    if not kernels:
        return 2
    precisions = args.precision.split(",") if args.precision else None
    res = check.run(kernels, args.shapes, precisions, exact=args.exact, seed=args.seed,
                    device=dev, nonfinite=args.nonfinite)
    rows = [[r.kernel, r.shape, r.precision, r.mode, _fmt_err(r.error),
             _fmt_err(r.tolerance) if r.mode != "exact" else "0", r.status, r.note]
            for r in res]
    print(f"device: {dev}")
    print(_table(["kernel", "shape", "prec", "mode", "max rel err", "bound", "status", "note"],
                 rows))
    failed = [r for r in res if r.failed]
    ran = [r for r in res if r.status != "skip"]
    print(f"\n{len(ran) - len(failed)} passed, {len(failed)} failed, "
          f"{len(res) - len(ran)} skipped")
    if args.out:
        results.write(args.out, "check", [r.as_dict() for r in res],
                      env=env_mod.environment(dev))
    if not ran:
        print("bench check: nothing could run here", file=sys.stderr)
        return 1
    return 1 if failed else 0


def cmd_time(args) -> int:
    from bench import device, perf, results
    from bench.timing import Policy

    if device.setup() != "cuda":
        print("bench time: needs a CUDA GPU. Without one, Triton runs through its "
              "interpreter, whose timings say nothing about a GPU; use `bench check` and "
              "`bench model` here.", file=sys.stderr)
        return 2
    kernels = _select(args.kernels, "time")
    if not kernels:
        return 2
    precisions = args.precision.split(",") if args.precision else None
    policy = Policy(target_s=0.15, budget_s=2.0) if args.quick else Policy()
    try:
        shapes = perf.parse_shapes_arg(args.shapes)
    except ValueError as exc:
        print(f"bench time: {exc}", file=sys.stderr)
        return 2
    old = results.read(args.out, "time") if args.append else None
    stored = ((old or {}).get("meta") or {}).get("ceilings") or None
    rows, env, ceilings = perf.run(kernels, shapes, precisions, policy,
                                   measure_ceilings=not args.no_ceilings, ceilings=stored)
    all_rows = rows
    if old:  # keep the earlier rows; a re-timed kernel x shape x precision replaces its old row
        key = lambda r: (r.get("kernel"), r.get("shape"), r.get("precision"))
        new = {key(r) for r in rows}
        all_rows = [r for r in old["rows"] if key(r) not in new] + rows
        ceilings = ceilings or stored or {}
    csv_path, _ = results.write(args.out, "time", all_rows, env=env, meta={"ceilings": ceilings})
    ok = [r for r in rows if r.get("status") == "ok"]
    print(_table(["kernel", "shape", "prec", "median ms", "IQR ms", "TFLOP/s", "% cuBLAS",
                  "% roof", "GB/s compulsory"],
                 [[r["kernel"], r["shape"], r["precision"], perf.fmt(r["median_ms"], 4),
                   perf.fmt(r["iqr_ms"], 4), perf.fmt(r["tflops"], 2),
                   perf.fmt(r["pct_reference"]), perf.fmt(r["pct_roof"]),
                   perf.fmt(r["gbps_compulsory"], 0)] for r in ok]))
    if ceilings:
        print(f"\nceilings: copy {ceilings['copy_gbps']:.0f} GB/s; cuBLAS "
              + (", ".join(f"{p} {t:.1f}" for p, t in ceilings["cublas_tflops"].items())
                 or "not measured (no matmul timed)")
              + f" TFLOP/s at {ceilings['cublas_shape']}")
    print(f"wrote {csv_path} and time.json")
    return 1 if len(ok) < len([r for r in rows if r.get("status") != "skip"]) else 0


def cmd_model(args) -> int:
    from bench import model_table, results

    kernels = [k for k in _select(args.kernels, "model") if k.model is not None]
    if not kernels:
        print("bench model: none of the selected kernels has a traffic model", file=sys.stderr)
        return 2
    shapes = args.shape or args.shapes
    try:
        rows = model_table.rows(kernels, shapes)
    except ValueError as exc:
        print(f"bench model: {exc}", file=sys.stderr)
        return 2
    for r in rows:
        print(f"{r['kernel']}  {r['shape']}  tile parameters: {r['params']}"
              + (f"  lecture: {r['formula']}" if r.get("formula") else ""))
        table = []
        for label, el, by in (("global loads (issued by threads)", "global_loads",
                               "global_load_bytes"),
                              ("global stores", "global_stores", "global_store_bytes"),
                              ("shared-memory loads", "shared_loads", "shared_load_bytes")):
            table.append([label, f"{r[el]:,}", f"{r[by]:,}"])
        table.append(["compulsory DRAM (read + write)", "-", f"{r['compulsory_bytes']:,}"])
        table.append(["FMAs executed (tile padding included)", f"{r['fma']:,}", "-"])
        table.append(["useful FLOPs (2*M*N*K)", f"{r['useful_flops']:,}", "-"])
        if r.get("lecture_global_loads") is not None:
            table.append(["lecture formula, global loads", f"{r['lecture_global_loads']:,}", "-"])
        print(_table(["quantity", "elements", "bytes"], table))
        print()
    if args.out:
        results.write(args.out, "model", rows)
    return 0


def cmd_profile(args) -> int:
    from bench import device, profile, results
    from bench import env as env_mod

    ncu = profile.find_ncu()
    if ncu is None:
        print("bench profile: Nsight Compute (ncu) is not on PATH nor in /usr/local/cuda/bin; "
              "nothing to do (install Nsight Compute, or use `bench model` for the models)",
              file=sys.stderr)
        return 0
    if device.setup() != "cuda":
        print("bench profile: needs a CUDA GPU", file=sys.stderr)
        return 0
    explicit = args.kernels not in (None, "*")
    kernels = [k for k in _select(args.kernels, "profile")
               if explicit or k.backend not in profile.REFERENCE_BACKENDS]
    if not kernels:
        return 2
    precisions = args.precision.split(",") if args.precision else None
    old = results.read(args.out, "profile") if args.append else None
    env = env_mod.environment("cuda")

    def merged(rows, meta):
        """Earlier rows (other shapes/kernels) plus these; a re-profiled one replaces its old row."""
        if not old:
            return rows, meta
        key = lambda r: (r["kernel"], r["shape"], r["precision"])
        new = {key(r) for r in rows}
        meta = dict(meta, dropped_metrics=sorted(set(meta["dropped_metrics"])
                                                 | set(old["meta"].get("dropped_metrics") or [])))
        return [r for r in old["rows"] if key(r) not in new] + rows, meta

    def checkpoint(rows, meta):
        all_rows, all_meta = merged(rows, meta)
        results.write(args.out, "profile", all_rows, env=env, meta=all_meta)

    rows, meta = profile.run(kernels, args.shapes, precisions, args.out, ncu, checkpoint=checkpoint,
                             batch=not args.one_process_per_kernel)
    checkpoint(rows, meta)
    all_rows, meta = merged(rows, meta)
    print(_table(["kernel", "shape", "prec", "model loads", "issued", "issued/model",
                  "L1 bytes", "L2 bytes", "DRAM read", "FFMA", "target", "note"],
                 [[r["kernel"], r["shape"], r["precision"], r.get("model_global_loads") or "-",
                   f"{r.get('issued_elements', math.nan):.0f}",
                   f"{r.get('ratio_issued', math.nan):.4f}",
                   f"{r.get('l1_bytes', math.nan):.0f}", f"{r.get('l2_bytes', math.nan):.0f}",
                   f"{r.get('dram_read_bytes', math.nan):.0f}", f"{r.get('ffma', math.nan):.0f}",
                   r.get("target", "-"), (r.get("note") or "")[:60]] for r in rows]))
    if meta["dropped_metrics"]:
        print("dropped (unknown to this ncu): " + ", ".join(meta["dropped_metrics"]))
    print(f"wrote {args.out}/profile.csv, profile.json and ncu/*.ncu-rep")
    return 1 if any(r.get("target") == "FAIL" or r.get("status") != "ok" for r in rows) else 0


def cmd_plot(args) -> int:
    from bench import plots

    made = plots.all_figures(args.results, args.out)
    if not made:
        print(f"bench plot: no result files in {args.results}", file=sys.stderr)
        return 2
    for name, paths in made.items():
        print(f"{name}: " + ", ".join(str(p) for p in paths))
    return 0


def cmd_report(args) -> int:
    from bench import plots, report

    if args.replot:  # redraw figures and report.md from the files already in --out
        figures = plots.all_figures(args.out, f"{args.out}/figures")
        print(report.write_markdown(args.out, figures))
        return 0
    return report.run(args.out, quick=args.quick, patterns=args.kernels)


def readme_table() -> str:
    """The README's ladder table, from the registry (CUDA ladder rows and their twins)."""
    rows = []
    names = registry.by_name()
    for k in registry.kernels():
        if k.backend != "cuda" or k.op != "matmul":
            continue
        twin = f"`{k.twin}`" if k.twin and k.twin in names else (f"none: {k.twin_note}" if k.twin_note else "-")
        rows.append([k.version, f"`{k.name}`", twin, k.summary, k.formula or "-"])
    head = ["version", "CUDA kernel", "Triton twin", "idea",
            "traffic model (elements read from global memory, N×N×N)"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n\n" + memory_table()


def memory_table() -> str:
    """The README's table of the memory-bound kernels (every record, references and the
    deliberately wrong copies included)."""
    from bench.problems_memory import is_memory_op

    head = ["op", "kernel", "backend", "version", "precisions", "what it is", "traffic"]
    rows = [[k.op, f"`{k.name}`", k.backend, k.version, ", ".join(k.precisions), k.summary,
             k.formula or "-"] for k in registry.kernels() if is_memory_op(k.op)]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def cmd_readme_table(args) -> int:
    print(readme_table())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="every registered kernel")
    s.add_argument("--kernels", default=None, help="comma-separated globs (default: all)")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("check", help="correctness against a float64 reference")
    s.add_argument("--kernels", default="*", help="comma-separated globs, e.g. 'cuda_*,triton_v3*'")
    s.add_argument("--shapes", default=None,
                   help="MxNxK[,MxNxK...] (default: the op's shapes for this machine)")
    s.add_argument("--precision", default=None, help="fp32,tf32,fp16,bf16 (default: all supported)")
    s.add_argument("--exact", action="store_true", help="also run the exact small-integer mode")
    s.add_argument("--nonfinite", action="store_true",
                   help="also check that a NaN and an inf in the inputs reach the output")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", default=None, help="also write check.csv/json to this directory")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("time", help="(GPU) timings, ceilings, %% cuBLAS; writes time.csv/json")
    s.add_argument("--kernels", default="*")
    s.add_argument("--shapes", default=None,
                   help="shapes for every op, or per op: 'copy=67108864;softmax=4096x32768' "
                        "(default: each op's time shapes)")
    s.add_argument("--precision", default=None)
    s.add_argument("--out", default="results")
    s.add_argument("--quick", action="store_true", help="fewer repetitions")
    s.add_argument("--no-ceilings", action="store_true",
                   help="skip copy/cuBLAS ceilings (with --append: reuse the stored ones)")
    s.add_argument("--append", action="store_true",
                   help="add to the time.json already in --out instead of replacing it")
    s.set_defaults(func=cmd_time)

    s = sub.add_parser("model", help="closed-form traffic of each kernel at a shape")
    s.add_argument("--kernels", default="*")
    s.add_argument("--shape", default=None, help="MxNxK")
    s.add_argument("--shapes", default=None, help="MxNxK[,...] (default: 1024^3 and 4096^3)")
    s.add_argument("--out", default=None, help="also write model.csv/json to this directory")
    s.set_defaults(func=cmd_model)

    s = sub.add_parser("profile", help="(GPU + ncu) counters per level next to the model")
    s.add_argument("--kernels", default="*")
    s.add_argument("--shapes", default=None, help="default: 1024x1024x1024")
    s.add_argument("--precision", default=None, help="default: each kernel's first precision")
    s.add_argument("--out", default="results")
    s.add_argument("--one-process-per-kernel", action="store_true",
                   help="profile each kernel in its own ncu process (default: one batch, then "
                        "a process of its own for any kernel that failed in the batch)")
    s.add_argument("--append", action="store_true",
                   help="add to the profile.json already in --out instead of replacing it")
    s.set_defaults(func=cmd_profile)

    s = sub.add_parser("plot", help="figures from a result directory")
    s.add_argument("--results", required=True)
    s.add_argument("--out", default=None, help="default: RESULTS/figures")
    s.set_defaults(func=cmd_plot)

    s = sub.add_parser("report", help="run the default suite; write files, figures, report.md")
    s.add_argument("--out", required=True)
    s.add_argument("--quick", action="store_true", help="fewer shapes and repetitions")
    s.add_argument("--kernels", default=None, help="globs (default: every kernel)")
    s.add_argument("--replot", action="store_true",
                   help="only redraw figures and report.md from the files in --out")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("readme-table", help="print the README's ladder table (markdown)")
    s.set_defaults(func=cmd_readme_table)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "command", None) == "plot" and args.out is None:
        args.out = f"{args.results}/figures"
    return args.func(args)
