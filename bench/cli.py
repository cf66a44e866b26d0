"""`python -m bench`: the command line of the harness.

    python -m bench list                                 every kernel, its backend and summary
    python -m bench check --kernels 'cuda_*' --shapes 1000x999x37,1x1x1 [--exact] [-v]
    python -m bench time --kernels '*'                   (GPU) timings + ceilings
    python -m bench model --kernels 'cuda_v3*' --shape 4096x4096x4096   closed-form traffic
    python -m bench profile --kernels 'cuda_*' --shapes 1024x1024x1024  (GPU + ncu) counters
    python -m bench plot --results results/h100 --out DIR  figures from a result set
    python -m bench report [--quick]                     everything, plus report.md
    python -m bench compare results/h100 results/h200    two result sets side by side
    python -m bench readme-table                         the kernel tables (docs/kernels.md)
    python -m bench docs [--check]                       the docs' numbers from their result sets
    python -m bench results-readme results/h100 [--check]  a set's README.md from its files
    python -m bench lab list | lab start N DIR           the course labs (docs/labs.md)
    python -m bench grade N FILE... [--out DIR]          grade submissions of lab N

Output: tables on stdout, no wider than 100 columns; progress on stderr (a bar on a
terminal, a line every tenth of the work or every 15 s in a log). `check` prints the
failures and a summary (-v: every run); `model` one row per kernel x shape x precision
(-v: every quantity in full).

Files: time, profile and report write into results/local unless --out says otherwise;
check and model only with --out; plot into RESULTS/figures; compare into
results/local/compare. A command that writes a result set ends with its README.md: the
commands, commit, machine, date and files, from the set's files (bench/set_readme.py).

Shapes default to each op's defaults for this machine (bench/problems.py); --shapes takes
one list for every op or one per op ('matmul=1024x1024x1024;softmax=4096x32768:dim=0').
Kernel globs are comma-separated fnmatch patterns over the names `list` shows, or groups
(@ladder, @matmul, @memory).

Every argument is checked before any work and before any file is written. A command that
writes results refuses a folder that already holds the files it would write (--force
replaces them, --append adds rows measured in the same environment), and never puts files
of two environments in one folder (bench/results.py).

Exit status: 0 done; 1 some kernel failed its check (or a timing, or a profiling target);
2 bad arguments, an unusable output folder or result file, or what the command needs is
missing here (a GPU, Nsight Compute, access to the GPU's counters).
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys

from bench import registry, terminal
from bench.text import binary_bytes, f, sci


class UsageError(Exception):
    """A bad argument: the command stops before any work with exit status 2."""


def _did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.5)
    return f"; did you mean {' or '.join(close)}?" if close else ""

def _select(pattern):
    """The kernels a --kernels argument selects; UsageError (with a did-you-mean for each
    pattern that matches nothing) if it selects none or names an unknown group."""
    try:
        kernels = registry.select(pattern)
    except KeyError as e:
        group = next((p.strip() for p in (pattern or "").split(",")
                      if p.strip().startswith("@") and p.strip()[1:] not in registry.groups()), "")
        raise UsageError(e.args[0] + _did_you_mean(group, ["@" + g for g in registry.groups()]))
    if not kernels:
        names = [k.name for k in registry.select("*", include_wrong=True)]
        hints = "".join(_did_you_mean(p.strip(), names + ["@" + g for g in registry.groups()])
                        for p in (pattern or "").split(",") if p.strip())
        raise UsageError(f"no kernel matches {pattern!r}{hints or ''}"
                         f" (`python -m bench list` shows them)")
    return kernels


def _rounds(text: str) -> int:
    """--alternate R: a whole number of rounds, 0 (off) to 20."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"rounds must be a whole number, got {text!r}") from None
    if not 0 <= value <= 20:
        raise argparse.ArgumentTypeError(f"rounds must be 0 to 20, got {value}")
    return value


def _precisions(text: str | None, kernels) -> list[str] | None:
    """--precision as a list (None: every precision each kernel supports), checked against
    the precision table and against what the selected kernels support."""
    if not text:
        return None
    known = list(registry.PRECISIONS)
    asked = [p.strip() for p in text.split(",") if p.strip()]
    for p in asked:
        if p not in known:
            raise UsageError(f"unknown precision {p!r}; precisions: {', '.join(known)}"
                             + _did_you_mean(p, known))
    if not any(p in k.precisions for k in kernels for p in asked):
        raise UsageError(f"none of the selected kernels runs at {', '.join(asked)} (they "
                         f"support {', '.join(sorted({p for k in kernels for p in k.precisions}))})")
    return asked


