"""CPU tier: a result set is never destroyed or mixed, and the CLI's exit codes and messages.

- a command that would replace a result set refuses (exit 2, every file byte-identical)
  unless --force; `report --force` swaps the whole set only once the new one is complete;
- rows or files from another environment are never put beside a set (time --append,
  a new kind in an existing folder);
- every argument is checked before any work or write (a typo in --shapes writes nothing;
  an unwritable --out fails first);
- files are written atomically (an interrupted write leaves the old file whole);
- an older schema or a corrupt file gives one line naming the file, not a traceback;
- exit 2 for bad arguments (with a did-you-mean), 1 when a kernel fails its check.
The cases that run kernels (--force, report --force, exit 1) are in
tests/interpreter/test_harness_safety.py.
"""
from __future__ import annotations

import pytest

from bench import cli, results
from tests.support.result_sets import one_line_error as _one_line_error
from tests.support.result_sets import sample_set  # noqa: F401 (a fixture)
from tests.support.result_sets import snapshot as _snapshot


# --------------------------------------------------------------------------- never destroyed

def test_report_over_a_result_set_refuses_and_changes_nothing(sample_set, capsys):
    before = _snapshot(sample_set)
    assert cli.main(["report", "--out", str(sample_set), "--quick"]) == 2
    assert "--force" in _one_line_error(capsys)
    assert _snapshot(sample_set) == before


@pytest.mark.parametrize("argv", [
    ["check", "--kernels", "triton_v1_naive", "--shapes", "3x3x3"],
    ["model", "--kernels", "cuda_v3*", "--shapes", "64x64x64"],
])
def test_commands_refuse_to_replace_their_files(sample_set, capsys, argv):
    before = _snapshot(sample_set)
    assert cli.main(argv + ["--out", str(sample_set)]) == 2
    assert "--force" in _one_line_error(capsys)
    assert _snapshot(sample_set) == before


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    results.write(tmp_path, "model", [{"kernel": "a", "x": 1}], env={"device": "cpu"})
    before = _snapshot(tmp_path)

    class Unserialisable:
        pass

    with pytest.raises(TypeError):
        results.write(tmp_path, "model", [{"kernel": "b", "x": Unserialisable()}])
    assert _snapshot(tmp_path) == before

    import os
    real_replace = os.replace

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        results.atomic_write_text(tmp_path / "model.json", "half")
    monkeypatch.setattr(os, "replace", real_replace)
    assert _snapshot(tmp_path) == before                  # no temporary file left behind


def test_figures_are_written_atomically(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    png = results.atomic_savefig(fig, tmp_path / "f.png")
    svg = results.atomic_savefig(fig, tmp_path / "f.svg")
    plt.close(fig)
    assert png.read_bytes()[:4] == b"\x89PNG" and b"<svg" in svg.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png", "f.svg"]


# --------------------------------------------------------------------------- never mixed

def test_rows_from_another_environment_are_refused():
    stored = {"device": "cuda", "gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04",
              "cuda_runtime": "13.0", "torch": "2.11.0", "triton": "3.6.0", "git_sha": "abc"}
    here = dict(stored, gpu="NVIDIA H200", git_sha="def")
    assert results.env_differences(stored, stored) == []
    assert results.env_differences(stored, here) == [
        "gpu: NVIDIA H100 80GB HBM3 -> NVIDIA H200", "git_sha: abc -> def"]


def test_append_and_new_kinds_need_the_same_environment(tmp_path, capsys):
    env = {"device": "cuda", "gpu": "NVIDIA H100 80GB HBM3", "git_sha": "abc"}
    results.write(tmp_path, "time", [{"kernel": "k"}], env=env)
    before = _snapshot(tmp_path)
    results.guard_out(tmp_path, ["time"], dict(env), append=True)          # same: fine
    with pytest.raises(results.OutDirError, match="gpu: NVIDIA H100 80GB HBM3 -> NVIDIA H200"):
        results.guard_out(tmp_path, ["time"], dict(env, gpu="NVIDIA H200"), append=True)
    with pytest.raises(results.OutDirError, match="--force"):
        results.guard_out(tmp_path, ["time"], dict(env))                   # neither flag
    # a check run here (CPU, another commit) would sit beside the H100's timings: refused
    assert cli.main(["check", "--kernels", "triton_v1_naive", "--shapes", "3x3x3",
                     "--out", str(tmp_path)]) == 2
    assert "another environment" in _one_line_error(capsys)
    assert _snapshot(tmp_path) == before


# --------------------------------------------------------------------------- arguments first

@pytest.mark.parametrize("argv, words", [
    (["check", "--shapes", "17x13x"], "--shapes"),
    (["check", "--shapes", "matmul=17x13x7;copi=100"], "copi"),
    (["check", "--kernels", "triton_v3_smem_tilng"], "did you mean triton_v3_smem_tiling"),
    (["check", "--kernels", "@ladr"], "did you mean @ladder"),
    (["check", "--kernels", "triton_v1*", "--precision", "fp33"], "did you mean fp32"),
    (["check", "--kernels", "triton_v1*", "--precision", "bf16"], "none of the selected"),
    (["model", "--kernels", "cuda_v3*", "--shapes", "copy=1000"], "no selected kernel"),
    (["model", "--kernels", "cuda_v3*", "--shape", "64x64x64", "--shapes", "8x8x8"], "not both"),
    (["profile", "--kernels", "nothing_like_it"], "no kernel matches"),
    (["time", "--shapes", "4096x"], "--shapes"),
])
def test_bad_arguments_exit_2_and_write_nothing(tmp_path, capsys, argv, words):
    out = tmp_path / "never"
    assert cli.main(argv + ["--out", str(out)]) == 2
    assert words in _one_line_error(capsys)
    assert not out.exists()


def test_an_unwritable_out_fails_before_any_work(tmp_path, capsys, monkeypatch):
    from bench import check

    (tmp_path / "file.txt").write_text("not a folder")
    ran = []
    monkeypatch.setattr(check, "run", lambda *a, **k: ran.append(1) or [])
    assert cli.main(["check", "--kernels", "triton_v1_naive", "--shapes", "3x3x3",
                     "--out", str(tmp_path / "file.txt" / "sub")]) == 2
    assert "cannot write" in _one_line_error(capsys)
    assert not ran


# --------------------------------------------------------------------------- unreadable files

@pytest.mark.parametrize("content, words", [
    ('{"schema": "cuda-vs-triton/results/0", "kind": "check", "rows": []}', "another version"),
    ("{not json", "not readable"),
    ('{"schema": "cuda-vs-triton/results/1", "kind": "check", "rows": 3}', "not a check"),
])
@pytest.mark.parametrize("argv", [["plot", "--results"], ["report", "--replot", "--out"]])
def test_an_old_or_corrupt_file_gets_one_line(tmp_path, capsys, content, words, argv):
    (tmp_path / "check.json").write_text(content)
    assert cli.main(argv + [str(tmp_path)]) == 2
    line = _one_line_error(capsys)
    assert words in line and "check.json" in line


def test_no_result_files_to_plot(tmp_path, capsys):
    assert cli.main(["plot", "--results", str(tmp_path)]) == 2
    assert "no result files" in _one_line_error(capsys)
