"""The command line on a CPU-only machine: list, check, model, readme-table, time and
report --quick (through the interpreter where kernels can run)."""
from __future__ import annotations

import pytest
import torch

from bench import cli, registry, results

# These tests describe what the CLI does on a machine WITHOUT a GPU (CI); the GPU machine
# runs the real paths in the GPU tier and in `make report`.
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="describes CPU-only behaviour")


def test_list(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for k in registry.kernels():
        assert k.name in out


@cpu_only
def test_check_on_cpu(capsys):
    code = cli.main(["check", "--kernels", "*", "--shapes", "1x1x1,17x13x7"])
    out = capsys.readouterr().out
    ran = [k for k in registry.kernels() if k.runs_on_cpu]
    assert "device: cpu" in out
    assert code == (0 if ran else 1)  # 1 = "nothing could run here"


def test_check_unknown_kernel():
    assert cli.main(["check", "--kernels", "no_such_kernel*"]) == 2


def test_model_prints_params_and_levels(capsys):
    assert cli.main(["model", "--kernels", "cuda_v3*", "--shape", "1024x1024x1024"]) == 0
    out = capsys.readouterr().out
    assert "L=128" in out or "L=" in out
    assert "shared-memory loads" in out and "compulsory DRAM" in out
    assert "16,777,216" in out  # 2N^3/L global loads at N = 1024, L = 128


def test_model_bad_shape(capsys):
    assert cli.main(["model", "--kernels", "cuda_v1_naive", "--shape", "12x3"]) == 2


def test_readme_table_lists_the_ladder(capsys):
    assert cli.main(["readme-table"]) == 0
    out = capsys.readouterr().out
    for k in registry.kernels():
        if k.backend == "cuda":
            assert f"`{k.name}`" in out


@cpu_only
def test_time_needs_a_gpu(capsys):
    assert cli.main(["time", "--out", "/nonexistent"]) == 2
    assert "GPU" in capsys.readouterr().err


@cpu_only
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


def test_kernel_groups_select_the_ladder_without_the_vector_add(capsys):
    from bench import cli, registry

    ladder = [k.name for k in registry.select("@ladder")]
    assert "triton_vector_add" not in ladder and "triton_vector_add" in \
        [k.name for k in registry.select("triton_v*")]          # the trap a glob falls into
    assert {"cuda_v1_naive", "cuda_v3_smem_tiling", "triton_v3_smem_tiling"} <= set(ladder)
    assert all(k.op == "matmul" for k in registry.select("@matmul"))
    assert all(k.op != "matmul" for k in registry.select("@memory"))
    assert cli.main(["model", "--kernels", "@nonsense", "--shape", "64x64x64"]) != 0
    assert "@ladder" in capsys.readouterr().err