def _suite_spec(name: str, kernels) -> dict[str, str]:
    """--suite NAME: op -> the shapes of the suite of that name of each selected op that has
    one (Problem.suites); a usage error naming the suites there are when none has it."""
    from bench import problems

    ops = [op for op in dict.fromkeys(k.op for k in kernels) if problems.known(op)]
    spec = {op: problems.get(op).suites[name] for op in ops if name in problems.get(op).suites}
    if not spec:
        known = sorted({f"{s} ({op})" for op in ops for s in problems.get(op).suites})
        raise UsageError(f"--suite {name}: no selected op has a suite of that name; there "
                         f"are: {', '.join(known) or 'none'}")
    return spec


def _shapes(text: str | None, kernels, default_attr: str, suite: str | None = None):
    """--shapes (or --suite) parsed and checked for every op of the selected kernels, before
    any work: None (defaults), one text for every op, or a dict op -> text."""
    from bench import problems

    if suite is not None:
        if text:
            raise UsageError("give --shapes or --suite, not both")
        return _suite_spec(suite, kernels)
    try:
        spec = problems.parse_shapes_spec(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if spec is None:
        return None
    ops = [op for op in dict.fromkeys(k.op for k in kernels) if problems.known(op)]
    errors, fitting = [], []
    for op in ops:
        problem = problems.get(op)
        try:
            if problems.shapes_for(problem, spec, getattr(problem, default_attr, None)) is not None:
                fitting.append(op)
        except ValueError as exc:
            errors.append(f"{op} ({problem.shape_help}): {exc}")
    if isinstance(spec, dict):
        unused = [op for op in spec if op not in ops]
        if errors:
            raise UsageError("--shapes: " + "; ".join(errors))
        if unused:
            raise UsageError(f"--shapes names {', '.join(unused)}, but no selected kernel is "
                             f"of that op (selected ops: {', '.join(ops)})")
    elif not fitting:
        raise UsageError("--shapes fits none of the selected ops: " + "; ".join(errors))
    return spec


def _guard(out, kinds, env, args, command: str):
    from bench import results

    return results.guard_out(out, kinds, env, force=getattr(args, "force", False),
                             append=getattr(args, "append", False), command=command)


def _command(args) -> str | None:
    """The command line being run, as the result files record it (bench/results.py)."""
    return getattr(args, "command_line", None)


def _write_readme(out) -> None:
    """The README.md of the result set in out, from its files (bench/set_readme.py)."""
    from bench import set_readme

    print(f"wrote {set_readme.write(out)}")


def list_text(kernels) -> str:
    """`bench list`: one row per kernel, its summary (and twin) on the line under it."""
    rows = [[k.name, k.backend, k.version, ",".join(k.precisions)] for k in kernels]
    notes = [k.summary + (f" (twin: {k.twin})" if k.twin else "") for k in kernels]
    return terminal.table(["kernel", "backend", "version", "precisions"], rows, notes)


def cmd_list(args) -> int:
    if args.markdown:
        from bench import kernels

        print(kernels.markdown())
        return 0
    print(list_text(registry.select(args.kernels, include_wrong=True)))
    return 0


def check_text(res, verbose: bool = False) -> str:
    """What `bench check` prints: the failed runs (every run with verbose), each failure's
    diagnosis under its row; the skipped runs as one line per reason; a one-line summary."""
    from bench import check

    failed = [r for r in res if r.failed]
    ran = [r for r in res if r.status != "skip"]
    shown = ran if verbose else failed
    parts = []
    if shown:
        parts.append(terminal.table(
            ["kernel", "shape", "prec", "mode", "error", "bound", "status"],
            [[r.kernel, r.shape, r.precision, r.mode, sci(r.error),
              sci(r.tolerance) if r.mode != "exact" else "0", r.status] for r in shown],
            notes=[r.note for r in shown], right={4, 5}))
    groups = check.skipped_by_reason(res)
    if groups:
        lines = ["skipped (not failures):"]
        for why, kernels, runs in groups:
            lines.append(terminal.wrap(
                f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''}, {runs} "
                f"run{'s' if runs != 1 else ''}: {why}", indent="  ", hanging="    "))
            if verbose:
                lines.append(terminal.wrap("kernels: " + ", ".join(kernels), indent="    ",
                                           hanging="      "))
        parts.append("\n".join(lines))
    summary = (f"{len(ran) - len(failed)} passed, {len(failed)} failed, "
               f"{len(res) - len(ran)} skipped")
    if not verbose and (len(ran) > len(failed) or groups):
        summary += " (-v: every run" + (", and the kernels of each skip reason" if groups
                                          else "") + ")"
    parts.append(summary)
    return "\n\n".join(parts)


