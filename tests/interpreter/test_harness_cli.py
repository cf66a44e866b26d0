"""The command line on a CPU-only machine where it runs kernels: check and report --quick,
through the interpreter. The commands that run none: tests/cpu/test_harness_cli.py.

These tests describe what the CLI does on a machine WITHOUT a GPU (CI), as every test of
this folder does; the GPU machine runs the real paths in the GPU tier and in `make report`."""
from __future__ import annotations

from bench import cli, registry, results


def test_check_on_cpu(capsys):
    code = cli.main(["check", "--kernels", "*", "--shapes", "1x1x1,17x13x7"])
    out = capsys.readouterr().out
    ran = [k for k in registry.kernels() if k.runs_on_cpu]
    assert "device: cpu" in out
    assert code == (0 if ran else 1)  # 1 = "nothing could run here"


def test_report_quick_on_cpu(tmp_path):
    code = cli.main(["report", "--out", str(tmp_path), "--quick",
                     "--kernels", "cuda_*,cublas,triton_v3*"])
    assert code == 0
    text = (tmp_path / "report.md").read_text()
    assert "## What needs a GPU" in text and "interpreter" in text
    assert (tmp_path / "figures" / "model_traffic.png").exists()
    assert set(results.load_set(tmp_path)) == {"check", "model"}
    # plots from the result directory, through the CLI
    assert cli.main(["plot", "--results", str(tmp_path)]) == 0
    assert cli.main(["report", "--out", str(tmp_path), "--replot"]) == 0
