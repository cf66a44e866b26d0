"""Tests of the fast-matmul research scripts (not in the default test run, which collects
tests/ only): `python -m pytest docs/research/fast_matmul` from the repository root."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[2])]


def test_report_verdicts_judge_the_row_major_b():
    import tune_report as tr

    def row(p, layout, kernel, ratio, long_ms=1.0):
        return dict(precision=p, b_layout=layout, kernel=kernel, ratio=ratio, correct=True,
                    long_sleep_ms=long_ms, best_config="cfg", host_leak=False)

    rows = [row("tf32", "row", "cuBLAS", 1.0), row("tf32", "row", "triton_autotuned", 0.56),
            row("tf32", "row", "triton_persistent", 0.77),
            row("tf32", "row", "triton_persistent (transpose)", 0.99),   # an option: not judged
            row("tf32", "col", "cuBLAS", 1.0), row("tf32", "col", "triton_persistent", 0.95),
            row("fp16", "row", "cuBLAS", 1.0), row("fp16", "row", "triton_persistent", 0.985)]
    v = {(x["precision"], x["b_layout"]): x for x in tr.verdicts(rows)}
    assert v[("tf32", "row")]["kernel"] == "triton_persistent" and not v[("tf32", "row")]["meets"]
    assert v[("tf32", "col")]["meets"] and not v[("tf32", "col")]["judged"]
    assert v[("fp16", "row")]["meets"] and v[("fp16", "row")]["judged"]


def test_probe_variant_names_are_unique_and_complete():
    import tune_probe

    vs = tune_probe.variants()
    names = [v.name for v in vs]
    assert len(names) == len(set(names))
    for precision in tune_probe.PRECISIONS:
        assert f"{precision}/cublas" in names
        assert any(v.precision == precision and v.family != "cublas" for v in vs)
    assert tune_probe.main(["--list"]) == 0


@pytest.mark.interpreter
def test_probe_dry_run_on_the_cpu(tmp_path, monkeypatch):
    """The whole probe flow (a worker process, the main phase, the table) on one variant."""
    import tune_probe

    monkeypatch.setattr(tune_probe, "DEVICE", tune_probe.DEVICE)
    rc = tune_probe.main(["--dry-run-cpu", "--n", "32", "--workers", "1",
                          "--only", r"^fp16/persistent/128x128x64w8s4$", "--out", str(tmp_path)])
    assert rc == 0
    report = json.loads((tmp_path / "probe.json").read_text())
    rows = {r["name"]: r for r in report["variants"]}
    row = rows["fp16/persistent/128x128x64w8s4"]
    assert row["status"] == "ok" and row["correct"], row
    assert all(o["ok"] for o in row.get("odd", [])) or "odd" not in row
    assert "fp16" in (tmp_path / "probe_table.txt").read_text()