def cmd_check(args) -> int:
    from bench import check, device, results
    from bench import env as env_mod

    kernels = _select(args.kernels)
    precisions = _precisions(args.precision, kernels)
    shapes = _shapes(args.shapes, kernels, "check_shapes", args.suite)
    dev = device.setup()
    env = env_mod.environment(dev)
    if args.out:
        _guard(args.out, ["check"], env, args, "bench check")
    res = check.run(kernels, shapes, precisions, exact=args.exact, seed=args.seed,
                    device=dev, nonfinite=args.nonfinite, show_progress=True)
    print(f"device: {dev}" + (" (Triton kernels through the interpreter)" if dev == "cpu"
                              else ""))
    print(check_text(res, args.verbose))
    ran = [r for r in res if r.status != "skip"]
    if args.out:
        results.write(args.out, "check", [r.as_dict() for r in res], env=env,
                      command=_command(args))
        print(f"wrote {args.out}/check.csv and check.json")
        _write_readme(args.out)
    if not ran:
        print("bench check: nothing could run here", file=sys.stderr)
        return 1
    return 1 if any(r.failed for r in res) else 0


def cmd_time(args) -> int:
    from bench import device, perf, results
    from bench import env as env_mod
    from bench.timing import Policy

    kernels = _select(args.kernels)
    precisions = _precisions(args.precision, kernels)
    shapes = _shapes(args.shapes, kernels, "time_shapes", args.suite)
    if device.setup() != "cuda":
        raise UsageError("needs a CUDA GPU. Without one, Triton runs through its interpreter, "
                         "whose timings say nothing about a GPU; use `bench check` and "
                         "`bench model` here.")
    _guard(args.out, ["time"], env_mod.environment("cuda"), args, "bench time")
    policy = Policy(target_s=0.15, budget_s=2.0) if args.quick else Policy()
    policy.alternate = args.alternate
    old = results.read(args.out, "time") if args.append else None
    stored = ((old or {}).get("meta") or {}).get("ceilings") or None
    # an earlier run cut short stays said: its missing rows are missing still (--force
    # starts a set afresh)
    earlier_cut = ((old or {}).get("meta") or {}).get("incomplete", "")

    def save(rows, env, ceilings, incomplete=""):
        all_rows = rows
        if old:  # keep the earlier rows; a re-timed kernel x shape x precision replaces its old row
            all_rows = results.merge_rows(old["rows"], rows)
            ceilings = ceilings or stored or {}
        cuts = [c for c in (earlier_cut and f"an earlier run: {earlier_cut}", incomplete) if c]
        meta = {"ceilings": ceilings, **({"incomplete": "; ".join(cuts)} if cuts else {}),
                "commands": results.earlier_commands(old)}
        return results.write(args.out, "time", all_rows, env=env, meta=meta,
                             command=_command(args))

    def checkpoint(rows, env, ceilings, done, planned):
        save(rows, env, ceilings, f"{done} of {planned} timings: the run stopped before the "
                                  f"rest (this file is its last checkpoint)")

    rows, env, ceilings = perf.run(kernels, shapes, precisions, policy,
                                   measure_ceilings=not args.no_ceilings, ceilings=stored,
                                   checkpoint=checkpoint if args.out else None,
                                   suite=args.suite or "")
    if old:
        ceilings = ceilings or stored or {}
    csv_path, _ = save(rows, env, ceilings)
    print(time_text(rows, ceilings))
    ok = [r for r in rows if r.get("status") == "ok"]
    print(f"wrote {csv_path} and time.json")
    _write_readme(args.out)
    return 1 if len(ok) < len([r for r in rows if r.get("status") != "skip"]) else 0


def kernel_label(r: dict) -> str:
    """A row's kernel, with the rung a dispatching entry chose: "cuda_auto (t5)"."""
    if not r.get("choice"):
        return r["kernel"]
    chosen = registry.by_name().get(r["choice"])
    return f"{r['kernel']} ({chosen.version if chosen else r['choice']})"


