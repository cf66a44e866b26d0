"""CPU tier: a lab's traffic test graded from Nsight Compute's counts
(bench/grading/grade.py, run_traffic_on_gpu; bench/grading/counters.py). Here a stand-in
sandbox answers lab 1's calls and a stand-in report gives the counts: within the bound it
passes, over it fails, too few stores fail, a kernel that is not the file's fails, a call
ncu did not profile is said, and where ncu cannot count the grader says so and counts on
the CPU. ncu keeps the grader's TMPDIR, the sandbox under it gets its own.
tests/gpu/test_labs_gpu.py grades with the real ncu."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.grading import counters, grade, labs

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "labs" / "01_vector_add" / "instructor" / "solution.py"
SOLUTION_CU = ROOT / "labs" / "01_vector_add" / "instructor" / "solution.cu"


class _Box:
    """A sandbox that adds x and y itself and says the file's kernel ran."""

    timeout = 10.0

    def __init__(self, path: Path):
        self.path, self.calls, self.finished = path, 0, False

    def call(self, request):
        assert request["profile"] is True
        x, y = request["inputs"]
        self.calls += 1
        return {"out": x + y, "inputs_after": [x, y], "launches": [("k", str(self.path))],
                "refused": [], "same_output": False, "error": "", "counted": None,
                "note": ""}

    def finish(self, seconds):
        self.finished = True

    def stop(self):
        pass


def _traffic_test(lab):
    return next(t for t in lab.tests if t.kind == "traffic")


def _grade(monkeypatch, path, backend, per_call):
    lab = labs.get(1)
    test = _traffic_test(lab)
    box = _Box(path)
    calls = len(test.shapes) * len(test.precisions) * test.calls
    monkeypatch.setattr(counters, "calls",
                        lambda workdir: per_call if isinstance(per_call, str) else
                        [dict(per_call) for _ in range(calls)])
    result = grade.run_traffic_on_gpu(test, lab, box, Path("/nonexistent"), path, backend)
    assert box.finished
    return result, test


def _counts(n_elements_loaded, n_elements_stored, kernels=("vector_add_kernel",)):
    return {"kernels": list(kernels), "load_bytes": 4.0 * n_elements_loaded,
            "store_bytes": 4.0 * n_elements_stored, "dram_read_bytes": 0.0,
            "dram_write_bytes": 0.0}


def _n(test):
    [shape] = test.shapes
    return int(shape)


def test_within_the_bound_passes_and_says_who_counted(monkeypatch):
    test = _traffic_test(labs.get(1))
    n = _n(test)
    result, _ = _grade(monkeypatch, SOLUTION, "triton", _counts(2 * n, n))
    assert result.status == "passed", result.output
    assert "counted by Nsight Compute" in result.output and "DRAM" in result.output


def test_over_the_bound_fails(monkeypatch):
    test = _traffic_test(labs.get(1))
    n = _n(test)
    result, _ = _grade(monkeypatch, SOLUTION, "triton", _counts(3 * n, n))
    assert result.score == 0 and "more loads than the bound" in result.output, result.output


