"""Result files: every command that measures something writes them; plots and the report
read them (never the printed output).

A result set is a directory holding, for each kind of run that happened,

    <kind>.csv    one row per measurement, for spreadsheets and pandas
    <kind>.json   {"schema", "kind", "env", "meta", "rows"}: the same rows plus the
                  environment they were measured in and run-wide facts (ceilings, ...)

with kind one of KINDS. Missing values are empty cells in CSV and null in JSON (JSON has
no NaN). Numbers are written with full precision: a plot must not depend on rounding.
"""
from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

SCHEMA = "cuda-vs-triton/results/1"
KINDS = ("check", "time", "model", "profile")


def _clean(value):
    """JSON-safe value: NaN and infinities become None (null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write(out_dir, kind: str, rows: list[dict], env: dict | None = None,
          meta: dict | None = None) -> tuple[Path, Path]:
    """Writes <out_dir>/<kind>.csv and .json; returns their paths."""
    if kind not in KINDS:
        raise ValueError(f"results: kind must be one of {KINDS}, got {kind!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for r in rows:  # union of keys, in first-seen order (rows of several ops may differ)
        columns.extend(k for k in r if k not in columns)
    csv_path, json_path = out / f"{kind}.csv", out / f"{kind}.json"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if _clean(r.get(k)) is None else r.get(k) for k in columns})
    payload = {"schema": SCHEMA, "kind": kind, "env": _clean(env or {}),
               "meta": _clean(meta or {}), "rows": _clean(rows)}
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, json_path)  # a reader never sees half a file
    return csv_path, json_path


def read(result_dir, kind: str) -> dict | None:
    """The payload of <result_dir>/<kind>.json, or None if that run did not happen."""
    path = Path(result_dir) / f"{kind}.json"
    if not path.exists():
        return None
    payload = json.loads(path.read_text())
    if payload.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {payload.get('schema')!r}, expected {SCHEMA!r}")
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
