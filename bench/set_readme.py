"""README.md of a result set: what wrote it, where, when, and what each file holds.

Every command that writes a result set (check, time, model and profile with an --out,
report) ends by writing DIR/README.md from the set's files alone, and
`python -m bench results-readme DIR` writes it again the same way, so the README of a
committed set can be checked byte for byte (`--check`): its numbers are generated, never
typed. It reads, for each kind of run (bench/results.py KINDS):

- the command(s) that wrote it: `meta["commands"]`, which results.write records (each
  --append adds its own); a set written before they were recorded says so, and names
  `bench report` where its steps.json shows the report wrote it;
- the environment of the run (`env`): the commit, the date, the GPU, the driver, the CUDA,
  torch and triton versions;
- how many rows it holds, by status.

The text holds no path of the set, so a set moved to another folder keeps a true README.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bench import results
from bench.text import md_table

NAME = "README.md"
COMMAND = "python -m bench results-readme DIR"

# What each file a command of the harness writes holds (KINDS' files are added below).
_WHAT = {
    "report.md": "the report: tables and notes drawn from the files here "
                 "(`python -m bench report --out DIR --replot` redraws it and figures/)",
    "steps.json": "seconds each step of `python -m bench report` took",
    "figures": "the figures, each as PNG and SVG, drawn from the files here",
    "gpu.csv": "nvidia-smi's reading of the GPU before the run (`.ci/gpu.sh`)",
    "ncu": "Nsight Compute's batch record (`bench profile`; its report files, *.ncu-rep, "
           "are not counted: large, binary, never committed, remade by `bench profile`)",
}
# Files a set's folder may hold on the machine that measured it, and nowhere else (.ci/gpu.sh
# leaves them out of its archive): counted, the README would differ once the set is copied.
_LEFT_OUT = ".ncu-rep"
_KIND_WHAT = {
    "check": "correctness runs against a float64 reference",
    "time": "timings, the ceilings measured in the run (meta) and the ratios to the reference",
    "model": "closed-form traffic of each kernel, computed, not measured",
    "profile": "Nsight Compute counters beside the model",
}
# The machine and its software, in the order the README lists them: (env key, label).
_MACHINE = (("gpu", "GPU"), ("sm_count", "SMs"), ("compute_capability", "compute capability"),
            ("memory_gib", "memory (GiB)"), ("power_limit_w", "power limit (W)"),
            ("driver", "driver"), ("cuda_runtime", "CUDA"), ("torch", "torch"),
            ("triton", "triton"), ("python", "Python"), ("version", "cuda-vs-triton"))


class NotASetError(ValueError):
    """A folder without result files (the message is one line)."""


def _one(values) -> str:
    """The distinct values, in first-seen order, joined; '-' if there are none."""
    seen = [str(v) for v in dict.fromkeys(v for v in values if v not in (None, ""))]
    return "; ".join(seen) or "-"


def _steps(folder: Path) -> dict:
    try:
        steps = json.loads((folder / "steps.json").read_text())
    except (OSError, ValueError):
        return {}
    return steps if isinstance(steps, dict) else {}


def _commands(kind: str, payload: dict, steps: dict) -> str:
    done = (payload.get("meta") or {}).get("commands") or []
    if done:
        return "<br>".join(f"`{c}`" for c in done)
    if kind in steps:      # written before commands were recorded: steps.json names report
        return "`python -m bench report` (steps.json; its arguments, and any --append after " \
               "it, not recorded)"
    return f"`python -m bench {kind}` (arguments not recorded)"


def _statuses(rows: list[dict]) -> str:
    counts = Counter(r.get("status") for r in rows if r.get("status"))
    by = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return ", ".join(f"{n} {s}" for s, n in by)


def _files(folder: Path, kinds: list[str]) -> list[list[str]]:
    rows = []
    for path in sorted(folder.iterdir()):
        name = path.name
        stem, _, suffix = name.rpartition(".")
        if name == NAME or name.startswith(".") or (stem in kinds and suffix == "csv"):
            continue                          # a kind's CSV shares the row of its JSON
        if path.is_dir():
            n = sum(1 for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")
                    and p.suffix != _LEFT_OUT)
            rows.append([f"{name}/", f"{n} file{'s' if n != 1 else ''}: "
                         + _WHAT.get(name, "written beside the set, not by the harness")])
        elif stem in kinds and suffix == "json":
            both = (folder / f"{stem}.csv").exists()
            rows.append([f"{stem}.csv, {name}" if both else name,
                         _KIND_WHAT[stem] + (" (the CSV: one row per line; the JSON: the "
                                             "same rows, env and meta)" if both else "")])
        else:
            rows.append([name, _WHAT.get(name, "written beside the set, not by the harness")])
    return rows


def text(folder) -> str:
    """The README.md of the result set in folder, from its files alone."""
    folder = Path(folder)
    found = results.load_set(folder)      # a corrupt or older file: ResultFileError
    if not found:
        raise NotASetError(f"{folder}: not a result set (no "
                           f"{', '.join(k + '.json' for k in results.KINDS)})")
    steps = _steps(folder)
    envs = [p.get("env") or {} for p in found.values()]
    dates = sorted({(e.get("date_utc") or "")[:10] for e in envs} - {""})
    gpu = _one(e.get("gpu") or e.get("device") for e in envs)
    commit = _one(e.get("git_sha") for e in envs)
    when = dates[0] if len(dates) == 1 else (f"{dates[0]} to {dates[-1]}" if dates else "-")
    parts = [
        f"# Result set: {gpu}, commit {commit}, {when}",
        f"Written by the harness from the files of this folder (`{COMMAND}` writes it again; "
        f"`--check` says whether it still matches them). Edit the files or run the commands "
        f"again, never this text.",
        "## What ran\n\n" + md_table(
            ["kind", "rows", "commit", "date (UTC)", "command"],
            [[k, f"{len(p['rows'])}" + (f" ({s})" if (s := _statuses(p["rows"])) else ""),
              (p.get("env") or {}).get("git_sha") or "-",
              (p.get("env") or {}).get("date_utc") or "-",
              _commands(k, p, steps)] for k, p in found.items()]),
        "## Machine\n\n" + md_table(
            ["what", "value"],
            [[label, _one(e.get(key) for e in envs)] for key, label in _MACHINE
             if any(e.get(key) not in (None, "") for e in envs)]),
    ]
    cut = [f"{k}: {p['meta']['incomplete']}" for k, p in found.items()
           if (p.get("meta") or {}).get("incomplete")]
    if cut:
        parts.append("**Incomplete set.** " + "; ".join(cut))
    parts.append("## Files\n\n" + md_table(["file", "what it holds"], _files(folder, list(found))))
    return "\n\n".join(parts) + "\n"


def write(folder) -> Path:
    """Writes folder/README.md (atomically, like every file of a set); returns its path."""
    return results.atomic_write_text(Path(folder) / NAME, text(folder))


def stale(folder) -> bool:
    """True if folder/README.md is missing or differs from what text() writes."""
    path = Path(folder) / NAME
    return not path.exists() or path.read_text() != text(folder)
