"""The labs' grader on a GPU (bench/grading/): each lab's solution scores full marks on its
correctness tests (the counted-traffic tests say "not run": they count under the Triton
interpreter, or the CUDA emulator), its starter scores 0, in each variant of the lab (the
Triton files, and the .cu files nvcc builds where the lab has a CUDA variant), and the cheats that a GPU changes (torch computing the
answer, this suite's kernel, a mutated input, a cached output, a crash of the process) score
0 with their reasons. tests/cpu/test_labs.py has the rest, on the CPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "data" / "labs" / "cheats"
LABS = {1: ROOT / "labs" / "01_vector_add", 2: ROOT / "labs" / "02_thread_tiling",
        3: ROOT / "labs" / "03_tiled_matmul",
        4: ROOT / "labs" / "04_relu_dropout", 5: ROOT / "labs" / "05_softmax"}


def _graded(tmp_path, *args):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "bench", "grade", *map(str, args), "--out",
                          str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (out / "results.json").is_file(), run.stdout + run.stderr
    return run.returncode, json.loads((out / "results.json").read_text())


def _variants():
    params = []
    for number, folder in sorted(LABS.items()):
        params.append(pytest.param(number, ".py", id=f"lab{number}-triton"))
        if (folder / "starter.cu").is_file():
            params.append(pytest.param(number, ".cu", id=f"lab{number}-cuda"))
    return params


@pytest.mark.parametrize("number,suffix", _variants())
def test_solution_and_starter_on_the_gpu(number, suffix, tmp_path):
    lab = LABS[number]
    status, results = _graded(tmp_path / "s", number, lab / "instructor" / f"solution{suffix}")
    assert status == 0, results
    assert all(t["status"] == "passed" or t["status"] == "not run"
               for t in results["tests"]), results
    status, results = _graded(tmp_path / "t", number, lab / f"starter{suffix}")
    assert status == 1 and results["score"] == 0, results


@pytest.mark.parametrize("cheat,reason", [
    ("torch_add.py", "torch's add"), ("suite_kernel.py", "this suite's own kernel"),
    ("mutate_input.py", "changed its inputs"),
    ("cache_output.py", "previous call's output"), ("crash.py", "its process ended")])
def test_cheats_score_zero_on_the_gpu(cheat, reason, tmp_path):
    status, results = _graded(tmp_path, 1, CHEATS / cheat, "--timeout", 60)
    assert status == 1 and results["score"] == 0, results
    assert all(reason in t["output"] for t in results["tests"] if t["status"] == "failed")
