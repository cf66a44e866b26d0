"""Interpreter tier: the worked example of docs/plugins.md (docs/examples/my_triton_matmul.py)
goes through check, model, report and plot beside the built-in kernels, as the doc says."""
from __future__ import annotations

import json
from pathlib import Path


from bench import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "my_triton_matmul.py"


def test_check_passes_the_kernel_and_says_where_the_wrong_one_fails(plugin_env, capsys):
    code = cli.main(["check", "-v", "--plugin", str(EXAMPLE), "--kernels", "my_*,triton_v3*",
                     "--shapes", "100x70x33"])
    out = capsys.readouterr().out
    assert code == 1                                   # the deliberately wrong one fails
    assert "my_blocked_matmul" in out and "triton_v3_smem_tiling" in out
    assert ("600 of 7000 elements wrong" in out and "the last 6 columns (64-69)" in out
            and "never written" in out)


def test_model_and_report_include_the_plugin_kernel(plugin_env, tmp_path, capsys):
    assert cli.main(["model", "--plugin", str(EXAMPLE), "--kernels", "my_blocked*",
                     "--shape", "64x64x64"]) == 0
    assert "BLOCK_M=32" in capsys.readouterr().out
    out = tmp_path / "set"
    code = cli.main(["report", "--plugin", str(EXAMPLE), "--kernels", "my_blocked*,triton_v3*",
                     "--out", str(out), "--quick"])
    assert code == 0, capsys.readouterr().err
    rows = json.loads((out / "check.json").read_text())["rows"]
    assert {r["kernel"] for r in rows} >= {"my_blocked_matmul", "triton_v3_smem_tiling"}
    assert "my_blocked_matmul" in (out / "report.md").read_text()
    assert cli.main(["plot", "--plugin", str(EXAMPLE), "--results", str(out),
                     "--out", str(tmp_path / "figs")]) == 0
