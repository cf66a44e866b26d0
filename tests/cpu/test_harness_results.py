"""Result files round-trip, timing statistics, and the repetition policy. CPU only."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from bench import results, timing


def test_round_trip(tmp_path):
    rows = [{"kernel": "a", "median_ms": 1.5, "pct": math.nan, "note": ""},
            {"kernel": "b", "median_ms": 2.0, "extra": 3}]
    csv_path, json_path = results.write(tmp_path, "time", rows, env={"gpu": "X"},
                                        meta={"ceilings": {"copy_gbps": 3000.0}})
    back = results.read(tmp_path, "time")
    assert back["env"] == {"gpu": "X"}
    assert back["meta"]["ceilings"]["copy_gbps"] == 3000.0
    assert back["rows"][0]["pct"] is None            # NaN -> null, valid JSON
    assert back["rows"][1]["extra"] == 3
    json.loads(json_path.read_text())                 # strict JSON
    with open(csv_path) as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["kernel", "median_ms", "pct", "note", "extra"]
    assert table[0]["pct"] == "" and table[1]["extra"] == "3"
    assert results.num(table[0]["pct"]) != results.num(table[0]["pct"])  # NaN
    assert set(results.load_set(tmp_path)) == {"time"}


def test_unknown_kind_and_schema(tmp_path):
    with pytest.raises(ValueError):
        results.write(tmp_path, "nope", [])
    (tmp_path / "check.json").write_text(json.dumps({"schema": "other", "rows": []}))
    with pytest.raises(ValueError):
        results.read(tmp_path, "check")
    assert results.read(tmp_path, "profile") is None


def test_quartiles():
    q1, med, q3 = timing.quartiles([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (q1, med, q3) == (2.0, 3.0, 4.0)
    assert timing.quartiles([7.0]) == (7.0, 7.0, 7.0)


def test_repetition_policy():
    p = timing.Policy()
    assert p.reps_for(1e-5) == p.max_reps            # tiny kernels: capped
    assert p.reps_for(0.005) == 80                    # 0.4 s worth
    assert p.reps_for(0.05) == p.min_reps             # at least 20 ...
    assert p.reps_for(1.0) == 4                       # ... unless that blows the budget
    assert p.reps_for(10.0) == p.floor_reps           # never fewer than 3


def test_timing_dict_has_iqr_and_host_time():
    t = timing.Timing(median_ms=2.0, q1_ms=1.5, q3_ms=2.5, min_ms=1.0, reps=20)
    assert t.as_dict()["iqr_ms"] == 1.0 and t.as_dict()["host_ms"] is None
    assert timing.Timing(2.0, 1.5, 2.5, 1.0, 20, host_ms=0.05).as_dict()["host_ms"] == 0.05


def test_sweep_plan_adds_cublas_at_used_precisions():
    from bench import perf, registry

    everything = registry.kernels()
    work, skipped = perf.plan(registry.select("cuda_v3*"), "256x256x256,512x512x512", None,
                              everything)
    names = [(k.name, p, str(s)) for _prob, s, k, p, _ref in work]
    assert ("cuda_v3_smem_tiling", "fp32", "256x256x256") in names
    assert ("cublas", "fp32", "512x512x512") in names
    assert not any(n == "cublas" and p != "fp32" for n, p, _s in names)
    assert [ref for *_x, ref in work].count(True) == 2
    assert skipped == []


def test_derive_percentages():
    from bench import perf

    ceilings = {"copy_gbps": 3000.0, "cublas_tflops": {"fp32": 50.0}}
    base = dict(op="matmul", shape="1024x1024x1024", precision="fp32", flops=2 * 1024**3,
                compulsory_bytes=12 * 1024**2)
    rows = [dict(base, kernel="cublas", is_reference=True, median_ms=0.05, tflops=42.9),
            dict(base, kernel="mine", is_reference=False, median_ms=0.1, tflops=21.5)]
    perf.derive(rows, ceilings)
    assert rows[0]["pct_reference"] == 100
    assert rows[1]["pct_reference"] == 50
    assert rows[1]["roof_tflops"] == 50.0          # compute-bound at this intensity
    assert rows[1]["pct_roof"] == pytest.approx(43.0)


def test_results_hold_no_scripts_or_patches():
    """results/ holds what harness commands wrote: logs, CSV, JSON, figures, reports. An
    experiment's scripts, shims and patches live on a branch or in history, cited by commit
    (results/sweeps/h100/t6_large_tile_runs/README.md)."""
    root = Path(__file__).resolve().parents[2] / "results"
    code = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.suffix in (".sh", ".py", ".patch", ".cu", ".cuh", ".cpp", ".h"))
    assert code == [], code
