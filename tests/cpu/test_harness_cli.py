"""The command line on a CPU-only machine: list, model, readme-table, time, and check's
argument errors. check and report --quick run kernels: tests/interpreter/test_harness_cli.py."""
from __future__ import annotations

import pytest
import torch

from bench import cli, registry

# These tests describe what the CLI does on a machine WITHOUT a GPU (CI); the GPU machine
# runs the real paths in the GPU tier and in `make report`.
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="describes CPU-only behaviour")


def test_list(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for k in registry.kernels():
        assert k.name in out


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
