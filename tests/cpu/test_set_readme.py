"""The README.md of every result set is the harness's (bench/set_readme.py), and results/
holds the current set of each machine plus results/sweeps/. CPU only."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from bench import cli, results, set_readme

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


def _sets() -> list[Path]:
    """Every committed folder that holds result files (check, time, model or profile)."""
    local = RESULTS / Path(results.DEFAULT_OUT).name
    return sorted({p.parent for kind in results.KINDS for p in RESULTS.rglob(f"{kind}.json")
                   if local not in p.parents})


def test_a_set_the_harness_writes_has_a_readme_naming_command_commit_machine_and_date(
        tmp_path, capsys):
    out = tmp_path / "set"
    check = ["check", "--kernels", "triton_v1_naive", "--shapes", "3x3x3", "--out", str(out)]
    assert cli.main(check) == 0
    model = ["model", "--kernels", "cuda_v3*", "--shape", "64x64x64", "--out", str(out)]
    assert cli.main(model) == 0
    assert f"wrote {out / 'README.md'}" in capsys.readouterr().out
    text = (out / "README.md").read_text()
    env = results.read(out, "check")["env"]
    # the folder outside the working directory is recorded as DIR: a machine's scratch path
    # means nothing elsewhere
    assert f"`python -m bench {shlex.join(check[:-1] + ['DIR'])}`" in text
    assert f"`python -m bench {shlex.join(model[:-1] + ['DIR'])}`" in text   # 'cuda_v3*' quoted
    assert f"commit {env['git_sha']}" in text and env["date_utc"] in text
    assert f"# Result set: {env.get('gpu') or env['device']}, " in text    # the machine
    assert f"| torch | {env['torch']} |" in text and f"| triton | {env['triton']} |" in text
    assert "| check.csv, check.json |" in text and "| model.csv, model.json |" in text
    assert str(tmp_path) not in text.split("## What ran")[0]     # a moved set stays true
    assert set_readme.text(out) == text


def test_the_recorded_command_holds_no_path_of_the_machine(tmp_path):
    inside = tmp_path / "results" / "sweeps" / "a"
    assert results.recorded_command(["time", "--out", str(inside), "--kernels", "v*"],
                                    cwd=tmp_path) == \
        "python -m bench time --out results/sweeps/a --kernels 'v*'"
    assert results.recorded_command(["profile", "--out=/scratch/out/prof"], cwd=tmp_path) == \
        "python -m bench profile --out=DIR"
    assert results.recorded_command(["time", "--out", "../elsewhere"], cwd=tmp_path) == \
        "python -m bench time --out DIR"


def test_an_append_adds_its_command_and_a_checkpoint_does_not(tmp_path):
    results.write(tmp_path, "time", [{"kernel": "a"}], command="python -m bench time A")
    results.write(tmp_path, "time", [{"kernel": "a"}], command="python -m bench time A")
    old = results.read(tmp_path, "time")
    assert old["meta"]["commands"] == ["python -m bench time A"]
    results.write(tmp_path, "time", [{"kernel": "b"}], command="python -m bench time B",
                  meta={"commands": results.earlier_commands(old)})
    commands = results.read(tmp_path, "time")["meta"]["commands"]
    assert commands == ["python -m bench time A", "python -m bench time B"]
    assert "`python -m bench time A`<br>`python -m bench time B`" in set_readme.text(tmp_path)


def test_a_hand_edited_readme_fails_the_check_and_is_written_again(tmp_path, capsys):
    results.write(tmp_path, "check", [{"kernel": "a", "status": "ok"}],
                  env={"gpu": "X", "git_sha": "abc1234", "date_utc": "2026-01-02T03:04:05Z"},
                  command="python -m bench check --out S")
    assert cli.main(["results-readme", str(tmp_path)]) == 0
    assert cli.main(["results-readme", "--check", str(tmp_path)]) == 0
    (tmp_path / "ncu").mkdir()                 # Nsight Compute's reports stay on the GPU
    (tmp_path / "ncu" / "k.ncu-rep").write_bytes(b"\0")   # machine: not counted, not committed
    assert cli.main(["results-readme", "--check", str(tmp_path)]) == 1
    assert cli.main(["results-readme", str(tmp_path)]) == 0
    assert "| ncu/ | 0 files: " in (tmp_path / "README.md").read_text()
    (tmp_path / "ncu" / "k.ncu-rep").unlink()
    assert cli.main(["results-readme", "--check", str(tmp_path)]) == 0
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("1 (1 ok)", "2 (2 ok)"))
    capsys.readouterr()
    assert cli.main(["results-readme", "--check", str(tmp_path)]) == 1
    assert f"{tmp_path}/README.md" in capsys.readouterr().out
    assert cli.main(["results-readme", str(tmp_path)]) == 0
    assert "| check | 1 (1 ok) | abc1234 | 2026-01-02T03:04:05Z |" in readme.read_text()


def test_a_folder_without_result_files_is_refused(tmp_path, capsys):
    assert cli.main(["results-readme", str(tmp_path)]) == 2
    assert "not a result set" in capsys.readouterr().err
    assert not (tmp_path / "README.md").exists()


@pytest.mark.parametrize("folder", _sets(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_committed_readme_is_the_one_the_harness_writes(folder):
    """Byte for byte: a hand edit of a set's README, or of its files without the README,
    fails here; `python -m bench results-readme SET` writes it again."""
    readme = folder / set_readme.NAME
    assert readme.exists(), f"{folder}: no README.md (python -m bench results-readme)"
    assert readme.read_text() == set_readme.text(folder), (
        f"{readme} differs from its set: `python -m bench results-readme "
        f"{folder.relative_to(ROOT)}` writes it again")


def test_results_hold_the_current_set_of_each_machine_and_the_sweeps():
    """One current set per machine at the top of results/, everything else under
    results/sweeps/, whose README says what each of its folders is."""
    top = sorted(p.name for p in RESULTS.iterdir()
                 if p.is_dir() and not p.name.startswith(".")
                 and p.name != Path(results.DEFAULT_OUT).name)
    assert top == ["h100", "h200", "sweeps"], (
        f"results/ holds {top}: a new set replaces results/h100 or results/h200, or goes "
        f"under results/sweeps/")
    assert sorted(p.name for p in RESULTS.iterdir() if p.is_file()) == []
    for machine in ("h100", "h200"):
        assert results.existing_kinds(RESULTS / machine), machine
        env = json.loads((RESULTS / machine / "time.json").read_text())["env"]
        assert machine.upper() in env["gpu"], (machine, env["gpu"])
    index = (RESULTS / "sweeps" / "README.md").read_text()
    for sub in sorted((RESULTS / "sweeps").iterdir()):
        if sub.is_dir():
            assert f"`{sub.name}/`" in index, f"results/sweeps/README.md does not say what " \
                                              f"{sub.name}/ is"
