"""The command line on a CPU-only machine: list, model, readme-table, time, and check's
argument errors; what each command prints (tables within 100 columns, check's summary and
skip reasons, model's compact table) and where the commands that write put their files.
check and report --quick run kernels: tests/interpreter/test_harness_cli.py."""
from __future__ import annotations

import math

import pytest
import torch

from bench import cli, registry, results, terminal
from bench.check import CheckResult
from tests.support import DATA

SAMPLE = DATA / "sample_results"

# These tests describe what the CLI does on a machine WITHOUT a GPU (CI); the GPU machine
# runs the real paths in the GPU tier and in `make report`.
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="describes CPU-only behaviour")


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_list(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for k in registry.kernels():
        assert k.name in out
    assert _widest(out) <= terminal.WIDTH
    # each summary on the line under its kernel, indented, the twin named in it
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("cuda_v1_naive "))
    assert lines[row + 1].startswith("    one thread per C element")
    assert "(twin: triton_v1_naive)" in " ".join(lines[row + 1:row + 3])


def test_check_unknown_kernel():
    assert cli.main(["check", "--kernels", "no_such_kernel*"]) == 2


def test_model_prints_a_compact_table(capsys):
    """One row per kernel x shape x precision, then each kernel's tiles and formula once."""
    assert cli.main(["model", "--kernels", "cuda_v3*,cuda_v1_naive",
                     "--shapes", "1024x1024x1024,4096x4096x4096"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("cuda_")]
    assert [r[:3] for r in rows] == [
        ["cuda_v1_naive", "1024x1024x1024", "fp32"], ["cuda_v1_naive", "4096x4096x4096", "fp32"],
        ["cuda_v3_smem_tiling", "1024x1024x1024", "fp32"],
        ["cuda_v3_smem_tiling", "4096x4096x4096", "fp32"]]
    v3 = " ".join(rows[2])
    assert "16.8 M" in v3 and "64 MiB" in v3     # 2N^3/L global loads at N = 1024, L = 128
    assert v3.endswith("16.8 M")                 # the lecture's count beside it
    assert "cuda_v3_smem_tiling (fp32): L=128 S=8 V=8; formula global 2N³/L" in out
    assert len(out.splitlines()) < 20 and _widest(out) <= terminal.WIDTH


def test_model_verbose_prints_every_quantity_in_full(capsys):
    assert cli.main(["model", "-v", "--kernels", "cuda_v3*", "--shape", "1024x1024x1024"]) == 0
    out = capsys.readouterr().out
    assert "L=128" in out
    assert "shared-memory loads" in out and "compulsory DRAM" in out
    assert "16,777,216" in out  # 2N^3/L global loads at N = 1024, L = 128
    assert _widest(out) <= terminal.WIDTH


def test_model_table_of_every_kernel_fits(capsys):
    assert cli.main(["model"]) == 0
    out = capsys.readouterr().out
    assert _widest(out) <= terminal.WIDTH
    rows = [k for k in registry.select("*") if k.model is not None or k.chooses is not None]
    assert len(out.splitlines()) < 4 * len(rows)        # was eleven lines per row


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


# --------------------------------------------------------------------------- check's printing

def _run(kernel, status, note="", mode="random", shape="17x13x7", precision="fp32"):
    err = {"ok": 1e-7, "FAIL": math.inf}.get(status, math.nan)
    return CheckResult(kernel, shape, precision, mode, err, 1e-6, status, note)


WHERE = ("600 of 7000 elements wrong (8.57%), first at [0, 64]; all NaN: never written "
         "(outputs start as NaN); whole columns: the last 6 columns (64-69): they start at "
         "64, a multiple of 64, where a partial tile begins")
INTERPRETER_BF16 = ("Triton interpreter: bf16 is wrong on the CPU (tl.dot returns garbage, "
                    "float32 -> bfloat16 truncates where the GPU rounds); runs on a GPU")
RUNS = ([_run("triton_v1_naive", "ok"), _run("triton_v3_smem_tiling", "ok"),
         _run("my_matmul_without_edge_masks", "FAIL", WHERE)]
        + [_run(k, "skip", "needs a GPU", shape=s) for k in ("cuda_v1_naive", "cublas")
           for s in ("1x1x1", "17x13x7")]
        + [_run("triton_grouped", "skip", INTERPRETER_BF16, precision="bf16")])


def test_check_prints_the_failures_and_a_summary():
    text = cli.check_text(RUNS)
    lines = text.splitlines()
    assert not any(line.startswith(("triton_v1_naive", "cuda_v1_naive")) for line in lines)
    fail = next(i for i, line in enumerate(lines) if line.startswith("my_matmul_without"))
    assert lines[fail].split()[-1] == "FAIL"
    assert lines[fail + 1].startswith("    600 of 7000 elements wrong")   # under its row
    assert lines[-1] == ("2 passed, 1 failed, 5 skipped (-v: every run, and the kernels of "
                         "each skip reason)")
    assert _widest(text) <= terminal.WIDTH


def test_kernels_that_cannot_run_here_are_one_line_per_reason():
    text = cli.check_text(RUNS)
    assert "  2 kernels, 4 runs: needs a GPU" in text.splitlines()
    assert "  1 kernel, 1 run: Triton interpreter: bf16 is wrong" in text
    assert "cuda_v1_naive" not in text and "cublas" not in text
    assert _widest(text) <= terminal.WIDTH


def test_check_verbose_prints_every_run_and_the_skipped_kernels():
    text = cli.check_text(RUNS, verbose=True)
    starts = [line.split()[0] for line in text.splitlines()
              if line.startswith(("triton_", "my_"))]
    assert starts == ["triton_v1_naive", "triton_v3_smem_tiling", "my_matmul_without_edge_masks"]
    assert "    kernels: cuda_v1_naive, cublas" in text
    assert text.splitlines()[-1] == "2 passed, 1 failed, 5 skipped"
    assert _widest(text) <= terminal.WIDTH


def test_kernels_too_new_for_this_gpu_are_one_line(monkeypatch):
    """On an A100 (faked: no kernel runs), the Hopper-only kernels are one line per reason
    (what they need), not a row per shape and precision."""
    from bench import check, device

    monkeypatch.setattr(device, "gpu_capability", lambda: (8, 0))
    hopper = [k for k in registry.kernels() if tuple(k.min_capability) >= (9, 0)]
    assert hopper
    res = check.run(hopper, shapes="1x1x1,17x13x7", device="cuda")
    assert all(r.status == "skip" for r in res)
    lines = [line for line in cli.check_text(res).splitlines() if "needs sm_90" in line]
    assert len(lines) == len({k.needs for k in hopper})
    counts = [int(line.split()[0]) for line in lines]      # "  2 kernels, 8 runs: needs ..."
    assert sum(counts) == len(hopper)
    assert "this GPU is sm_80" in cli.check_text(res)


@cpu_only
def test_check_of_gpu_kernels_here_is_one_line_and_exit_1(capsys):
    """Nothing runs (no GPU): the CUDA kernels are one skip line, not a row each."""
    assert cli.main(["check", "--kernels", "cuda_v*,cublas", "--shapes", "1x1x1,17x13x7"]) == 1
    captured = capsys.readouterr()
    kernels = registry.select("cuda_v*,cublas")
    runs = sum(2 * len(k.precisions) for k in kernels)
    assert f"  {len(kernels)} kernels, {runs} runs: needs a GPU" in captured.out.splitlines()
    assert "nothing could run here" in captured.err
    assert len(captured.out.splitlines()) < 8


# --------------------------------------------------------------------------- every table fits

def test_time_and_profile_tables_fit_100_columns():
    """The GPU commands' tables, from the stored (fabricated) sample set's rows."""
    timing, prof = results.read(SAMPLE, "time"), results.read(SAMPLE, "profile")
    long_note = dict(timing["rows"][0], note="sm clock " + "moved during the timing; " * 8)
    text = cli.time_text(timing["rows"] + [long_note], timing["meta"]["ceilings"])
    assert "cuda_v3_smem_tiling" in text and "ceilings: copy" in text
    assert _widest(text) <= terminal.WIDTH
    text = cli.profile_text(prof["rows"])
    assert "issued/model" in text and _widest(text) <= terminal.WIDTH


def test_compare_prints_its_tables_within_100_columns(tmp_path, capsys):
    assert cli.main(["compare", "results/h100", "results/h200", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "speed-up" in out and "| " not in out       # laid out, not markdown
    *text, wrote = out.splitlines()                    # the last line names the files
    assert wrote.startswith("wrote compare.md, figures/compare.png")
    assert _widest("\n".join(text)) <= terminal.WIDTH


def test_help_fits_and_names_the_default_folders(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "results/local" in out and _widest(out) <= terminal.WIDTH


# --------------------------------------------------------------------------- default folders

@pytest.mark.parametrize("argv, out", [
    (["time"], "results/local"), (["profile"], "results/local"), (["report"], "results/local"),
    (["compare", "a", "b"], "results/local/compare"), (["check"], None), (["model"], None),
    (["plot", "--results", "results/h100"], None)])
def test_one_default_output_folder(argv, out):
    args = cli.build_parser().parse_args(argv)
    assert args.out == out
    assert results.DEFAULT_OUT == "results/local"


@pytest.mark.parametrize("command", ["time", "profile", "report"])
def test_default_folder_is_said_in_help(command, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    assert "(default: results/local)" in " ".join(capsys.readouterr().out.split())