def time_text(rows, ceilings=None) -> str:
    """What `bench time` prints: one row per timing, the kernels that failed or were
    skipped with their notes, the ceilings."""
    ok = [r for r in rows if r.get("status") == "ok"]
    parts = [terminal.table(
        ["kernel", "shape", "prec", "median ms", "IQR ms", "TFLOP/s", "% ref", "% roof",
         "GB/s"],
        [[kernel_label(r), r["shape"], r["precision"], f(r["median_ms"], 4), f(r["iqr_ms"], 4),
          f(r["tflops"], 2), f(r["pct_reference"], 1), f(r["pct_roof"], 1),
          f(r["gbps_compulsory"], 0)] for r in ok],
        notes=[r.get("note") or "" for r in ok], right=set(range(3, 9))),
        terminal.wrap("% ref: the op's reference (cuBLAS, PyTorch eager) time / this time; "
                      "% roof: of the roofline measured in this run; GB/s: compulsory bytes "
                      "(inputs once, output once) / time", indent="")]
    bad = [r for r in rows if r.get("status") not in ("ok", "skip")]
    if bad:
        parts.append(terminal.table(
            ["kernel", "shape", "prec", "status"],
            [[r["kernel"], r.get("shape") or "-", r.get("precision") or "-", r["status"]]
             for r in bad], notes=[r.get("note") or "" for r in bad]))
    skipped = [r for r in rows if r.get("status") == "skip"]
    if skipped:
        from bench import check

        parts.append("\n".join(["skipped:"] + [
            terminal.wrap(f"{', '.join(kernels)}: {why}", indent="  ", hanging="      ")
            for why, kernels, _n in check.skipped_by_reason(skipped)]))
    if ceilings:
        cublas = ceilings.get("cublas_tflops") or {}
        parts.append(terminal.wrap(
            f"ceilings: copy {ceilings['copy_gbps']:.0f} GB/s; cuBLAS "
            + (", ".join(f"{p} {t:.1f}" for p, t in cublas.items())
               + f" TFLOP/s at {ceilings['cublas_shape']}" if cublas
               else "not measured (no matmul timed)"), indent=""))
    return "\n\n".join(parts)


def cmd_model(args) -> int:
    from bench import device, model_table, results
    from bench import env as env_mod

    kernels = [k for k in _select(args.kernels) if k.model is not None or k.chooses is not None]
    if not kernels:
        raise UsageError("none of the selected kernels has a traffic model")
    if args.shape and args.shapes:
        raise UsageError("give --shape or --shapes, not both")
    shapes = _shapes(args.shape or args.shapes, kernels, "model_shapes", args.suite)
    precisions = _precisions(args.precision, kernels)
    if args.out:
        env = env_mod.environment(device.setup())
        _guard(args.out, ["model"], env, args, "bench model")
    if args.counted:
        from bench import counted
        from triton_impl import _common

        if device.setup() == "cuda" or not _common.interpreting():
            raise UsageError("--counted counts under the Triton interpreter, which runs where "
                             "there is no GPU (TRITON_INTERPRET=1); on a GPU, `bench profile` "
                             "reads the hardware's counters")
    try:
        rows = model_table.rows(kernels, shapes, precisions)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    notes = counted.add_to_rows(rows) if args.counted else []
    print(model_text(rows, args.verbose))
    if notes:
        print("\n" + "\n".join(notes))
    if args.out:
        results.write(args.out, "model", rows, env=env, command=_command(args))
        print(f"\nwrote {args.out}/model.csv and model.json")
        _write_readme(args.out)
    return 0


def model_text(rows, verbose: bool = False) -> str:
    """What `bench model` prints: one compact row per kernel x shape x precision, then the
    tile parameters and the lecture's formula of each kernel x precision once; with
    verbose, every quantity of every row in full instead."""
    if verbose:
        return "\n\n".join(_model_block(r) for r in rows)
    counted = any("counted_loads" in r for r in rows)
    extra = ["counted", "counted st"] if counted else []
    table = terminal.table(
        ["kernel", "shape", "prec", "loads", "load bytes", "stores", "shared", "FMAs",
         "lecture", *extra],
        [[kernel_label(r), r["shape"], r["precision"], terminal.count(r["global_loads"]),
          binary_bytes(r["global_load_bytes"]), terminal.count(r["global_stores"]),
          terminal.count(r["shared_loads"]), terminal.count(r["fma"]),
          terminal.count(r.get("lecture_global_loads")),
          *([terminal.count(r.get("counted_loads")), terminal.count(r.get("counted_stores"))]
            if counted else [])] for r in rows],
        right=set(range(3, 9 + len(extra))))
    legend = terminal.wrap(
        "Elements unless bytes, in decimal prefixes (k, M, G, T: 10^3, 10^6, ...); bytes in "
        "binary units. loads: global loads the threads issue; stores: global stores; "
        "shared: shared-memory loads; FMAs: executed, tile padding included; lecture: the "
        "global loads of the lecture notes' formula for a square N x N x N product. "
        + ("counted, counted st: the loads and stores the kernel asked for in one call under "
           "the Triton interpreter, every launch of the call (bench/counted.py; equal to the "
           "model where the model describes the tile the interpreter runs). " if counted
           else "")
        + "-v prints every quantity in full.", indent="")
    params = ["tile parameters and traffic formulas:"]
    for r in {(r["kernel"], r["precision"]): r for r in rows}.values():
        params.append(terminal.wrap(
            f"{r['kernel']} ({r['precision']}): {r['params']}"
            + (f"; formula {r['formula']}" if r.get("formula") else ""),
            indent="  ", hanging="      "))
    return "\n\n".join([table, legend, "\n".join(params)])


