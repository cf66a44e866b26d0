"""The course labs and their grader (labs/, bench/grading/), on the CPU through the Triton
interpreter (a lab's CUDA variant, its .cu files, through the CUDA emulator: bench/grading/
cuda_lab.py), end to end as a teaching assistant runs them: `cvt-bench lab list`, `lab start`,
`grade` of the reference solution (full marks, visible and hidden tests), of the starter (0
on correctness, and it runs), each in every variant of the lab, of every planted bug of
labs/*/instructor/bugs.toml (each loses
the points it should, with a message naming its pattern; `cvt-bench lab check`), and of a
gallery of cheats
(tests/data/labs/cheats: torch computing the answer, this suite's own kernel, numpy behind a
dummy launch, a patched tolerance, mutated inputs, a cached output, a hang, a crash, a file
that does not import, a missing function, an allocation far past memory, a forged answer and
half an answer written into the grader's pipe), each 0 with its
reason, and a right submission that prints megabytes full marks; then Gradescope's
results.json, JUnit XML, a gradebook of a batch in which a crash does not touch the next
file, and bad arguments refused before any work.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

# the same on every machine: fast tier without a GPU, slow tier beside one (tests/conftest.py)
pytestmark = pytest.mark.same_everywhere

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "data" / "labs" / "cheats"
LAB1 = ROOT / "labs" / "01_vector_add"
LABS = {1: LAB1, 2: ROOT / "labs" / "02_thread_tiling", 3: ROOT / "labs" / "03_tiled_matmul",
        4: ROOT / "labs" / "04_relu_dropout", 5: ROOT / "labs" / "05_softmax",
        6: ROOT / "labs" / "06_tensor_cores"}


# the CPU tier grades on the CPU even where a GPU is present: Triton's interpreter, counted
# traffic (tests/gpu/test_labs_gpu.py grades on the GPU)
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}
# The one lab whose CUDA solution the fast tier grades (about 4 s): the emulator runs a CPU
# thread per CUDA thread, and the other .cu files take the slow tier (`make test-slow`).
FAST_CUDA_LAB = 2


def grade(*args, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **CPU_ONLY}
    return subprocess.run([sys.executable, "-m", "bench", "grade", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def graded(tmp_path, *args):
    """(exit status, results.json of one file)."""
    out = tmp_path / "out"
    run = grade(*args, "--out", out)
    assert (out / "results.json").is_file(), run.stdout + run.stderr
    return run.returncode, json.loads((out / "results.json").read_text())


def failing(results) -> dict[str, str]:
    return {t["name"]: t["output"] for t in results["tests"] if t.get("status") == "failed"}


def test_lab_list_and_start(tmp_path):
    """`lab list`, `lab start` (never over a file), and the starter runs as given."""
    from bench.grading import labs

    listed = subprocess.run([sys.executable, "-m", "bench", "lab", "list"], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, **CPU_ONLY})
    assert listed.returncode == 0 and " 1  Vector add" in listed.stdout, listed.stdout
    assert all((lab.folder / "README.md").is_file() and lab.starter(b).is_file()
               and lab.solution(b).is_file() for lab in labs.all_labs() for b in lab.backends)
    started = subprocess.run([sys.executable, "-m", "bench", "lab", "start", "1",
                              str(tmp_path / "mine")], cwd=ROOT, capture_output=True, text=True)
    assert started.returncode == 0, started.stderr
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == [
        "README.md", "starter.cu", "starter.py"]     # lab 1 has a CUDA variant
    again = subprocess.run([sys.executable, "-m", "bench", "lab", "start", "1",
                            str(tmp_path / "mine")], cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 2 and "exists already" in again.stderr
    # the starter runs as given, from its own folder (not the repository's)
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, **CPU_ONLY}
    run = subprocess.run([sys.executable, "starter.py"], cwd=tmp_path / "mine", env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "max error" in run.stdout, run.stderr


def test_every_lab_is_tested_here():
    from bench.grading import labs

    assert {lab.number: lab.folder for lab in labs.all_labs()} == LABS


def _variants(kind: str):
    """(lab number, its solution or starter) for every variant of every lab: the Triton
    file, and the .cu file where the lab has a CUDA variant (slow, but FAST_CUDA_LAB's
    solution)."""
    from bench.grading import labs

    params = []
    for number, folder in sorted(LABS.items()):
        lab = labs.load(folder)
        for backend in lab.backends:
            path = lab.solution(backend) if kind == "solution" else lab.starter(backend)
            slow = backend == "cuda" and not (kind == "solution" and number == FAST_CUDA_LAB)
            params.append(pytest.param(number, path, id=f"lab{number}-{backend}",
                                       marks=pytest.mark.slow if slow else ()))
    return params


@pytest.mark.parametrize("number,solution", _variants("solution"))
def test_the_solution_scores_full_marks(number, solution, tmp_path):
    lab = LABS[number]
    status, results = graded(tmp_path, number, solution, "--hidden",
                             lab / "instructor" / "hidden.toml")
    assert status == 0 and not failing(results), failing(results)
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0
    speed = [t for t in results["tests"] if t["name"].startswith("speed")]
    assert all(t["max_score"] == 0 and "not run (needs a GPU" in t["output"] for t in speed)
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}


@pytest.mark.parametrize("number,starter", _variants("starter"))
def test_the_starter_scores_nothing_and_says_why(number, starter, tmp_path):
    status, results = graded(tmp_path, number, starter)
    assert status == 1 and results["score"] == 0, results
    why = failing(results)
    assert len(why) == sum(t["max_score"] > 0 for t in results["tests"])
    assert all(any(w in out for w in ("never written", "wrong at", "wrong beyond"))
               for out in why.values()), why


def _bugs():
    """Each lab's bugs, the first of each lab in the fast tier, the rest slow (each grades a
    file in a process of its own: `make test` stays short, `make test-slow` runs them)."""
    from bench.grading import labs

    return [pytest.param(number, bug, id=f"lab{number}-{bug.name}",
                         marks=() if i == 0 else pytest.mark.slow)
            for number, folder in sorted(LABS.items())
            for i, bug in enumerate(labs.bugs(labs.load(folder)))]


@pytest.mark.parametrize("number,bug", _bugs())
def test_every_planted_bug_loses_its_points(number, bug, tmp_path):
    """Each bug of a lab's bugs.toml (the solution with one change, solution.py's or
    solution.cu's) fails the tests it declares, each reason with its phrase (the bug's
    pattern)."""
    from bench.grading import labs

    path = tmp_path / f"{bug.name}{bug.suffix}"
    path.write_text(bug.source(labs.load(LABS[number])))
    status, results = graded(tmp_path, number, path)
    fails = failing(results)
    assert status == 1 and set(bug.fails) <= set(fails), fails
    assert all(bug.says in fails[name] for name in bug.fails), fails


def test_every_lab_plants_bugs():
    """At least three per variant: the Triton file's, and the CUDA file's where there is one."""
    from bench.grading import labs

    for folder in LABS.values():
        lab = labs.load(folder)
        suffixes = [bug.suffix for bug in labs.bugs(lab)]
        for backend in lab.backends:
            assert suffixes.count(lab.solution(backend).suffix) >= 3, (folder.name, backend)


@pytest.mark.slow
def test_lab_check_grades_solution_starter_and_bugs():
    """The instructor's `cvt-bench lab check N`: a line per file (the solution and the
    starter of each variant, then each bug), exit 0 when each behaves."""
    from bench.grading import labs

    run = subprocess.run([sys.executable, "-m", "bench", "lab", "check", "1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, **CPU_ONLY})
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("solution") and lines[1].startswith("starter")
    assert lines[2].startswith("solution (cuda)") and lines[3].startswith("starter (cuda)")
    lab = labs.load(LAB1)
    assert len(lines) == 2 * len(lab.backends) + len(labs.bugs(lab)), run.stdout
    assert all(line.endswith("ok") for line in lines), run.stdout


# each cheat: a phrase of the reason every one of its tests gives
CHEATS_REASONS = {
    "torch_add.py": "torch's add",
    "einsum.py": "torch's mul",
    # named by its kernel where torch's dispatch mode sees the op (torch 2.13), by what it
    # is where the interpreter's op raises first (torch 2.11)
    "suite_kernel.py": "this suite's own kernel",
    "numpy_sum.py": "stored 0 elements",
    "patch_tolerance.py": "never written",
    "mutate_input.py": "changed its inputs",
    "cache_output.py": "previous call's output",
    "hang.py": "no answer within 5 s",
    "crash.py": "its process ended (signal SIGSEGV)",
    "import_error.py": "importing it raised ModuleNotFoundError",
    "missing_function.py": "defines no function vector_add()",
    "out_of_memory.py": "can't allocate memory",
    "forged_answer.py": "did not come from the grader's own call",
    "half_answer.py": "no answer within 5 s",
}


FAST_CHEATS = ("torch_add.py", "suite_kernel.py", "crash.py")    # the rest in the slow tier


@pytest.mark.parametrize("cheat", [pytest.param(c, marks=() if c in FAST_CHEATS else
                                                pytest.mark.slow) for c in sorted(CHEATS_REASONS)])
def test_every_cheat_scores_zero_with_its_reason(cheat, tmp_path):
    assert sorted(CHEATS_REASONS) == sorted(p.name for p in CHEATS.glob("*.py"))
    # 5 s for the hangs; the others get time to spare on a loaded machine
    hangs = cheat in ("hang.py", "half_answer.py")
    status, results = graded(tmp_path, 1, CHEATS / cheat, "--timeout", 5 if hangs else 60)
    assert status == 1 and results["score"] == 0, failing(results)
    reasons = failing(results)
    assert len(reasons) == sum(t["max_score"] > 0 for t in results["tests"]), reasons
    assert all(CHEATS_REASONS[cheat] in why for why in reasons.values()), reasons


def test_a_submission_that_prints_megabytes_still_scores(tmp_path):
    """The solution printing 4 MB on every call: its prints go to a file, not into the pipe
    the answers come back through."""
    solution = (LAB1 / "instructor" / "solution.py").read_text()
    chatty = tmp_path / "chatty.py"
    chatty.write_text(solution.replace("    out = torch.empty_like(x)\n",
                                       "    print('x' * (4 << 20))\n    out = torch.empty_like(x)\n", 1))
    assert "print(" in chatty.read_text()
    status, results = graded(tmp_path, 1, chatty)
    assert status == 0 and results["score"] == 10, failing(results)


@pytest.mark.slow
def test_a_batch_grades_each_file_on_a_clean_process(tmp_path):
    """A crash and a hang, then the solution: full marks for it, a gradebook row each, and
    Gradescope's and JUnit's files per file."""
    book = tmp_path / "grades.csv"
    run = grade(1, CHEATS / "crash.py", CHEATS / "hang.py", LAB1 / "instructor" / "solution.py",
                "--timeout", 5, "--out", tmp_path / "out", "--gradebook", book)
    assert run.returncode == 1, run.stderr
    rows = {r["submission"]: r for r in csv.DictReader(book.open())}
    assert rows["solution.py"]["score"] == rows["solution.py"]["max_score"] == "10"
    assert rows["crash.py"]["score"] == rows["hang.py"]["score"] == "0"
    results = json.loads((tmp_path / "out" / "solution" / "results.json").read_text())
    assert results["score"] == 10 and all(
        {"name", "score", "max_score", "output", "visibility"} <= set(t) for t in results["tests"])
    suite = ET.parse(tmp_path / "out" / "crash" / "junit.xml").getroot()
    scored = sum(t["max_score"] > 0 for t in results["tests"])     # (the speed test: skipped)
    assert suite.get("tests") == str(len(results["tests"]))
    assert (suite.get("failures"), suite.get("skipped")) == (str(scored),
                                                             str(len(results["tests"]) - scored))
    again = grade(1, LAB1 / "instructor" / "solution.py", "--gradebook", book)
    assert again.returncode == 2 and "--force" in again.stderr     # never over a gradebook


def test_bad_arguments_are_refused_before_any_work(tmp_path):
    for args, says in (((99, LAB1 / "starter.py"), "no lab 99"),
                       ((1, tmp_path / "missing.py"), "no such file"),
                       ((1, LAB1 / "starter.py", "--hidden", tmp_path / "none.toml"),
                        "none.toml")):
        run = grade(*args)
        assert run.returncode == 2 and says in run.stderr, run.stderr


def test_a_bug_graded_otherwise_on_a_gpu_says_why(tmp_path):
    """bugs.toml: gpu_fails (the tests a bug fails on a GPU) comes with gpu_why, and names
    tests of the lab; fails_on picks by device."""
    folder = tmp_path / "01_copy"
    shutil.copytree(LAB1, folder)
    bugs_toml = folder / "instructor" / "bugs.toml"
    text = bugs_toml.read_text()
    from bench.grading import labs

    lab = labs.load(folder)
    [bug] = [b for b in labs.bugs(lab) if b.name == "loads_y_twice"]
    assert bug.fails_on("cpu") == ["each element read once"] and bug.fails_on("cuda") == []
    bugs_toml.write_text(text.replace("gpu_why = ", "gpu_reason = ", 1))
    with pytest.raises(labs.LabError):
        labs.bugs(labs.load(folder))
    bugs_toml.write_text(text.replace("gpu_fails = []", 'gpu_fails = ["no such test"]', 1))
    with pytest.raises(labs.LabError, match="no such test"):
        labs.bugs(labs.load(folder))
