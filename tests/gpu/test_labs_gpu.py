"""The labs' grader on a GPU (bench/grading/): each lab's solution (each variant: Triton and
CUDA) scores full marks on its correctness tests, its traffic tests (counted by Nsight
Compute: bench/grading/counters.py) and its speed test (timed beside the reference on this
GPU); each starter scores 0; each planted bug, of either variant, loses its tests; and the
cheats that a GPU changes score 0 with their reasons: torch computing the answer, this
suite's kernel, a mutated input, a cached output, a crash of the process, a CUDA host
function that copies the inputs to the host and back, and an illegal address (the next test
gets a fresh process and context). tests/cpu/test_labs.py has the rest, on the CPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.profile import find_ncu

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "data" / "labs" / "cheats"
LAB_DIRS = sorted(p for p in (ROOT / "labs").glob("[0-9][0-9]_*") if (p / "lab.toml").is_file())


def _graded(tmp_path, *args):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "bench", "grade", *map(str, args), "--out",
                          str(out)], capture_output=True, text=True, timeout=900, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (out / "results.json").is_file(), run.stdout + run.stderr
    results = json.loads((out / "results.json").read_text())
    if os.environ.get("CVT_LAB_LOG"):        # every grade as it ends (a run cut short keeps them)
        with open(os.environ["CVT_LAB_LOG"], "a") as log:
            log.write(json.dumps({"args": list(map(str, args)), "status": run.returncode,
                                  "results": results}) + "\n")
    return run.returncode, results


def _why(results) -> str:
    return "\n".join(f"{t['name']}: {t.get('status', 'not run')} "
                     f"{t['score']}/{t['max_score']}: {t['output']}" for t in results["tests"])


# The fast tier grades lab 1's Triton variant on the GPU with its traffic counted on the
# CPU (--count-on-cpu): Nsight Compute locks the GPU's clocks while it profiles, which would
# slow every other test of the tier running beside it (a CUDA file is graded on the GPU by
# the host-function test below). The slow tier (`make test-all`, .ci/gpu.sh slow-1) grades
# every variant with its traffic counted by Nsight Compute.
FAST_VARIANTS = {("01_vector_add", "triton")}


def _variants():
    from bench.grading import labs

    out = []
    for folder in LAB_DIRS:
        lab = labs.load(folder)
        for backend in lab.backends:
            out.append(pytest.param(folder, backend, True, id=f"{folder.name}-{backend}",
                                    marks=pytest.mark.slow))
            if (folder.name, backend) in FAST_VARIANTS:
                out.append(pytest.param(folder, backend, False,
                                        id=f"{folder.name}-{backend}-counted-on-cpu"))
    return out


@pytest.mark.parametrize("folder,backend,ncu", _variants())
def test_solution_and_starter_on_the_gpu(folder, backend, ncu, tmp_path):
    from bench.grading import labs

    lab = labs.load(folder)
    how = [] if ncu else ["--count-on-cpu"]
    status, results = _graded(tmp_path / "s", lab.number, lab.solution(backend), *how)
    # the speed test times the solution against itself: its ratio is about 1, but this tier
    # runs tests side by side on one GPU, so only that it ran and printed is asserted here
    speed = [t for t in results["tests"] if t["name"].startswith("speed")]
    assert all("x its speed" in t["output"] for t in speed), _why(results)
    assert all(t.get("status") == "passed" for t in results["tests"] if t not in speed), \
        _why(results)
    traffic = [t for t in lab.tests_for(backend, lab.tests) if t.kind == "traffic"]
    if ncu and find_ncu():
        counted = [t for t in results["tests"] if "counted by Nsight Compute" in t["output"]]
        assert len(counted) == len(traffic), _why(results)
    elif not ncu:
        on_cpu = [t for t in results["tests"] if "--count-on-cpu was given" in t["output"]]
        assert len(on_cpu) == len(traffic), _why(results)
    status, results = _graded(tmp_path / "t", lab.number, lab.starter(backend), *how)
    assert status == 1 and results["score"] == 0, _why(results)


def _bugs():
    from bench.grading import labs

    return [pytest.param(folder, bug.name, id=f"{folder.name}-{bug.name}",
                         marks=pytest.mark.slow)
            for folder in LAB_DIRS for bug in labs.bugs(labs.load(folder))]


@pytest.mark.parametrize("folder,name", _bugs())
def test_planted_bugs_lose_their_tests_on_the_gpu(folder, name, tmp_path):
    from bench.grading import labs

    lab = labs.load(folder)
    bug = next(b for b in labs.bugs(lab) if b.name == name)
    path = tmp_path / f"{bug.name}{bug.suffix}"
    path.write_text(bug.source(lab))
    status, results = _graded(tmp_path, lab.number, path)
    failed = {t["name"]: t["output"] for t in results["tests"] if t.get("status") == "failed"}
    fails = bug.fails_on("cuda")
    assert set(fails) <= set(failed), _why(results)
    assert all(bug.says in failed[t] for t in fails), _why(results)
    # a traffic bug the compiler undoes (gpu_why) passes its traffic test on a GPU
    undone = [t for t in results["tests"] if t["name"] in set(bug.fails) - set(fails)]
    assert all(t.get("status") == "passed" for t in undone), (bug.gpu_why, _why(results))


@pytest.mark.parametrize("cheat,reason", [
    ("torch_add.py", "torch's add"),
    pytest.param("suite_kernel.py", "this suite's own kernel", marks=pytest.mark.slow),
    pytest.param("mutate_input.py", "changed its inputs", marks=pytest.mark.slow),
    pytest.param("cache_output.py", "previous call's output", marks=pytest.mark.slow),
    pytest.param("crash.py", "its process ended", marks=pytest.mark.slow)])
def test_cheats_score_zero_on_the_gpu(cheat, reason, tmp_path):
    status, results = _graded(tmp_path, 1, CHEATS / cheat, "--timeout", 60)
    assert status == 1 and results["score"] == 0, _why(results)
    failed = [t for t in results["tests"] if t.get("status") == "failed"]
    assert failed and all(reason in t["output"] for t in failed), _why(results)


SOLUTION_CU = (ROOT / "labs" / "01_vector_add" / "instructor" / "solution.cu").read_text()
LAUNCH = "    vector_add_kernel<<<blocks, BLOCK>>>(x, y, out, n);"


def test_a_cuda_host_function_that_computes_on_the_host_scores_zero(tmp_path):
    cheat = tmp_path / "host_copy.cu"
    cheat.write_text("#include <vector>\n" + SOLUTION_CU.replace(LAUNCH, """\
    std::vector<float> hx(n), hy(n);
    cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (long i = 0; i < n; ++i) hx[i] += hy[i];
    cudaMemcpy(out, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    vector_add_kernel<<<1, 1>>>(x, y, out, 0);"""))
    status, results = _graded(tmp_path, 1, cheat)
    assert status == 1, _why(results)
    gpu_tests = [t for t in results["tests"] if t["name"] in ("one block", "many blocks")]
    assert all(t["score"] == 0 and "copied memory between the host and the GPU" in t["output"]
               for t in gpu_tests), _why(results)


@pytest.mark.slow
def test_an_illegal_address_fails_its_test_and_the_next_one_runs_fresh(tmp_path):
    """Lab 1's first test writes far past the output; the CUDA context is lost, the process
    ends after its answer, and the next tests run in a fresh process (and fail only on
    their own merits: here the same write)."""
    wild = tmp_path / "wild.cu"
    wild.write_text(SOLUTION_CU.replace("    out[i] = x[i] + y[i];",
                                        "    out[i + (1L << 40)] = x[i] + y[i];"))
    status, results = _graded(tmp_path, 1, wild, "--timeout", 60)
    assert status == 1 and results["score"] == 0, _why(results)
    first = results["tests"][0]
    assert "CUDA error" in first["output"] or "process ended" in first["output"], _why(results)
    # every GPU test ran (none was left hanging behind the lost context)
    assert all(t.get("status") in ("failed", "passed") for t in results["tests"]), _why(results)