def _model_block(r: dict) -> str:
    """Every quantity of one model row in full (`bench model -v`)."""
    table = []
    for label, el, by in (("global loads (issued by threads)", "global_loads",
                           "global_load_bytes"),
                          ("global stores", "global_stores", "global_store_bytes"),
                          ("shared-memory loads", "shared_loads", "shared_load_bytes")):
        table.append([label, f"{r[el]:,}", f"{r[by]:,}"])
        if el == "global_loads" and (r.get("load_width") or 1) > 1:
            table.append([f"  as load instructions ({r['load_width']} elements each)",
                          f"{r[el] // r['load_width']:,}", "-"])
    table.append(["compulsory DRAM (read + write)", "-", f"{r['compulsory_bytes']:,}"])
    table.append(["FMAs executed (tile padding included)", f"{r['fma']:,}", "-"])
    table.append(["useful FLOPs (2*M*N*K)", f"{r['useful_flops']:,}", "-"])
    if r.get("lecture_global_loads") is not None:
        table.append(["lecture formula, global loads", f"{r['lecture_global_loads']:,}", "-"])
    if r.get("counted_loads") is not None:
        table.append(["counted under the interpreter: loads", f"{r['counted_loads']:,}",
                      f"{r['counted_load_bytes']:,}"])
        table.append(["counted under the interpreter: stores", f"{r['counted_stores']:,}",
                      f"{r['counted_store_bytes']:,}"])
    head = terminal.wrap(f"{r['kernel']}  {r['shape']}  {r['precision']}  tile parameters: "
                         f"{r['params']}" + (f"  lecture: {r['formula']}" if r.get("formula")
                                             else ""), indent="", hanging="    ")
    return head + "\n" + terminal.table(["quantity", "elements", "bytes"], table,
                                         right={1, 2})


def cmd_profile(args) -> int:
    from bench import device, profile, results
    from bench import env as env_mod

    explicit = args.kernels not in (None, "*")
    kernels = [k for k in _select(args.kernels)
               if explicit or k.backend not in registry.REFERENCE_BACKENDS]
    if not kernels:
        raise UsageError("the selection holds only reference kernels; name them explicitly "
                         "to profile them")
    precisions = _precisions(args.precision, kernels)
    shapes = _shapes(args.shapes, kernels, "profile_shapes", args.suite)
    ncu = profile.find_ncu()
    if ncu is None:
        raise UsageError("Nsight Compute (ncu) is not on PATH nor in /usr/local/cuda/bin "
                         "(install Nsight Compute, or use `bench model` for the models)")
    if device.setup() != "cuda":
        raise UsageError("needs a CUDA GPU (and Nsight Compute); `bench model` gives the "
                         "closed-form traffic without one")
    env = env_mod.environment("cuda")
    _guard(args.out, ["profile"], env, args, "bench profile")
    old = results.read(args.out, "profile") if args.append else None

    def merged(rows, meta):
        """Earlier rows (other shapes/kernels) plus these; a re-profiled one replaces its old row."""
        if not old:
            return rows, meta
        meta = dict(meta, dropped_metrics=sorted(set(meta["dropped_metrics"])
                                                 | set(old["meta"].get("dropped_metrics") or [])),
                    commands=results.earlier_commands(old))
        return results.merge_rows(old["rows"], rows), meta

    def checkpoint(rows, meta):
        all_rows, all_meta = merged(rows, meta)
        results.write(args.out, "profile", all_rows, env=env, meta=all_meta,
                      command=_command(args))

    try:
        rows, meta = profile.run(kernels, shapes, precisions, args.out, ncu,
                                 checkpoint=checkpoint, batch=not args.one_process_per_kernel)
    except profile.CounterPermissionError as exc:
        raise UsageError(str(exc)) from None
    checkpoint(rows, meta)
    all_rows, meta = merged(rows, meta)
    print(profile_text(rows))
    if meta["dropped_metrics"]:
        print(terminal.wrap("dropped (unknown to this ncu): "
                            + ", ".join(meta["dropped_metrics"]), indent=""))
    print(f"wrote {args.out}/profile.csv, profile.json and ncu/*.ncu-rep")
    _write_readme(args.out)
    return 1 if any(r.get("target") == "FAIL" or r.get("status") != "ok" for r in rows) else 0