def test_too_few_stores_fail(monkeypatch):
    test = _traffic_test(labs.get(1))
    n = _n(test)
    result, _ = _grade(monkeypatch, SOLUTION, "triton", _counts(2 * n, n // 2))
    assert result.score == 0 and "must be written by the kernel" in result.output


def test_a_kernel_that_is_not_the_files_fails(monkeypatch):
    test = _traffic_test(labs.get(1))
    n = _n(test)
    result, _ = _grade(monkeypatch, SOLUTION_CU, "cuda",
                       _counts(2 * n, n, kernels=("vector_add_kernel", "gemv2T_kernel")))
    assert result.score == 0 and "not the file's: gemv2T_kernel" in result.output


def test_a_report_without_every_call_or_without_counters_is_said(monkeypatch):
    why = _grade(monkeypatch, SOLUTION, "triton",
                 "Nsight Compute may not read this GPU's counters here")[0]
    assert why == "Nsight Compute may not read this GPU's counters here"


def test_where_ncu_cannot_count_the_grader_says_so(monkeypatch):
    lab = labs.get(1)
    why = grade._traffic_on_gpu(_traffic_test(lab), lab, SOLUTION, "triton", None, 10.0,
                                count_on_cpu=True)
    assert why == "--count-on-cpu was given"
    monkeypatch.setattr(counters, "command", lambda workdir: None)
    why = grade._traffic_on_gpu(_traffic_test(lab), lab, SOLUTION, "triton", None, 10.0)
    assert why == "no Nsight Compute (ncu) on this machine"


@pytest.mark.parametrize("name,short", [
    ("void vector_add_kernel<float>(const float *, const float *, float *, long)",
     "vector_add_kernel"),
    ("vector_add_kernel", "vector_add_kernel"),
    ("void cvt::lab::tile_kernel(float *)", "tile_kernel")])
def test_kernel_names_from_the_report(name, short):
    assert counters.kernel_name(name) == short


def test_the_sandbox_under_ncu_is_started_with_its_command(tmp_path):
    """The command ncu is given: counters in the range alone, its report and log in the
    test's folder (where there is an ncu)."""
    command = counters.command(tmp_path)
    if command is None:
        pytest.skip("no ncu on this machine")
    assert f"{counters.RANGE}/" in command and str(tmp_path / "traffic") in command
    assert all(m in ",".join(command) for m in counters.METRICS.values())
    box = grade.Sandbox(SOLUTION, "vector_add", 10.0, prefix=command)
    assert box.prefix == command


def test_under_ncu_only_the_sandbox_gets_its_own_tmpdir(tmp_path, monkeypatch):
    """ncu keeps the grader's TMPDIR (its lock file there serializes profiling across
    processes); the process it runs is given the sandbox's, which stop() removes, and a
    restart makes another."""
    import json
    import sys
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    log = tmp_path / "under.json"
    stand_in = ("import json, os, sys; json.dump([os.environ.get('TMPDIR'), sys.argv[2:]], "
                "open(sys.argv[1], 'w')); os.execvp(sys.argv[2], sys.argv[2:])")
    box = grade.Sandbox(SOLUTION, "vector_add", 60.0, cpu=True,
                        prefix=[sys.executable, "-c", stand_in, str(log)])
    seen = []
    for _ in range(2):
        box.start()
        assert not box.load_error, box.load_error
        ncu_tmp, argv = json.loads(log.read_text())
        assert ncu_tmp == str(tmp_path) and f"TMPDIR={box.tmpdir}" in argv
        seen.append(box.tmpdir)
        box.stop()
        box.stop()
        assert box.tmpdir is None and not Path(seen[-1]).exists()
    assert seen[0] != seen[1] and not list(tmp_path.glob("cvt_sandbox_*"))


def _report(monkeypatch, tmp_path, values: str):
    """counters.calls over a stand-in `ncu -i --csv` of one call: the marker, one kernel."""
    import subprocess
    from types import SimpleNamespace

    names = list(counters.METRICS.values())
    header = ",".join(f'"{h}"' for h in ["ID", "Kernel Name", *names])
    units = ",".join(['""', '""', *['"byte"'] * len(names)])
    marker = ",".join(['"0"', '"spin_kernel"', *['"0"'] * len(names)])
    kernel = ",".join(['"1"', '"void add_kernel(float *)"', *values.split(",")])
    (tmp_path / "traffic.ncu-rep").write_text("")
    monkeypatch.setattr("bench.profile.find_ncu", lambda: "ncu")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: SimpleNamespace(
        stdout="\n".join([header, units, marker, kernel]), stderr="", returncode=0))
    return counters.calls(tmp_path)


def test_a_report_is_read_call_by_call(monkeypatch, tmp_path):
    [call] = _report(monkeypatch, tmp_path, '"800","200","400","1024","0"')
    assert call == {"kernels": ["add_kernel"], "load_bytes": 1000.0, "store_bytes": 400.0,
                    "dram_read_bytes": 1024.0, "dram_write_bytes": 0.0}


def test_a_count_ncu_has_no_value_of_is_said_not_read_as_zero(monkeypatch, tmp_path):
    why = _report(monkeypatch, tmp_path, '"800","(!) n/a","400","1024","0"')
    assert why == ("Nsight Compute has no value of "
                   "smsp__sass_data_bytes_mem_global_op_ldgsts.sum on this GPU")


def test_a_process_that_ends_under_ncu_is_counted_on_the_cpu_instead(monkeypatch):
    class _Ended(_Box):
        def call(self, request):
            return "its process ended (exit status 9)"

    lab = labs.get(1)
    box = _Ended(SOLUTION)
    why = grade.run_traffic_on_gpu(_traffic_test(lab), lab, box, Path("/nonexistent"),
                                   SOLUTION, "triton")
    assert why == "under Nsight Compute, its process ended (exit status 9)" and box.finished


def test_a_process_that_ends_under_ncu_gets_one_more_sandbox(monkeypatch):
    """The first sandbox under ncu ends, the second counts: graded from the second; two
    that end: the CPU counts, and the reason says twice."""
    lab = labs.get(1)
    answers = ["under Nsight Compute, its process ended (exit status 9)", "graded"]
    monkeypatch.setattr(counters, "command", lambda workdir: ["ncu"])
    monkeypatch.setattr(grade, "Sandbox", lambda *a, **k: _Box(SOLUTION))
    monkeypatch.setattr(grade, "run_traffic_on_gpu", lambda *a: answers.pop(0))
    assert grade._traffic_on_gpu(_traffic_test(lab), lab, SOLUTION, "triton", None, 10.0) \
        == "graded" and not answers
    answers = ["under Nsight Compute, its process ended (exit status 1)"] * 2
    why = grade._traffic_on_gpu(_traffic_test(lab), lab, SOLUTION, "triton", None, 10.0)
    assert why == "under Nsight Compute, its process ended (exit status 1) (twice)"


def test_a_process_that_ended_is_said_by_its_error_not_torchs_advice():
    """The reason quotes the exception's line, not the advice printed after it."""
    import tempfile

    box = grade.Sandbox.__new__(grade.Sandbox)
    box.stderr = tempfile.TemporaryFile()
    box.stderr.write(b"Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                     b"torch.AcceleratorError: CUDA error: unspecified launch failure\n"
                     b"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    assert box._stderr_tail() == ("torch.AcceleratorError: CUDA error: unspecified launch "
                                  "failure")
    box.stderr = tempfile.TemporaryFile()
    box.stderr.write(b"Killed\n")
    assert box._stderr_tail() == "Killed"
