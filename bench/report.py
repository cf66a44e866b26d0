"""`python -m bench report --out DIR`: the whole default suite, its files, figures and report.md.

On a GPU it runs check, time (with the ceilings), model and, where ncu exists, profile;
then draws every figure and writes DIR/report.md with the tables. On a CPU-only machine
it runs what can run: the Triton kernels through the interpreter on small shapes
(correctness only: interpreter timings say nothing about a GPU and are not taken), the
models at lecture sizes and the figures drawn from models alone (the traffic per rung, the
lecture figure's model half); it says what needs a GPU and how to redraw the GPU result
sets committed with the suite (results/h100, ...). DIR defaults to results/local.

The tables are built from the result files (bench/results.py), like the figures, so
`python -m bench report --out DIR --replot` rewrites report.md from a stored result set.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import time as _time
from pathlib import Path

from bench import families, results, set_readme
from bench.results import num
from bench.text import ABOVE_COPY, binary_bytes, count, f, md_table


# ---------------------------------------------------------------------------------------
# Sections (each takes payloads and returns markdown)
# ---------------------------------------------------------------------------------------

FIGURES_DIR = "figures"


def section_env(env: dict) -> str:
    keys = ("date_utc", "device", "gpu", "sm_count", "compute_capability", "memory_gib",
            "l2_cache_bytes", "driver", "cuda_runtime", "torch", "triton", "numpy", "python",
            "git_sha", "sm_clock_max_mhz", "sm_clock_mhz_before", "sm_clock_mhz_after",
            "power_limit_w", "note")
    rows = [[k, env[k]] for k in keys if env.get(k) not in (None, "")]
    return "## Environment\n\n" + md_table(["what", "value"], rows)


def _ceilings(time_payload: dict) -> dict:
    return (time_payload.get("meta") or {}).get("ceilings") or {}


def copy_row(c: dict) -> list[str]:
    """The copy bandwidth as a row of the ceilings table: the DRAM level (bytes read +
    written per second), the ceiling every bandwidth of the report is compared with."""
    return ["DRAM: copy bandwidth (bytes read + written / time)",
            f"{f(c.get('copy_gbps'), 0)} GB/s",
            f"{binary_bytes(c.get('copy_bytes'))} copied by torch, median of the timed copies"]


def section_ceilings(time_payload: dict) -> str:
    c = _ceilings(time_payload)
    if not c:
        return ""
    rows = [copy_row(c)]
    for family in families.families():
        rows += family.ceiling_rows(c)
    return ("## Ceilings measured in this run\n\n"
            + md_table(["ceiling", "value", "how"], rows))


# ---------------------------------------------------------------------------------------
# Correctness: one row per kernel x precision
# ---------------------------------------------------------------------------------------

def _fraction_of_bound(r: dict) -> float:
    """A check run's error as a fraction of the bound it had to meet: 0 for an exact run
    that matched, inf for one that did not (its bound is 0), NaN when it has no error."""
    err, tol = num(r.get("error")), num(r.get("tolerance"))
    if math.isnan(err):
        return math.nan
    if not tol:                       # exact mode: the answer must match bit for bit
        return 0.0 if err == 0 else math.inf
    return err / tol


def correctness_rows(check_payload: dict) -> list[dict]:
    """One dict per kernel x precision that ran: op, shapes, runs, failed, skipped, the worst
    error as a fraction of its bound and where it was (shape, mode)."""
    from bench import registry

    ops = {k.name: k.op for k in registry.kernels()}
    out: dict = {}
    for r in check_payload["rows"]:
        key = (r["kernel"], r["precision"])
        g = out.setdefault(key, dict(kernel=r["kernel"], precision=r["precision"],
                                     op=ops.get(r["kernel"], "-"), shapes=[], runs=0,
                                     failed=0, skipped=0, worst=math.nan, worst_at="",
                                     modes=[]))
        if r["status"] == "skip":
            g["skipped"] += 1
            continue
        g["runs"] += 1
        if r["shape"] not in g["shapes"]:
            g["shapes"].append(r["shape"])
        if r["mode"] not in g["modes"]:
            g["modes"].append(r["mode"])
        if r["status"] in ("FAIL", "ERROR"):
            g["failed"] += 1
        frac = _fraction_of_bound(r)
        if r["status"] == "ERROR":
            frac = math.inf
        if math.isnan(g["worst"]) or frac > g["worst"]:
            g["worst"] = frac
            g["worst_at"] = f"{r['shape']} ({r['mode']})" + (
                f": {r['status']} {r.get('note') or ''}".rstrip() if r["status"] == "ERROR" else "")
    return list(out.values())


def _fraction_text(x: float) -> str:
    """0.18, 0.0042, 0.999 (just under the bound never prints as 1.00), 0, inf or -."""
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf"
    if 0.995 <= x < 1:
        return f"{math.floor(x * 1000) / 1000:.3f}"
    return "0" if x == 0 else f"{x:.2g}" if x < 0.01 else f"{x:.2f}"


def _elements(shape: str) -> int:
    """The product of the sizes in a shape's text ("3x1066x1600:dim=0" -> 5116800): an
    order from small to large for every op's shapes."""
    return math.prod(int(n) for n in re.findall(r"\d+", shape.split(":")[0])) if shape else 0


