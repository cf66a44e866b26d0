"""CPU tier: `python -m bench compare A B` puts two result sets side by side."""
from __future__ import annotations

import json
from pathlib import Path

from bench import cli

ROOT = Path(__file__).resolve().parents[2]
H100 = ROOT / "results" / "h100"


def _other_gpu(tmp_path) -> Path:
    """results/h100 as if measured on a GPU with 1.4x the bandwidth: memory-bound kernels
    1.4x faster, compute-bound ones unchanged."""
    d = json.loads((H100 / "time.json").read_text())
    d["env"]["gpu"] = "Faster Memory GPU"
    d["meta"]["ceilings"]["copy_gbps"] *= 1.4
    for r in d["rows"]:
        if r.get("median_ms") and not r.get("flops"):
            r["median_ms"] /= 1.4
    out = tmp_path / "b"
    out.mkdir()
    (out / "time.json").write_text(json.dumps(d))
    return out


def test_compare_writes_tables_and_a_figure(tmp_path, capsys):
    b = _other_gpu(tmp_path)
    out = tmp_path / "cmp"
    assert cli.main(["compare", str(H100), str(b), "--out", str(out)]) == 0
    text = (out / "compare.md").read_text()
    assert "| gpu | NVIDIA H100 80GB HBM3 | Faster Memory GPU |" in text
    assert "| device copy bandwidth |" in text and "| 1.40 |" in text
    assert "| cuda_copy | bf16 | 67108864 | memory |" in text
    line = next(l for l in text.splitlines() if l.startswith("| cuda_v3_smem_tiling | fp32 | 4096"))
    assert line.endswith("| 1.00 |")
    assert (out / "figures" / "compare.png").stat().st_size > 10_000
    assert cli.main(["compare", str(H100), str(b), "--out", str(out)]) == 2   # no silent replace
    assert "exists" in capsys.readouterr().err


def test_compare_needs_timings(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["compare", str(H100), str(empty), "--out", str(tmp_path / "x")]) == 2
    assert "no time.json" in capsys.readouterr().err
