"""A result set is never destroyed, and a failed check exits 1: the cases that run Triton
kernels (through the interpreter here). `--force` replaces one kind, `report --force` swaps
the whole set only once the new one is complete, an interrupted report leaves the old set
whole, per-op shapes, exit 1 when a kernel fails its check. The cases that run no kernel:
tests/cpu/test_harness_safety.py.
"""
from __future__ import annotations

import pytest

from bench import cli, results
from tests.support.result_sets import sample_set  # noqa: F401 (a fixture)
from tests.support.result_sets import snapshot as _snapshot


def test_force_replaces_the_kind(tmp_path, capsys):
    out = tmp_path / "s"
    argv = ["check", "--kernels", "triton_v1_naive", "--shapes", "3x3x3", "--out", str(out)]
    assert cli.main(argv) == 0
    assert cli.main(argv) == 2
    assert cli.main(argv + ["--force"]) == 0
    assert [r["shape"] for r in results.read(out, "check")["rows"]] == ["3x3x3"]


def test_report_force_swaps_the_whole_set_when_complete(sample_set, tmp_path):
    """No file of the old set stays beside the new one (on a CPU machine the new set has no
    time.json: the old one would put an H100's ceilings under a CPU's environment)."""
    assert results.read(sample_set, "time")["env"]["git_sha"] == "testdata"
    assert cli.main(["report", "--out", str(sample_set), "--quick", "--force",
                     "--kernels", "triton_v1_naive"]) == 0
    new = results.load_set(sample_set)
    assert {p["env"].get("git_sha") for p in new.values()} != {"testdata"}
    assert all(p["env"].get("git_sha") != "testdata" for p in new.values()), \
        {k: p["env"].get("git_sha") for k, p in new.items()}
    assert {r["kernel"] for r in new["check"]["rows"]} == {"triton_v1_naive"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".set.")]   # no leftovers


def test_an_interrupted_report_leaves_the_old_set_whole(sample_set, monkeypatch):
    from bench import plots

    before = _snapshot(sample_set)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(plots, "all_figures", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["report", "--out", str(sample_set), "--quick", "--force",
                  "--kernels", "triton_v1_naive"])
    assert _snapshot(sample_set) == before


def test_per_op_shapes_in_every_subcommand(tmp_path, capsys):
    assert cli.main(["check", "-v", "--kernels", "triton_v1_naive,triton_copy",
                     "--shapes", "matmul=5x4x3;copy=100", "--precision", "fp32"]) == 0
    out = capsys.readouterr().out
    assert "5x4x3" in out and " 100 " in out
    assert cli.main(["model", "--kernels", "cuda_v3*,cuda_copy",
                     "--shapes", "matmul=64x64x64;copy=1000"]) == 0
    out = capsys.readouterr().out
    assert "64x64x64" in out
    assert ["cuda_copy", "1000"] in [line.split()[:2] for line in out.splitlines()]


def test_a_failed_check_exits_1(capsys):
    """The guide's wrong copy (offsets ignore the program id) fails past one block."""
    assert cli.main(["check", "--kernels", "triton_copy_bug_offsets_ignore_pid",
                     "--shapes", "5000", "--precision", "fp32"]) == 1
    assert "FAIL" in capsys.readouterr().out