def profile_text(rows) -> str:
    """What `bench profile` prints: a table per profiled shape, one row per kernel x
    precision (the model's loads, what was issued against it, the bytes at each level,
    the target), each row's note under it."""
    parts = []
    for shape in dict.fromkeys(r.get("shape") or "-" for r in rows):
        at = [r for r in rows if (r.get("shape") or "-") == shape]
        parts.append(f"{shape}:\n" + terminal.table(
            ["kernel", "prec", "model loads", "issued/model", "L1", "L2", "DRAM read",
             "FFMA", "target"],
            [[r["kernel"], r.get("precision") or "-",
              terminal.count(r.get("model_global_loads")),
              f(r.get("ratio_issued"), 4), binary_bytes(r.get("l1_bytes")),
              binary_bytes(r.get("l2_bytes")), binary_bytes(r.get("dram_read_bytes")),
              terminal.count(r.get("ffma")),
              r.get("target") or r.get("status") or "-"] for r in at],
            notes=[r.get("note") or "" for r in at], right=set(range(2, 8))))
    return "\n\n".join(parts + [terminal.wrap(
        "model loads: global loads the threads issue, closed form; issued/model: the load "
        "instructions counted by Nsight Compute against it; L1, L2: bytes requested at L1 "
        "and fetched from L2; DRAM read: bytes read from memory", indent="")])


def cmd_plot(args) -> int:
    from bench import plots

    from bench import results

    if not results.existing_kinds(args.results):
        raise UsageError(f"no result files in {args.results} (expected "
                         f"{', '.join(k + '.json' for k in results.KINDS)})")
    results.load_set(args.results)           # a corrupt or older file: one line, exit 2
    results.check_writable(args.out)
    made = plots.all_figures(args.results, args.out, progress=True)
    print(f"{len(made)} figures in {args.out}, each as PNG and SVG:")
    print(terminal.wrap(", ".join(made) or "none (no data for any figure)", indent="  "))
    return 0


def cmd_report(args) -> int:
    from bench import plots, report, results

    if args.replot:  # redraw figures and report.md from the files already in --out
        if not results.existing_kinds(args.out):
            raise UsageError(f"--replot: no result files in {args.out}")
        results.load_set(args.out)           # a corrupt or older file: one line, exit 2
        results.check_writable(args.out)
        figures = plots.all_figures(args.out, f"{args.out}/figures", progress=True)
        print(report.write_markdown(args.out, figures))
        _write_readme(args.out)
        return 0
    if args.kernels:
        _select(args.kernels)      # a selection matching nothing: exit 2 now
    return report.run(args.out, quick=args.quick, patterns=args.kernels, force=args.force,
                      alternate=args.alternate, command=_command(args))


def cmd_compare(args) -> int:
    from bench import compare

    try:
        text, files = compare.run(args.a, args.b, args.out, force=args.force)
    except compare.CompareError as exc:
        raise UsageError(str(exc)) from None
    print(terminal.from_markdown(text))
    names = ["compare.md"] + [str(p.relative_to(args.out)) if p.is_relative_to(args.out)
                              else str(p) for p in files]
    print(f"wrote {', '.join(names)} in {args.out}")
    return 0


def _said_stale(stale: list[str], heading: str, fine: str) -> int:
    """A --check's answer: exit 1 listing what is stale under heading, else 0 saying fine."""
    if stale:
        print(heading + "\n" + "\n".join(f"  {x}" for x in stale))
        return 1
    print(fine)
    return 0


def cmd_results_readme(args) -> int:
    """Writes the README.md of each result set named, from the set's files alone; --check
    writes nothing and exits 1 naming each set whose README differs."""
    from bench import set_readme

    try:
        if args.check:
            return _said_stale([f"{d}/README.md" for d in args.sets if set_readme.stale(d)],
                               "these READMEs differ from their sets (`python -m bench "
                               "results-readme SET` rewrites them):",
                               "every README matches its set")
        for d in args.sets:
            _write_readme(d)
    except set_readme.NotASetError as exc:
        raise UsageError(str(exc)) from None
    return 0


def readme_table() -> str:
    """The kernel tables of docs/kernels.md, from the registry: each op family's, in family
    order."""
    from bench import families

    return "\n\n".join(t for family in families.families() for t in family.readme_tables())


def cmd_readme_table(args) -> int:
    print(readme_table())
    return 0