def _shapes_text(shapes: list[str]) -> str:
    shapes = sorted(shapes, key=_elements)
    return shapes[0] if len(shapes) == 1 else f"{len(shapes)}: {shapes[0]} … {shapes[-1]}"


def _reasons(notes: list[str]) -> list[tuple[str, int]]:
    """Skip reasons with their shapes taken out and how many runs each, most frequent
    first: "shape 64x64x64 too large for exact bf16" and "shape 127x129x31 too large for
    exact bf16" are one reason."""
    from bench.check import general_reason

    general = [general_reason(n) for n in notes]
    counts: dict = {}
    for g in general:
        counts[g] = counts.get(g, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def ran_and_failed(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """The check rows that ran (not skipped), and those of them that failed."""
    runs = [r for r in rows if r.get("status") != "skip"]
    return runs, [r for r in runs if r.get("status") in ("FAIL", "ERROR")]


def section_check(check_payload: dict) -> str:
    rows = check_payload["rows"]
    groups = correctness_rows(check_payload)
    ran = [g for g in groups if g["runs"]]
    run_rows, failed_rows = ran_and_failed(rows)
    failed, runs = len(failed_rows), len(run_rows)
    skipped = len(rows) - runs
    modes = list(dict.fromkeys(m for g in ran for m in g["modes"]))
    table = [[g["kernel"], g["op"], g["precision"], _shapes_text(g["shapes"]), g["runs"],
              f"**{g['failed']}**" if g["failed"] else "0",
              (f"**{_fraction_text(g['worst'])}**" if g["worst"] > 1 else
               _fraction_text(g["worst"])), g["worst_at"]] for g in ran]
    text = (f"## Correctness\n\n{runs - failed} of {runs} runs passed, {failed} failed"
            + (f", {skipped} skipped" if skipped else "") + ". One row per kernel x precision: "
            f"the shapes it ran at, its runs (modes: {', '.join(modes) or '-'}), the failures, "
            "and its worst error as a fraction of the bound it had to meet (1.00 = at the "
            "bound; an exact run must match bit for bit; each op's error and bound are "
            "defined by its Problem in bench/families/). check.csv holds every run, with "
            "its error and bound.\n\n"
            + (md_table(["kernel", "op", "precision", "shapes", "runs", "failed",
                         "worst error / bound", "worst at"], table) if table
               else "No kernel could run on this machine."))
    # kernels that ran nowhere (no GPU here) are one line below the table, not rows of skips
    nowhere = list(dict.fromkeys(g["kernel"] for g in groups if not g["runs"]
                                 and not any(h["runs"] for h in groups
                                             if h["kernel"] == g["kernel"])))
    reasons = _reasons([r.get("note") or "no reason given" for r in rows if r["status"] == "skip"])
    if reasons:
        text += ("\n\nSkipped runs, by reason: "
                 + "; ".join(f"{why} ({n})" for why, n in reasons[:8]))
    if nowhere:
        text += f"\n\nDid not run here ({len(nowhere)}): " + ", ".join(nowhere)
    return text


def section_errors(time_payload: dict) -> str:
    """Timed runs that raised or whose answer was wrong after timing, over every op."""
    errors = [r for r in time_payload["rows"] if r.get("status") in ("ERROR", "FAIL")]
    if not errors:
        return ""
    return ("## Errors while timing\n\n"
            + "\n".join(f"- {r['kernel']} {r.get('shape')} {r.get('precision')}: {r.get('note')}"
                        for r in errors[:20]))


CROSSCHECK_AGREE = 0.03   # the two timers' ratios to the reference agree within 3%


def crosscheck_rows(time_payload: dict) -> list[dict]:
    """Rows timed by both timers whose reference was timed by both too (bench/perf.py)."""
    return [r for r in time_payload.get("rows", []) if r.get("status") == "ok"
            and not r.get("is_reference") and num(r.get("dobench_pct_reference")) > 0
            and num(r.get("pct_reference")) > 0]


def _disagreement(r: dict) -> float:
    """How far the harness's ratio to the reference is from do_bench's (0.02 = 2%)."""
    return num(r["pct_reference"]) / num(r["dobench_pct_reference"]) - 1


def section_crosscheck(time_payload: dict) -> str:
    """The harness's timer (bench/timing.py) against triton.testing.do_bench, row by row;
    with --alternate, also the rows of 0.1-0.2 ms that had alternating rounds and no
    do_bench (its cells '-')."""
    rows = crosscheck_rows(time_payload)
    alternate_only = [r for r in time_payload.get("rows", []) if r.get("status") == "ok"
                      and not r.get("is_reference") and r not in rows
                      and num(r.get("alternating_pct_reference")) > 0]
    if not rows and not alternate_only:
        return ""
    alternating = bool(alternate_only) or any(r.get("alternating_pct_reference") for r in rows)
    table = [[r["kernel"], r["shape"], r["precision"], f(r["median_ms"], 4),
              f(r["dobench_ms"], 4), f(r["pct_reference"], 1),
              f(r["dobench_pct_reference"], 1), f"{100 * _disagreement(r):+.1f}%"]
             + ([f(r.get("alternating_pct_reference"), 1)] if alternating else [])
             for r in rows]
    table += [[r["kernel"], r["shape"], r["precision"], f(r["median_ms"], 4), "-",
               f(r["pct_reference"], 1), "-", "-", f(r["alternating_pct_reference"], 1)]
              for r in alternate_only]
    off = [r for r in rows if abs(_disagreement(r)) > CROSSCHECK_AGREE]
    throttled = {(r["op"], r["shape"], r["precision"]) for r in time_payload.get("rows", [])
                 if "throttled" in (r.get("note") or "")}

    def why(r: dict) -> str:   # the harness flags a clock that fell during a timing
        return (" (the SM clock fell during this timing or the reference's)"
                if (r["op"], r["shape"], r["precision"]) in throttled else "")

    return ("## Timer cross-check: the harness against `triton.testing.do_bench`\n\n"
            "Every kernel whose median lies between 0.2 and 100 ms was timed a second time, "
            "right after the harness's timing, by `triton.testing.do_bench` (its own cache "
            "flush, launches back to back, the median), and so was the reference at the "
            "same shape and precision. Each ratio to the reference is computed with one "
            "timer; the last column is how far the harness's ratio lies from do_bench's. "
            f"{len(rows) - len(off)} of {len(rows)} rows agree within "
            f"{100 * CROSSCHECK_AGREE:.0f}%"
            + (": " + ", ".join(f"{r['kernel']} {r['shape']} {r['precision']}{why(r)}"
                                for r in off[:8])
               + (" ..." if len(off) > 8 else "") + " do not." if off else ".")
            + " Below 0.2 ms do_bench's events would take in the host's launch cost of a "
              "Python wrapper, so it is not asked."
            + (" The last column: the same kernel and the reference timed in alternating "
               "rounds right after each other, each a second of launches back to back "
               "(`--alternate`), the median of the rounds' ratios, which clock drift between "
               "two timings minutes apart cannot move; rows of 0.1-0.2 ms have these rounds "
               "and no do_bench ('-')." if alternating else "") + "\n\n"
            + md_table(["kernel", "shape", "precision", "harness ms", "do_bench ms",
                        "harness % of reference", "do_bench % of reference", "harness / "
                        "do_bench ratio"]
                       + (["alternating rounds % of reference"] if alternating else []), table))


def _crosscheck_line(time_payload: dict) -> str:
    rows = crosscheck_rows(time_payload)
    if not rows:
        return ""
    worst = max(rows, key=lambda r: abs(_disagreement(r)))
    agree = sum(abs(_disagreement(r)) <= CROSSCHECK_AGREE for r in rows)
    return (f"- **Timer cross-check**: for {agree} of {len(rows)} kernels timed by both the "
            f"harness and `triton.testing.do_bench`, the two ratios to the reference agree "
            f"within {100 * CROSSCHECK_AGREE:.0f}%; the farthest apart: {worst['kernel']} "
            f"{worst['shape']} {worst['precision']}, {f(worst['pct_reference'], 1)}% against "
            f"{f(worst['dobench_pct_reference'], 1)}%.")


def section_model(model_payload: dict) -> str:
    rows = model_payload["rows"]
    if not rows:
        return ""
    table = []
    for r in rows:
        params = re.sub(r"\s*precision=\w+", "", r["params"] or "").strip() or "-"
        table.append([r["kernel"], r["shape"], row_precision(r), params,
                      r.get("formula") or "-", count(r["global_loads"]),
                      count(r.get("lecture_global_loads")),
                      binary_bytes(r["global_load_bytes"]), count(r["global_stores"]),
                      count(r["shared_loads"]), binary_bytes(r["shared_load_bytes"]),
                      count(r["fma"]), binary_bytes(r["compulsory_bytes"])])
    return ("## Traffic models (closed form)\n\nWhat each kernel's threads ask for, at the "
            "tile parameters it runs at that precision: elements unless marked as bytes; "
            "the lecture column is the formula of the lecture notes \"GPU Matmul and "
            "Operator Compilation\" for a square N x N x N product (it equals the model when "
            "N is a multiple of the tiles). `python -m bench model --kernels K --shape S "
            "--precision P` prints any other.\n\n"
            + md_table(["kernel", "shape", "precision", "tile params", "lecture formula",
                        "global loads", "lecture count", "global load bytes", "global stores",
                        "shared loads", "shared load bytes", "FMAs", "compulsory bytes"], table))


def row_precision(r: dict) -> str:
    """The precision of a model row; files written before rows carried it name it in the
    tile parameters ("precision=fp16") or imply it by the element size."""
    if r.get("precision"):
        return r["precision"]
    m = re.search(r"precision=(\w+)", r.get("params") or "")
    if m:
        return m.group(1)
    return {4: "fp32", 1: "u8"}.get(int(num(r.get("elem_bytes")) or 0), "-")


def section_figures(figures: dict, out_dir: Path) -> str:
    """Each figure with its caption, in the order the families drew them."""
    from bench import plots

    if not figures:
        return ""
    parts = ["## Figures"]
    for name, files in figures.items():
        png, svg = files[0], files[1]
        parts.append(f"### {name}\n\n{plots.caption(name)} ([SVG]({svg.relative_to(out_dir)}))"
                     f"\n\n![{name}]({png.relative_to(out_dir)})")
    return "\n\n".join(parts)


def _ran_line(s: dict, env: dict) -> str:
    kinds = [k for k in results.KINDS if k in s]
    where = env.get("gpu") or env.get("device") or "an unknown device"
    if env.get("sm_count"):
        where += f" ({env['sm_count']} SMs)"
    kernels = {r["kernel"] for p in s.values() for r in p.get("rows", [])
               if r.get("status") != "skip" and r.get("kernel")}
    precisions = list(dict.fromkeys(r["precision"] for p in s.values()
                                    for r in p.get("rows", [])
                                    if r.get("status") != "skip" and r.get("precision")
                                    not in (None, "", "-")))
    when = (env.get("date_utc") or "")[:10]
    return (f"- **Ran**: {', '.join(kinds)} on {where}"
            + (f", {when}" if when else "") + (f", commit {env['git_sha']}" if env.get("git_sha")
                                              else "")
            + f": {len(kernels)} kernels at {', '.join(precisions) or 'no precision'}.")


def _check_line(check_payload: dict) -> str:
    runs, failed = ran_and_failed(check_payload["rows"])
    groups = [g for g in correctness_rows(check_payload) if g["runs"]]
    finite = [g for g in groups if not math.isnan(g["worst"])]
    worst = max(finite, key=lambda g: g["worst"], default=None)
    text = (f"- **Correctness**: {len(runs) - len(failed)} of {len(runs)} checks passed, "
            f"{len(failed)} failed, over {len(groups)} kernel x precision pairs")
    if failed:
        names = list(dict.fromkeys(f"{r['kernel']} ({r['precision']})" for r in failed))
        text += f"; failing: {', '.join(names[:6])}" + (" ..." if len(names) > 6 else "")
    elif worst is not None:
        text += (f"; the closest to its bound: {worst['kernel']} ({worst['precision']}) at "
                 f"{_fraction_text(worst['worst'])} of it")
    return text + "."


def _ceilings_line(time_payload: dict) -> str:
    c = _ceilings(time_payload)
    if not c:
        return ""
    rows = [copy_row(c)] + [r for fam in families.families() for r in fam.ceiling_rows(c)]
    return "- **Ceilings** (measured in this run unless said): " + "; ".join(
        f"{what} {value}" for what, value, _how in rows) + "."


def section_summary(s: dict, figures: dict, out_dir: Path, env: dict) -> str:
    """The first screen of report.md: what ran, how many checks passed, each family's
    headline numbers, the ceilings, where the figures are, and how to read the units."""
    lines = [_ran_line(s, env)]
    if "check" in s:
        lines.append(_check_line(s["check"]))
    for family in families.families():
        lines += family.summary_lines(s)
    if "time" in s:
        lines.append(_ceilings_line(s["time"]))
        lines.append(_crosscheck_line(s["time"]))
    if figures:
        links = ", ".join(f"[{name}]({files[0].relative_to(out_dir)})"
                          for name, files in figures.items())
        lines.append(f"- **Figures** ({FIGURES_DIR}/, PNG for slides and SVG for editing; "
                     f"each with its caption under Figures below): {links}.")
    lines.append(f"- **Units**: bytes in binary units (1 KiB = 1024 B, 1 MiB = 1024 KiB, "
                 f"1 GiB = 1024 MiB); bandwidths in GB/s (10^9 B/s), each naming the level "
                 f"it counts (threads, L1, L2, DRAM); {ABOVE_COPY} marks a bandwidth above "
                 f"the copy bandwidth measured in the run, explained where it appears.")
    return "## Summary\n\n" + "\n".join(line for line in lines if line)


def write_markdown(out_dir, figures: dict | None = None, gpu_notes: list[str] | None = None,
                   timings: dict | None = None) -> Path:
    """report.md from the result files in out_dir (and the figures already drawn)."""
    from bench import model_table

    out_dir = Path(out_dir)
    # model bytes and ratios at each row's own precision (bench/model_table.py)
    s = model_table.at_row_precision(results.load_set(out_dir))
    env = next((p.get("env") for p in s.values() if p.get("env")), {}) or {}
    parts = ["# cuda-vs-triton: report",
             "Written by `python -m bench report`; every number below is in the result files "
             "next to this report (CSV and JSON), every figure is drawn from them.",
             section_summary(s, figures or {}, out_dir, env)]
    cut = [f"{kind}: {p['meta']['incomplete']}" for kind, p in s.items()
           if (p.get("meta") or {}).get("incomplete")]
    if cut:
        parts.insert(2, "**Incomplete set.** " + "; ".join(cut))
    if gpu_notes:
        parts.append("## What needs a GPU\n\n" + "\n".join(f"- {n}" for n in gpu_notes))
    if "check" in s:
        parts.append(section_check(s["check"]))
    if "time" in s:
        parts.append(section_ceilings(s["time"]))
    for family in families.families():
        parts += family.report_sections(s)
    if "time" in s:
        parts.append(section_crosscheck(s["time"]))
        parts.append(section_errors(s["time"]))
    if "model" in s:
        parts.append(section_model(s["model"]))
    parts.append(section_figures(figures or {}, out_dir))
    parts.append(section_env(env))
    steps_file = out_dir / "steps.json"
    if timings:
        results.atomic_write_text(steps_file, json.dumps({k: round(v, 1)
                                                          for k, v in timings.items()}, indent=1))
    elif steps_file.exists():  # --replot: the timings of the run that made the results
        try:
            timings = json.loads(steps_file.read_text())
        except (OSError, ValueError):
            timings = None                   # the step times are a footnote: leave them out
    if timings:
        parts.append("## How long each step took\n\n" + md_table(
            ["step", "seconds"], [[k, f"{v:.1f}"] for k, v in timings.items()]))
    path = out_dir / "report.md"
    results.atomic_write_text(path, "\n\n".join(p for p in parts if p) + "\n")
    return path


# ---------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------

def _say(text: str) -> None:
    print(f"[report] {text}", file=sys.stderr, flush=True)


def gpu_sets() -> list[tuple[str, str]]:
    """The GPU result sets committed with the suite (results/h100, ...): (folder as the
    user would type it, what it was measured on). Empty where the suite is installed
    without them."""
    root = Path(__file__).resolve().parent.parent / "results"
    found = []
    for folder in sorted(root.glob("*/time.json")):
        folder = folder.parent
        if folder.name == Path(results.DEFAULT_OUT).name:
            continue
        try:
            env = (results.read(folder, "time") or {}).get("env") or {}
        except results.ResultFileError:
            continue
        try:
            shown = str(folder.relative_to(Path.cwd()))
        except ValueError:
            shown = str(folder)
        what = ", ".join(str(v) for v in (env.get("gpu"), (env.get("date_utc") or "")[:10]) if v)
        found.append((shown, what))
    return found


def redraw_commands() -> list[str]:
    """What a machine without a GPU can do with the committed GPU result sets: lines for
    the end of `bench report` on a CPU."""
    sets = gpu_sets()
    first = sets[0][0] if sets else "results/h100"
    name = Path(first).name
    lines = ["no GPU here; the GPU result sets committed with the suite redraw here:"]
    lines += [f"  {d}" + (f" ({w})" if w else "") for d, w in sets] or [
        "  results/h100 and the others in the repository's results/"]
    return lines + [f"figures: python -m bench plot --results {first} --out /tmp/{name}_figures",
                    f"report:  cp -r {first} /tmp/{name} && python -m bench report "
                    f"--out /tmp/{name} --replot"]


def redraw_note() -> str:
    """redraw_commands() as a line of report.md's notes."""
    sets = gpu_sets()
    first = sets[0][0] if sets else "results/h100"
    name = Path(first).name
    listed = (", ".join(f"`{d}` ({w})" if w else f"`{d}`" for d, w in sets) if sets
              else "`results/h100` and the other sets committed in the repository")
    return (f"GPU result sets to read and redraw here: {listed}. `python -m bench plot "
            f"--results {first} --out /tmp/{name}_figures` draws a set's figures; `cp -r "
            f"{first} /tmp/{name} && python -m bench report --out /tmp/{name} --replot` "
            f"rewrites its report.md and figures in a copy (the committed set stays as it "
            f"was measured).")


def holds_results(folder: Path) -> list[str]:
    """The files of a result set already in folder (result kinds, report.md, steps.json)."""
    if not folder.is_dir():
        return []
    return ([f"{k}.json" for k in results.existing_kinds(folder)]
            + [f for f in results.OTHER_FILES if (folder / f).exists()])


def suite_rows(kernels, done: list[dict], policy, ceilings: dict) -> list[dict]:
    """The shape suite (bench/families/matmul/suite.py) for the selected entries that pick
    a kernel per shape (cuda_auto, triton_auto) and cuBLAS, at every precision, with the
    ceilings of the run; rows already timed (a default shape that is also a suite shape)
    are not timed twice."""
    from bench import perf
    from bench.families.matmul import suite

    chosen = [k for k in kernels if k.chooses is not None and k.op == "matmul"]
    if not chosen:
        return []
    seen = {(r["kernel"], r["shape"], r["precision"]) for r in done}
    shapes = [s for s in suite.text().split(",")
              if any((k.name, s, p) not in seen for k in chosen for p in k.precisions)]
    if not shapes:
        return []
    _say(f"time: the shape suite ({len(shapes)} of its {len(suite.SUITE)} shapes not timed "
         f"yet) for {', '.join(k.name for k in chosen)} and cuBLAS ...")
    rows, _env, _c = perf.run(chosen, {"matmul": ",".join(shapes)}, policy=policy,
                              measure_ceilings=False, ceilings=ceilings, suite=suite.NAME)
    return [r for r in rows if (r["kernel"], r["shape"], r["precision"]) not in seen]


def run(out_dir, quick: bool = False, patterns: str | None = None, force: bool = False,
        alternate: int = 0, command: str | None = None) -> int:
    """Runs the default suite into out_dir. Returns the exit status (1 if a check failed).

    A folder that already holds a result set is refused unless force; with force, the new
    set is written into a hidden folder beside it and takes its place only once complete,
    so an interrupted run leaves the old set whole and the two are never mixed."""
    from bench import check, device, env as env_mod, model_table, plots, registry

    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise results.OutDirError(f"{target}: exists and is not a folder; choose another --out")
    old = holds_results(target)
    if old and not force:
        raise results.OutDirError(
            f"{target} already holds a result set ({', '.join(old)}); `bench report` would "
            f"replace it: add --force to replace it, use --replot to redraw it, or choose "
            f"another --out")
    results.check_writable(target)
    out = target
    if old:
        out = target.parent / f".{target.name}.new-{os.getpid()}"
        shutil.rmtree(out, ignore_errors=True)
        results.check_writable(out)
    dev = device.setup()
    env = env_mod.environment(dev)
    kernels = registry.select(patterns)
    steps: dict[str, float] = {}
    notes: list[str] = []

    t = _time.monotonic()
    _say(f"check on {dev}" + (" (Triton kernels through the interpreter)" if dev == "cpu"
                              else "") + " ...")
    shapes = "1x1x1,17x13x7" if quick and dev == "cpu" else None
    rows = check.run(kernels, shapes=shapes, exact=True, nonfinite=not quick, device=dev,
                     show_progress=True)
    results.write(out, "check", [r.as_dict() for r in rows], env=env, command=command)
    failed = [r for r in rows if r.failed]
    steps["check"] = _time.monotonic() - t
    ran = [r for r in rows if r.status != "skip"]
    _say(f"check: {len(ran) - len(failed)} passed, {len(failed)} failed, "
         f"{len(rows) - len(ran)} skipped ({steps['check']:.0f} s)")

    t = _time.monotonic()
    _say("models ...")
    results.write(out, "model", model_table.rows(kernels), env=env, command=command)
    steps["model"] = _time.monotonic() - t

    if dev == "cuda":
        from bench import perf, profile
        from bench.timing import Policy

        t = _time.monotonic()
        _say("time (ceilings first) ...")
        policy = Policy(target_s=0.15, budget_s=2.0) if quick else Policy()
        policy.alternate = alternate
        shapes_t = perf.quick_shapes(kernels) if quick else None
        trows, tenv, ceilings = perf.run(kernels, shapes_t, policy=policy)
        results.write(out, "time", trows, env=tenv, meta={"ceilings": ceilings},
                      command=command)
        if not quick:
            trows += suite_rows(kernels, trows, policy, ceilings)
            results.write(out, "time", trows, env=tenv, meta={"ceilings": ceilings},
                      command=command)
        failed += [r for r in trows if r.get("status") == "FAIL"]   # wrong after timing
        steps["time"] = _time.monotonic() - t

        t = _time.monotonic()
        if profile.find_ncu():
            _say("profile (Nsight Compute: one process for all kernels) ...")
            penv = env_mod.environment(dev)

            def checkpoint(rows, meta):  # a cut-short run keeps what it measured
                results.write(out, "profile", rows, env=penv, meta=meta, command=command)

            try:
                prows, pmeta = profile.run(
                    [k for k in kernels if k.backend not in registry.REFERENCE_BACKENDS], None,
                    None, out, checkpoint=checkpoint)
                results.write(out, "profile", prows, env=penv, meta=pmeta, command=command)
            except profile.CounterPermissionError as exc:
                notes.append(str(exc))
        else:
            notes.append("Nsight Compute (ncu) was not found: no counters, no traffic figure.")
        steps["profile"] = _time.monotonic() - t
    else:
        notes += [
            "This report was made without a GPU. Triton kernels ran through the interpreter "
            "(TRITON_INTERPRET=1) for correctness only; the CUDA kernels and cuBLAS did not "
            "run (marked skip).",
            "Timings (`python -m bench time`), the measured ceilings, the throughput and "
            "roofline figures and the right half of the lecture figure need a CUDA GPU; "
            "interpreter timings are meaningless and are not taken.",
            "Counters (`python -m bench profile`) and the measured traffic figure need a GPU "
            "and Nsight Compute. The model figures below (the traffic per rung, and the "
            "lecture figure's model half) need neither.",
            redraw_note(),
        ]

    t = _time.monotonic()
    _say("figures ...")
    figures = plots.all_figures(out, out / "figures", progress=True)
    steps["figures"] = _time.monotonic() - t
    _say(f"figures: {len(figures)} ({', '.join(figures) or 'none'}; "
         f"{steps['figures']:.0f} s)")
    path = write_markdown(out, figures, notes, steps)
    set_readme.write(out)                    # from the files above (bench/set_readme.py)
    if out != target:                        # the complete new set takes the old one's place
        retired = target.parent / f".{target.name}.old-{os.getpid()}"
        os.replace(target, retired)
        os.replace(out, target)
        shutil.rmtree(retired, ignore_errors=True)
        path = target / path.name
    _say(f"wrote {path} ({sum(steps.values()):.0f} s)")
    if dev != "cuda":
        for line in redraw_commands():
            _say(line)
    if failed:
        _say(f"{len(failed)} correctness check(s) failed; see the Correctness table (and "
             f"the Throughput section's errors for answers wrong after timing)")
        return 1
    return 0
