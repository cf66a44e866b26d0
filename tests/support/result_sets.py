"""Shared by the result-set safety tests (tests/cpu/test_harness_safety.py, and
tests/interpreter/test_harness_safety.py for the commands that run kernels): a copy of
the stored sample set to work on, a byte snapshot of a folder, the one-line error."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support import DATA

SAMPLE = DATA / "sample_results"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


@pytest.fixture
def sample_set(tmp_path) -> Path:
    out = tmp_path / "set"
    shutil.copytree(SAMPLE, out)
    return out
