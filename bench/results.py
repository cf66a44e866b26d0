"""Result files: every command that measures something writes them; plots and the report
read them (never the printed output).

A result set is a directory holding, for each kind of run that happened,

    <kind>.csv    one row per measurement, for spreadsheets and pandas
    <kind>.json   {"schema", "kind", "env", "meta", "rows"}: the same rows plus the
                  environment they were measured in and run-wide facts (ceilings, ...)

with kind one of KINDS, and the README.md that bench/set_readme.py writes from them (the
command lines that wrote each kind are in its meta["commands"]). Missing values are empty cells in CSV and null in JSON (JSON has
no NaN). Numbers are written with full precision: a plot must not depend on rounding.

Nothing is lost and nothing is mixed:

- every file is written atomically (a temporary file in the same folder, then a rename),
  so an interrupted run leaves the previous file whole;
- a command never writes over a result set it did not make: `guard_out` refuses a folder
  that already holds the kinds it would write (unless the user says --force or --append),
  and refuses to add rows or files measured in another environment (GPU, driver, CUDA,
  torch, triton, commit: ENV_KEYS) beside the ones there;
- a file that is not a result file of this version (older schema, corrupt JSON) is
  reported in one line naming the file and what to do (ResultFileError).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path

SCHEMA = "cuda-vs-triton/results/1"
KINDS = ("check", "time", "model", "profile")
# What must agree for rows to sit in one result set: the machine and the software stack.
ENV_KEYS = ("device", "gpu", "driver", "cuda_runtime", "torch", "triton", "version", "git_sha")
# Files of a result set other than <kind>.csv/json.
OTHER_FILES = ("report.md", "steps.json")
# Where every command that writes puts its files unless told (--out): a folder the
# repository ignores, beside the committed sets (results/h100, ...), never over them.
DEFAULT_OUT = "results/local"


class ResultFileError(ValueError):
    """A result file that cannot be read as one of this version (the message is one line)."""


class OutDirError(Exception):
    """An output folder that cannot or must not be written (the message is one line)."""


# ---------------------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------------------

def atomic_write_bytes(path, data: bytes) -> Path:
    """Writes data to path through a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)       # a reader sees the old file or the new one, never half
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode())


def atomic_savefig(fig, path, **kwargs) -> Path:
    """fig.savefig(path) through a temporary file (format from path's suffix), then a rename."""
    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip("."), **kwargs)
    return atomic_write_bytes(path, buf.getvalue())


# ---------------------------------------------------------------------------------------
# Guarding an output folder
# ---------------------------------------------------------------------------------------

def env_differences(old: dict, new: dict) -> list[str]:
    """'key: old -> new' for every ENV_KEYS entry on which two environments disagree."""
    diffs = []
    for k in ENV_KEYS:
        a, b = (old or {}).get(k), (new or {}).get(k)
        if a != b:
            diffs.append(f"{k}: {a} -> {b}")
    return diffs


def _describe(payload: dict) -> str:
    env = payload.get("env") or {}
    where = env.get("gpu") or env.get("device") or "unknown device"
    return f"{where}, commit {env.get('git_sha', '?')}, {env.get('date_utc', '?')}"


def existing_kinds(out_dir) -> list[str]:
    """The kinds whose JSON or CSV file is in out_dir."""
    out = Path(out_dir)
    return [k for k in KINDS if (out / f"{k}.json").exists() or (out / f"{k}.csv").exists()]


def check_writable(out_dir) -> Path:
    """Creates out_dir if needed and proves it can hold a new file; OutDirError if not."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".write-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutDirError(f"{out}: cannot write results there ({exc.strerror or exc}); "
                          f"choose another --out") from None
    return out


def guard_out(out_dir, kinds, env: dict | None, *, force: bool = False,
              append: bool = False, command: str = "bench") -> Path:
    """Checks, before any work, that a command may write `kinds` into out_dir.

    - a kind already there is replaced only with force; with append, rows are added to it
      only if its environment matches `env` (ENV_KEYS);
    - the other kinds there (not written now) must come from the same environment, or
      the set would mix two machines or two versions of the code;
    - the folder must be writable.
    Raises OutDirError (one line) or ResultFileError; returns the folder.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutDirError(f"{out}: exists and is not a folder; choose another --out")
    present = existing_kinds(out) if out.exists() else []
    present.sort(key=lambda k: k not in kinds)      # its own files first: the clearer message
    for kind in present:
        payload = read(out, kind)
        stored_env = (payload or {}).get("env") or {}
        mine = kind in kinds
        if mine and force:
            continue
        if mine and not append:
            raise OutDirError(
                f"{out} already holds {kind}.json ({_describe(payload or {})}); "
                f"`{command}` would replace it: add --force to replace it"
                + (", --append to add rows measured here" if kind in ("time", "profile")
                   else "") + ", or choose another --out")
        if env is not None:
            diffs = env_differences(stored_env, env)
            if diffs:
                what = "add rows to" if mine else "write beside"
                raise OutDirError(
                    f"{out}/{kind}.json was measured in another environment "
                    f"({'; '.join(diffs)}): `{command}` will not {what} it; choose another "
                    f"--out" + ("" if mine else f" (or move {kind}.* away)"))
    return check_writable(out)


