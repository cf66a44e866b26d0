"""Interpreter tier: docs/notebooks/ladder.ipynb runs end to end, every cell, as a reader runs
it on a laptop without a GPU (Triton through its interpreter), so it never rots.

The notebook runs in a Jupyter kernel of this very Python (its own kernelspec, made in a
temporary folder, so a `python3` kernel installed elsewhere on the machine is never picked),
started in the notebook's folder as Jupyter starts it, with TRITON_INTERPRET=1 where there
is no GPU. nbclient and ipykernel come with requirements-cpu.txt (and the `notebook` extra);
without them the test is skipped with that reason (the GPU machine has neither).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebooks" / "ladder.ipynb"
CELL_TIMEOUT_S = 180          # a cell of the CPU run takes seconds; this catches a hang
MISSING = ("needs nbclient, nbformat and ipykernel (pip install -r requirements-cpu.txt, or "
           "pip install '.[notebook]') to execute the notebook")


def _code_cells(nb) -> list:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _text(cell) -> str:
    """Everything a code cell printed or displayed as text (Markdown tables included)."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif out["output_type"] in ("display_data", "execute_result"):
            data = out.get("data", {})
            parts.append(data.get("text/markdown") or data.get("text/plain") or "")
    return "".join(parts)


def _repository_files() -> set[str] | None:
    """What git sees in the checkout, ignored files included (bytecode caches aside), or None
    outside a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return {line for line in out.stdout.splitlines()
            if "__pycache__/" not in line and not line.endswith(".pyc")}


def test_committed_without_outputs():
    """Outputs stay out of the repository: diffs show the lesson, not base64 figures."""
    nb = json.loads(NOTEBOOK.read_text())
    for i, cell in enumerate(_code_cells(nb)):
        assert cell["outputs"] == [] and cell["execution_count"] is None, (
            f"{NOTEBOOK.name}: code cell {i} was committed with its outputs; clear them "
            f"(Jupyter: Edit > Clear Outputs of All Cells) before committing")


@pytest.mark.slow
def test_runs_end_to_end(tmp_path, monkeypatch):
    nbclient = pytest.importorskip("nbclient", reason=MISSING)
    nbformat = pytest.importorskip("nbformat", reason=MISSING)
    pytest.importorskip("ipykernel", reason=MISSING)
    import torch

    gpu = torch.cuda.is_available()
    env = {} if gpu else {"TRITON_INTERPRET": "1"}
    spec = tmp_path / "jupyter" / "kernels" / "cvt-python"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "cuda-vs-triton (this Python)", "language": "python", "env": env}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))       # finds the spec
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))  # connection files
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # no profile of the user's

    nb = nbformat.read(NOTEBOOK, as_version=4)
    before = _repository_files()
    started = time.monotonic()
    nbclient.NotebookClient(nb, kernel_name="cvt-python", timeout=CELL_TIMEOUT_S,
                            startup_timeout=120,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    seconds = time.monotonic() - started
    after = _repository_files()

    cells = _code_cells(nb)
    setup = _text(cells[0])
    assert f"device: {'cuda' if gpu else 'cpu'}" in setup, setup
    if not gpu:
        assert "TRITON_INTERPRET=1" in setup, setup      # the interpreter reached the kernel
    # The broken kernel fails the way the notebook's text explains it.
    broken = next(_text(c) for c in cells if "plugins.use" in "".join(c["source"]))
    assert "my_matmul_without_edge_masks" in broken and "FAIL" in broken, broken
    assert ("600 of 7000 elements wrong" in broken and "never written" in broken
            and "the last 6 columns (64-69)" in broken), broken
    figures = [o for c in cells for o in c["outputs"] if "image/png" in o.get("data", {})]
    assert len(figures) >= 2, f"expected the model figure and the lecture figure, got {len(figures)}"
    if before is not None and after is not None:
        assert after <= before, f"the notebook wrote into the repository: {sorted(after - before)}"
    print(f"{NOTEBOOK.name}: {len(cells)} code cells in {seconds:.1f} s")


def test_requirements_install_what_the_notebook_extra_names():
    """CI installs requirements-cpu.txt; users `pip install '.[notebook]'`: the same packages."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["notebook"]
    lines = [line.split("#")[0].strip() for line in
             (ROOT / "requirements-cpu.txt").read_text().splitlines()]
    assert set(extra) <= {line for line in lines if line}, (
        f"pyproject's notebook extra {extra} must be in requirements-cpu.txt too")