def cmd_docs(args) -> int:
    """Fills every marked block of README.md and docs/ from the result set it names
    (bench/doc_blocks.py); --check writes nothing and exits 1 naming the blocks that
    differ."""
    from bench import doc_blocks

    try:
        if args.check:
            return _said_stale(doc_blocks.stale(), "these blocks differ from their result "
                               "sets (`python -m bench docs` rewrites them):",
                               "every marked block of the docs matches its result set")
        written = doc_blocks.fill()
    except doc_blocks.DocBlockError as exc:
        raise UsageError(str(exc)) from None
    print("rewrote " + ", ".join(str(p.relative_to(doc_blocks.ROOT)) for p in written)
          if written else "every marked block of the docs already matches its result set")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from bench import results

    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    prog = invoked if invoked.startswith("cvt-bench") else "python -m bench"
    p = argparse.ArgumentParser(prog=prog, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--plugin", action="append", default=[], metavar="FILE",
                        help="a Python file of your own kernels (bench.plugins.kernel) to "
                             "run beside the built-in ones; repeatable (docs/plugins.md)")
    alternating = argparse.ArgumentParser(add_help=False)   # bench time and bench report
    alternating.add_argument("--alternate", type=_rounds, default=0, metavar="R",
                             help="after each timing of 0.1-100 ms, R rounds alternating the "
                                  "kernel and the reference on the same inputs, each a second "
                                  "of launches back to back; the median ratio is the row's "
                                  "'alternating' %% of reference (default: 0, off)")

    suite = argparse.ArgumentParser(add_help=False)         # check, time, model, profile
    suite.add_argument("--suite", default=None, metavar="NAME",
                       help="a named set of shapes of each op instead of --shapes: 'shapes' "
                            "is the matmul shape suite (bench/families/matmul/suite.py), "
                            "'shapes:CATEGORY' one category of it (e.g. shapes:few-tiles)")

    s = sub.add_parser("list", parents=[common], help="every registered kernel")
    s.add_argument("--kernels", default=None, help="comma-separated globs (default: all)")
    s.add_argument("--markdown", action="store_true",
                   help="the table of docs/api.md: every kernel's Python function")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("check", parents=[common, suite], help="correctness against a float64 reference")
    s.add_argument("--kernels", default="*", help="comma-separated globs, e.g. 'cuda_*,triton_v3*'")
    s.add_argument("--shapes", default=None,
                   help="MxNxK[,MxNxK...] (default: the op's shapes for this machine)")
    s.add_argument("--precision", default=None, help="fp32,tf32,fp16,bf16 (default: all supported)")
    s.add_argument("--exact", action="store_true", help="also run the exact small-integer mode")
    s.add_argument("--nonfinite", action="store_true",
                   help="also check that a NaN and an inf in the inputs reach the output")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", default=None,
                   help="also write check.csv/json to this folder (default: write nothing)")
    s.add_argument("--force", action="store_true", help="replace a check.json already in --out")
    s.add_argument("-v", "--verbose", action="store_true",
                   help="print every run, not only the failures, and the kernels of each "
                        "skip reason")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("time", parents=[common, suite, alternating], help="(GPU) timings, ceilings, %% cuBLAS; writes time.csv/json")
    s.add_argument("--kernels", default="*")
    s.add_argument("--shapes", default=None,
                   help="shapes for every op, or per op: 'copy=67108864;softmax=4096x32768' "
                        "(default: each op's time shapes)")
    s.add_argument("--precision", default=None)
    s.add_argument("--out", default=results.DEFAULT_OUT,
                   help="where time.csv/json go (default: %(default)s)")
    s.add_argument("--quick", action="store_true", help="fewer repetitions")
    s.add_argument("--no-ceilings", action="store_true",
                   help="skip copy/cuBLAS ceilings (with --append: reuse the stored ones)")
    s.add_argument("--append", action="store_true",
                   help="add to the time.json already in --out (measured in the same "
                        "environment: GPU, driver, CUDA, torch, triton, commit)")
    s.add_argument("--force", action="store_true", help="replace a time.json already in --out")
    s.set_defaults(func=cmd_time)

    s = sub.add_parser("model", parents=[common, suite], help="closed-form traffic of each kernel at a shape")
    s.add_argument("--kernels", default="*")
    s.add_argument("--shape", default=None, help="MxNxK")
    s.add_argument("--shapes", default=None, help="MxNxK[,...] (default: 1024^3 and 4096^3)")
    s.add_argument("--precision", default=None,
                   help="fp32,tf32,fp16,bf16,... (default: each kernel's first precision); "
                        "bytes follow the element size, tiles the precision's")
    s.add_argument("--out", default=None,
                   help="also write model.csv/json to this folder (default: write nothing)")
    s.add_argument("--force", action="store_true", help="replace a model.json already in --out")
    s.add_argument("-v", "--verbose", action="store_true",
                   help="every quantity of every row in full, one block per row, instead of "
                        "the compact table")
    s.add_argument("--counted", action="store_true",
                   help="also run each Triton kernel once under the interpreter (no GPU) and "
                        "count the loads and stores it asks for, beside the model "
                        "(bench/counted.py; small --shapes)")
    s.set_defaults(func=cmd_model)

    s = sub.add_parser("profile", parents=[common, suite], help="(GPU + ncu) counters per level next to the model")
    s.add_argument("--kernels", default="*")
    s.add_argument("--shapes", default=None, help="default: 1024x1024x1024")
    s.add_argument("--precision", default=None, help="default: each kernel's first precision")
    s.add_argument("--out", default=results.DEFAULT_OUT,
                   help="where profile.csv/json and ncu/ go (default: %(default)s)")
    s.add_argument("--one-process-per-kernel", action="store_true",
                   help="profile each kernel in its own ncu process (default: one batch, then "
                        "a process of its own for any kernel that failed in the batch)")
    s.add_argument("--append", action="store_true",
                   help="add to the profile.json already in --out (measured in the same "
                        "environment)")
    s.add_argument("--force", action="store_true",
                   help="replace a profile.json already in --out")
    s.set_defaults(func=cmd_profile)

    s = sub.add_parser("plot", parents=[common], help="figures from a result directory")
    s.add_argument("--results", required=True,
                   help="a result set: results/local, or a committed one such as results/h100")
    s.add_argument("--out", default=None, help="where the figures go (default: RESULTS/figures)")
    s.set_defaults(func=cmd_plot)

    s = sub.add_parser("report", parents=[common, alternating], help="run the default suite; write files, figures, report.md")
    s.add_argument("--out", default=results.DEFAULT_OUT,
                   help="where the result set, figures/ and report.md go (default: "
                        "%(default)s)")
    s.add_argument("--quick", action="store_true", help="fewer shapes and repetitions")
    s.add_argument("--kernels", default=None, help="globs (default: every kernel)")
    s.add_argument("--replot", action="store_true",
                   help="only redraw figures and report.md from the files in --out")
    s.add_argument("--force", action="store_true",
                   help="replace the result set already in --out (the new set is written "
                        "beside it and takes its place only when complete)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("compare", parents=[common],
                       help="two result sets side by side (e.g. two GPUs): ratios, ceilings")
    s.add_argument("a", help="result set A (a folder with time.json), e.g. results/h100")
    s.add_argument("b", help="result set B, e.g. results/h200")
    s.add_argument("--out", default=f"{results.DEFAULT_OUT}/compare",
                   help="where compare.md and figures/compare.png go (default: %(default)s)")
    s.add_argument("--force", action="store_true", help="replace a compare.md already in --out")
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("results-readme",
                       help="write the README.md of result sets from their own files")
    s.add_argument("sets", nargs="+", metavar="SET",
                   help="a result set's folder, e.g. results/h100")
    s.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming every README that differs from its set")
    s.set_defaults(func=cmd_results_readme, plugin=[])

    from bench import grading

    grading.add_commands(sub, common)

    s = sub.add_parser("docs", help="fill the docs' marked blocks from the result sets "
                                    "they name (bench/doc_blocks.py)")
    s.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming every block that differs from its set")
    s.set_defaults(func=cmd_docs, plugin=[])   # the docs read the built-in registry only

    s = sub.add_parser("readme-table", parents=[common], help="print the kernel tables of docs/kernels.md (markdown)")
    s.set_defaults(func=cmd_readme_table)
    return p


def main(argv: list[str] | None = None) -> int:
    from bench import results
    from bench.grading.labs import LabError

    from bench import plugins

    args = build_parser().parse_args(argv)       # argparse itself exits 2 on bad syntax
    # what the result files record as the command that wrote them (bench/set_readme.py)
    args.command_line = results.recorded_command(sys.argv[1:] if argv is None else argv)
    if getattr(args, "command", None) == "plot" and args.out is None:
        args.out = f"{args.results}/figures"
    try:
        plugins.use(args.plugin)
        return args.func(args)
    except BrokenPipeError:                       # `... | head` closed our stdout
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (UsageError, results.OutDirError, results.ResultFileError,
            plugins.PluginError, LabError) as exc:
        print(f"bench {args.command}: {exc}", file=sys.stderr)
        return 2