def _clean(value):
    """JSON-safe value: NaN and infinities become None (null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def recorded_command(argv: list[str], cwd: Path | None = None) -> str:
    """The command line `python -m bench ARGV` as the result files record it: an --out
    folder inside the working directory as a path relative to it, one outside it (a scratch
    folder of the machine that ran the command, such as a GPU run's output folder) as DIR,
    so that the record means the same on any machine."""
    import shlex

    cwd = (cwd or Path.cwd()).resolve()

    def portable(path: str) -> str:
        full = (cwd / path).resolve()
        return str(full.relative_to(cwd)) if full.is_relative_to(cwd) else "DIR"

    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--out" and i + 1 < len(argv):
            out += [arg, portable(argv[i + 1])]
            i += 2
            continue
        out.append("--out=" + portable(arg[6:]) if arg.startswith("--out=") else arg)
        i += 1
    return "python -m bench " + shlex.join(out)


def write(out_dir, kind: str, rows: list[dict], env: dict | None = None,
          meta: dict | None = None, command: str | None = None) -> tuple[Path, Path]:
    """Writes <out_dir>/<kind>.csv and .json; returns their paths.

    command, the command line that measured the rows, is added to meta["commands"] (the
    commands of the rows already there, which an --append passes in meta) unless it is
    the last one there already (a checkpoint of the same run); the set's README names them
    (bench/set_readme.py)."""
    if kind not in KINDS:
        raise ValueError(f"results: kind must be one of {KINDS}, got {kind!r}")
    meta = dict(meta or {})
    if command:
        done = list(meta.get("commands") or [])
        meta["commands"] = done if done and done[-1] == command else done + [command]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for r in rows:  # union of keys, in first-seen order (rows of several ops may differ)
        columns.extend(k for k in r if k not in columns)
    csv_path, json_path = out / f"{kind}.csv", out / f"{kind}.json"
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=columns)
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if _clean(r.get(k)) is None else r.get(k) for k in columns})
    payload = {"schema": SCHEMA, "kind": kind, "env": _clean(env or {}),
               "meta": _clean(meta or {}), "rows": _clean(rows)}
    body = json.dumps(payload, indent=1, sort_keys=False) + "\n"   # fails before any write
    atomic_write_text(csv_path, text.getvalue())
    atomic_write_text(json_path, body)
    return csv_path, json_path


def merge_rows(old: list[dict], new: list[dict]) -> list[dict]:
    """An --append: the earlier rows, except those measured again (same kernel, shape and
    precision), then the new ones."""
    key = lambda r: (r.get("kernel"), r.get("shape"), r.get("precision"))
    again = {key(r) for r in new}
    return [r for r in old if key(r) not in again] + list(new)


def earlier_commands(payload: dict | None) -> list[str]:
    """The commands recorded in a result file's meta (none for a file written before they
    were recorded): what an --append passes on to write()."""
    return list(((payload or {}).get("meta") or {}).get("commands") or [])


def read(result_dir, kind: str) -> dict | None:
    """The payload of <result_dir>/<kind>.json, or None if that run did not happen."""
    path = Path(result_dir) / f"{kind}.json"
    if not path.exists():
        return None
    try:
        payload = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultFileError(f"{path}: not readable as a result file ({exc}); re-run the "
                              f"command that made it (`python -m bench {kind} --out "
                              f"{path.parent} --force`) or move the file away") from None
    if not isinstance(payload, dict) or payload.get("schema") != SCHEMA:
        schema = payload.get("schema") if isinstance(payload, dict) else None
        raise ResultFileError(f"{path}: a result file of another version (schema {schema!r}, "
                              f"this version reads {SCHEMA!r}); re-run `python -m bench {kind} "
                              f"--out {path.parent} --force`, or read it with the version that "
                              f"wrote it")
    if payload.get("kind") not in (None, kind) or not isinstance(payload.get("rows"), list):
        raise ResultFileError(f"{path}: not a {kind} result file (kind {payload.get('kind')!r}, "
                              f"rows missing or not a list); move it away or re-run "
                              f"`python -m bench {kind} --out {path.parent} --force`")
    return payload


def load_set(result_dir) -> dict[str, dict]:
    """Every payload of a result set, keyed by kind (absent kinds are left out)."""
    found = {}
    for kind in KINDS:
        p = read(result_dir, kind)
        if p is not None:
            found[kind] = p
    return found


def num(value) -> float:
    """A row value as a float (None/'' -> NaN), for arithmetic on loaded rows."""
    if value is None or value == "":
        return math.nan
    return float(value)
