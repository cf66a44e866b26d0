"""The command line on a CPU-only machine where it runs kernels: check and report --quick,
through the interpreter. The commands that run none: tests/cpu/test_harness_cli.py.

These tests describe what the CLI does on a machine WITHOUT a GPU (CI), as every test of
this folder does; the GPU machine runs the real paths in the GPU tier and in `make report`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench import cli, registry, results, terminal

ROOT = Path(__file__).resolve().parents[2]


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_check_on_cpu(capsys):
    code = cli.main(["check", "--kernels", "*", "--shapes", "1x1x1,17x13x7"])
    captured = capsys.readouterr()
    out = captured.out
    ran = [k for k in registry.kernels() if k.runs_on_cpu]
    assert "device: cpu" in out
    assert code == (0 if ran else 1)  # 1 = "nothing could run here"
    # by default: no row per passing run, the kernels that cannot run here one line per
    # reason, a one-line summary; every line within 100 columns
    assert not any(line.startswith("triton_v1_naive ") for line in out.splitlines())
    assert any(line.startswith("  ") and line.endswith("runs: needs a GPU")
               for line in out.splitlines())
    summary = out.splitlines()[-1]
    assert " passed, 0 failed, " in summary and " skipped" in summary
    assert _widest(out) <= terminal.WIDTH
    # progress went to stderr (not a terminal here: plain lines), the table alone to stdout
    assert "[check] 0/" in captured.err and "runs in" in captured.err
    assert "[check]" not in out
    assert "RuntimeWarning" not in captured.err


def test_check_verbose_prints_every_run(capsys):
    assert cli.main(["check", "-v", "--kernels", "triton_v1_naive,triton_copy",
                     "--shapes", "matmul=17x13x7;copy=100", "--precision", "fp32"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()
            if line.startswith(("triton_v1_naive", "triton_copy"))]
    assert [r[0] for r in rows] == ["triton_v1_naive", "triton_copy"]
    assert all(r[-1] == "ok" for r in rows)
    assert out.splitlines()[-1] == "2 passed, 0 failed, 0 skipped"


def test_report_quick_on_cpu(tmp_path, capsys):
    code = cli.main(["report", "--out", str(tmp_path), "--quick",
                     "--kernels", "cuda_*,cublas,triton_v3*"])
    assert code == 0
    text = (tmp_path / "report.md").read_text()
    assert "## What needs a GPU" in text and "interpreter" in text
    # every figure the models alone can draw: the traffic per rung, the lecture figure's
    # model half
    for name in ("model_traffic", "lecture_model"):
        assert (tmp_path / "figures" / f"{name}.png").exists(), name
        assert f"![{name}](figures/{name}.png)" in text
    # the committed GPU result sets, and how to redraw them here
    assert "`results/h100`" in text
    assert "python -m bench plot --results results/h100 --out" in text and "--replot" in text
    err = capsys.readouterr().err
    assert "[check] " in err and "python -m bench plot --results results/h100" in err
    assert set(results.load_set(tmp_path)) == {"check", "model"}
    # the set's README, from its files: the command that wrote each kind
    readme = (tmp_path / "README.md").read_text()
    assert readme.count("`python -m bench report --out DIR --quick --kernels ") == 2   # no machine path
    # plots from the result directory, through the CLI, each figure announced on stderr
    assert cli.main(["plot", "--results", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "[figures] lecture_model (" in captured.err
    assert captured.out.splitlines()[0].startswith("2 figures in ")
    assert cli.main(["report", "--out", str(tmp_path), "--replot"]) == 0


def test_report_writes_into_results_local_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", "--quick", "--kernels", "triton_v1_naive"]) == 0
    assert (tmp_path / "results" / "local" / "report.md").exists()
    assert set(results.load_set(tmp_path / "results" / "local")) == {"check", "model"}
    assert cli.main(["report", "--quick", "--kernels", "triton_v1_naive"]) == 2  # no replace


def test_the_interpreters_numpy_warnings_do_not_reach_the_user():
    """NaN and inf inputs make Triton's interpreter compute in masked-off lanes what numpy
    warns about ("invalid value encountered in matmul"); even under -W always, none of it
    reaches the terminal (bench/device.py, quiet_interpreter)."""
    run = subprocess.run(
        [sys.executable, "-W", "always", "-m", "bench", "check",
         "--kernels", "triton_v3_smem_tiling,triton_softmax_online", "--precision", "fp32",
         "--shapes", "matmul=17x13x7;softmax=7x33", "--nonfinite"],
        cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stderr, run.stderr[-2000:]
    assert "4 passed" in run.stdout
