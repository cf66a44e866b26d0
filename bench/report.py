"""`python -m bench report --out DIR`: the whole default suite, its files, figures and report.md.

On a GPU it runs check, time (with the ceilings), model and, where ncu exists, profile;
then draws every figure and writes DIR/report.md with the tables. On a CPU-only machine
it runs what can run: the Triton kernels through the interpreter on small shapes
(correctness only: interpreter timings say nothing about a GPU and are not taken), the
models at lecture sizes and the model-only figure, and it says what needs a GPU.

The tables are built from the result files (bench/results.py), like the figures, so
`python -m bench report --from DIR` can rewrite report.md from a stored result set.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time as _time
from pathlib import Path

from bench import families, results
from bench.results import num
from bench.text import f, human_bytes, md_table, sci


# ---------------------------------------------------------------------------------------
# Markdown helpers
# ---------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------
# Sections (each takes payloads and returns markdown)
# ---------------------------------------------------------------------------------------

def section_env(env: dict) -> str:
    keys = ("date_utc", "device", "gpu", "sm_count", "compute_capability", "memory_gib",
            "l2_cache_bytes", "driver", "cuda_runtime", "torch", "triton", "numpy", "python",
            "git_sha", "sm_clock_max_mhz", "sm_clock_mhz_before", "sm_clock_mhz_after",
            "power_limit_w", "note")
    rows = [[k, env[k]] for k in keys if env.get(k) not in (None, "")]
    return "## Environment\n\n" + md_table(["what", "value"], rows)


def section_ceilings(time_payload: dict) -> str:
    from bench import families

    c = (time_payload.get("meta") or {}).get("ceilings") or {}
    if not c:
        return ""
    rows = [["device copy bandwidth (read + write)", f"{f(c.get('copy_gbps'), 0)} GB/s",
             f"{human_bytes(c.get('copy_bytes'))} copied, median of the timed copies"]]
    for family in families.families():
        rows += family.ceiling_rows(c)
    return ("## Ceilings measured in this run\n\n"
            + md_table(["ceiling", "value", "how"], rows))


def section_check(check_payload: dict) -> str:
    rows = check_payload["rows"]
    shapes = list(dict.fromkeys(r["shape"] for r in rows if r["shape"] != "-"))
    keyed: dict = {}
    notes = []
    for r in rows:
        key = (r["kernel"], r["precision"])
        cell = keyed.setdefault(key, {})
        if r["status"] == "skip":
            cell.setdefault(r["shape"], "skip")
            if r.get("note") and (r["kernel"], r["note"]) not in notes:
                notes.append((r["kernel"], r["note"]))
            continue
        if r["status"] in ("FAIL", "ERROR"):
            cell[r["shape"]] = f"**{r['status']}** ({r['mode']}, {sci(r['error'])})"
            continue
        prev = cell.get(r["shape"])
        if prev and prev.startswith("**"):
            continue
        err = num(r["error"])
        best = max(err, num(prev)) if prev not in (None, "skip") else err
        cell[r["shape"]] = sci(best)
    # kernels that ran nowhere (no GPU here) are one line below the table, not a row of skips
    table = [[k, p] + [keyed[(k, p)].get(s, "") for s in shapes] for (k, p) in keyed
             if any(v != "skip" for v in keyed[(k, p)].values())]
    failed = sum(1 for r in rows if r["status"] in ("FAIL", "ERROR"))
    ran = sum(1 for r in rows if r["status"] != "skip")
    modes = sorted({r["mode"] for r in rows if r["status"] != "skip"})
    text = (f"## Correctness\n\nLargest relative error per kernel x shape over the modes "
            f"{', '.join(modes) or '-'} (error definition and bound: each op's Problem in bench/families/). "
            f"{ran - failed} of {ran} runs passed, {failed} failed.\n\n"
            + (md_table(["kernel", "precision"] + shapes, table) if table
               else "No kernel could run on this machine."))
    if notes:
        text += "\n\nSkipped: " + "; ".join(f"{k}: {n}" for k, n in notes[:12])
    return text


def section_errors(time_payload: dict) -> str:
    """Timed runs that raised or whose answer was wrong after timing, over every op."""
    errors = [r for r in time_payload["rows"] if r.get("status") in ("ERROR", "FAIL")]
    if not errors:
        return ""
    return ("## Errors while timing\n\n"
            + "\n".join(f"- {r['kernel']} {r.get('shape')} {r.get('precision')}: {r.get('note')}"
                        for r in errors[:20]))


def section_model(model_payload: dict) -> str:
    rows = model_payload["rows"]
    if not rows:
        return ""
    table = []
    for r in rows:
        table.append([r["kernel"], r["shape"], r["params"], r.get("formula") or "-",
                      f(r["global_loads"]), f(r.get("lecture_global_loads")),
                      human_bytes(r["global_load_bytes"]), f(r["global_stores"]),
                      f(r["shared_loads"]), human_bytes(r["shared_load_bytes"]),
                      f(r["fma"]), human_bytes(r["compulsory_bytes"])])
    return ("## Traffic models (closed form)\n\nElements unless marked as bytes; the lecture "
            "column is the formula of the lecture notes for a square N x N x N product "
            "(it equals the model when N is a multiple of the tiles).\n\n"
            + md_table(["kernel", "shape", "tile params", "lecture formula", "global loads",
                        "lecture count", "global load bytes", "global stores", "shared loads",
                        "shared load bytes", "FMAs", "compulsory bytes"], table))


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


def write_markdown(out_dir, figures: dict | None = None, gpu_notes: list[str] | None = None,
                   timings: dict | None = None) -> Path:
    """report.md from the result files in out_dir (and the figures already drawn)."""
    out_dir = Path(out_dir)
    s = results.load_set(out_dir)
    env = next((p.get("env") for p in s.values() if p.get("env")), {}) or {}
    parts = ["# cuda-vs-triton: report",
             "Written by `python -m bench report`; every number below is in the result files "
             "next to this report (CSV and JSON), every figure is drawn from them."]
    if gpu_notes:
        parts.append("## What needs a GPU\n\n" + "\n".join(f"- {n}" for n in gpu_notes))
    parts.append(section_env(env))
    if "time" in s:
        parts.append(section_ceilings(s["time"]))
    if "check" in s:
        parts.append(section_check(s["check"]))
    for family in families.families():
        parts += family.report_sections(s)
    if "time" in s:
        parts.append(section_errors(s["time"]))
    if "model" in s:
        parts.append(section_model(s["model"]))
    parts.append(section_figures(figures or {}, out_dir))
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


def holds_results(folder: Path) -> list[str]:
    """The files of a result set already in folder (result kinds, report.md, steps.json)."""
    if not folder.is_dir():
        return []
    return ([f"{k}.json" for k in results.existing_kinds(folder)]
            + [f for f in results.OTHER_FILES if (folder / f).exists()])


def run(out_dir, quick: bool = False, patterns: str | None = None, force: bool = False) -> int:
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
    _say(f"check on {dev} ...")
    shapes = "1x1x1,17x13x7" if quick and dev == "cpu" else None
    rows = check.run(kernels, shapes=shapes, exact=True, nonfinite=not quick, device=dev)
    results.write(out, "check", [r.as_dict() for r in rows], env=env)
    failed = [r for r in rows if r.failed]
    steps["check"] = _time.monotonic() - t

    t = _time.monotonic()
    _say("models ...")
    results.write(out, "model", model_table.rows(kernels), env=env)
    steps["model"] = _time.monotonic() - t

    if dev == "cuda":
        from bench import perf, profile
        from bench.timing import Policy

        t = _time.monotonic()
        _say("time (ceilings first) ...")
        policy = Policy(target_s=0.15, budget_s=2.0) if quick else Policy()
        shapes_t = perf.quick_shapes(kernels) if quick else None
        trows, tenv, ceilings = perf.run(kernels, shapes_t, policy=policy)
        results.write(out, "time", trows, env=tenv, meta={"ceilings": ceilings})
        failed += [r for r in trows if r.get("status") == "FAIL"]   # wrong after timing
        steps["time"] = _time.monotonic() - t

        t = _time.monotonic()
        if profile.find_ncu():
            _say("profile (Nsight Compute: one process for all kernels) ...")
            penv = env_mod.environment(dev)

            def checkpoint(rows, meta):  # a cut-short run keeps what it measured
                results.write(out, "profile", rows, env=penv, meta=meta)

            try:
                prows, pmeta = profile.run(
                    [k for k in kernels if k.backend not in profile.REFERENCE_BACKENDS], None,
                    None, out, checkpoint=checkpoint)
                results.write(out, "profile", prows, env=penv, meta=pmeta)
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
            "Timings (`python -m bench time`), the measured ceilings, the throughput, "
            "roofline and lecture figures need a CUDA GPU; interpreter timings are "
            "meaningless and are not taken.",
            "Counters (`python -m bench profile`) and the measured traffic figure need a GPU "
            "and Nsight Compute. The model figure below needs neither.",
        ]

    t = _time.monotonic()
    _say("figures ...")
    figures = plots.all_figures(out, out / "figures")
    steps["figures"] = _time.monotonic() - t
    path = write_markdown(out, figures, notes, steps)
    if out != target:                        # the complete new set takes the old one's place
        retired = target.parent / f".{target.name}.old-{os.getpid()}"
        os.replace(target, retired)
        os.replace(out, target)
        shutil.rmtree(retired, ignore_errors=True)
        path = target / path.name
    _say(f"wrote {path} ({sum(steps.values()):.0f} s)")
    if failed:
        _say(f"{len(failed)} correctness check(s) failed; see the Correctness table (and "
             f"the Throughput section's errors for answers wrong after timing)")
        return 1
    return 0
