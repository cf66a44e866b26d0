"""GPU tier: docs/notebooks/ladder.ipynb's code cells, in order, on the GPU: the richer run
of the notebook (the CUDA rungs beside their twins, larger check shapes, a timing of the
ladder and the lecture figure measured here).

The CPU tier executes the notebook in a Jupyter kernel (tests/interpreter/test_notebook.py);
the GPU machine has no Jupyter, so here the cells run as one Python script, in the
notebook's folder as Jupyter starts it, with IPython's display functions replaced by prints
(so that the tables are text this test can read). What is checked is what a reader sees: every cell runs, the CUDA
kernels are there and correct, the figures are written.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebooks" / "ladder.ipynb"

pytestmark = pytest.mark.slow

# What a Jupyter front end would show, as text: these replace the notebook's
# `from IPython.display import Image, Markdown, display`.
DISPLAY_AS_TEXT = '''
class Markdown(str):
    pass


class Image:
    def __init__(self, filename, **_):
        self.filename = filename

    def __str__(self):
        return f"[image {self.filename}]"


def display(*objects):
    for o in objects:
        print(o)
'''
IPYTHON_IMPORT = "from IPython.display import Image, Markdown, display"


def test_the_notebook_runs_on_the_gpu(tmp_path):
    nb = json.loads(NOTEBOOK.read_text())
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert any(IPYTHON_IMPORT in c for c in cells)
    cells = [c.replace(IPYTHON_IMPORT, "") for c in cells]
    script = tmp_path / "ladder.py"
    script.write_text(DISPLAY_AS_TEXT + "\n\n".join(
        f"print('--- cell {i}')\n{code}" for i, code in enumerate(cells, 1)) + "\n")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(ROOT))
    env.pop("TRITON_INTERPRET", None)
    done = subprocess.run([sys.executable, str(script)], cwd=NOTEBOOK.parent, env=env,
                          capture_output=True, text=True, timeout=600)
    out = done.stdout
    assert done.returncode == 0, (out[-3000:], done.stderr[-3000:])
    assert f"--- cell {len(cells)}" in out
    assert "device: cuda" in out
    # the CUDA rungs ran beside their twins, and were right
    for name in ("cuda_v1_naive", "cuda_v3_smem_tiling", "triton_v3_smem_tiling"):
        assert name in out, name
    assert "| FAIL |" not in out and "| ERROR |" not in out
    assert "kernels skipped" not in out        # every rung runs on this GPU
    # the figures a reader sees were written (the model figure, the committed lecture
    # figure, and the one measured here)
    written = [line for line in out.splitlines() if line.startswith("written: ")]
    assert written and all(Path(p.strip(",")).exists()
                           for p in written[0].removeprefix("written: ").split(", "))
    assert out.count("[image ") >= 3
