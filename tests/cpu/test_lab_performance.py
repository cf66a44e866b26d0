"""CPU tier: the labs' performance tests (bench/grading/grade.py, run_performance). On a
GPU they time the submission beside a reference in alternating rounds, by the grader's own
clock, on input sets the submission has not seen; on a CPU they say "needs a GPU" and score
as not run. CVT_LAB_TIME_ON_CPU=1 runs the same timing under the Triton interpreter, so that
the protocol, the credit curve and the check of the timed loop's outputs are tested here
(tests/gpu/test_labs_gpu.py times on the GPU)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.grading import grade, labs

ROOT = Path(__file__).resolve().parents[2]
LAB1 = ROOT / "labs" / "01_vector_add"
PERF_ONLY = '''
number = 1
slug = "vector_add"
title = "timing only"
op = "vector_add"
function = "vector_add"
backend = "triton"
timeout = 120

[[tests]]
name = "speed"
kind = "performance"
points = 4
shapes = ["4096"]
full_at = 0.5
zero_at = 0.1
'''


@pytest.mark.parametrize("ratio,share", [(2.0, 1.0), (0.5, 1.0), (0.3, 0.5), (0.1, 0.0),
                                         (0.05, 0.0), (float("nan"), 0.0)])
def test_the_credit_curve(ratio, share):
    assert grade.speed_credit(ratio, 0.5, 0.1) == pytest.approx(share)


def test_a_curve_that_is_no_curve_is_refused(tmp_path):
    (tmp_path / "lab.toml").write_text(PERF_ONLY.replace("zero_at = 0.1", "zero_at = 0.5"))
    with pytest.raises(labs.LabError, match="zero_at < full_at"):
        labs.load(tmp_path)


def test_on_a_cpu_it_is_not_run(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.delenv("CVT_LAB_TIME_ON_CPU", raising=False)
    lab = labs.get(1)
    test = next(t for t in lab.tests if t.kind == "performance")
    result = grade.run_test(test, lab, None, LAB1 / "starter.py", "cpu")
    assert (result.status, result.score, result.output) == ("not run", 0.0, "needs a GPU")


@pytest.fixture
def timing_lab(tmp_path, monkeypatch):
    """Lab 1 with only a performance test, timed on the CPU."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("CVT_LAB_TIME_ON_CPU", "1")
    folder = tmp_path / "01_timing"
    shutil.copytree(LAB1 / "instructor", folder / "instructor")
    (folder / "lab.toml").write_text(PERF_ONLY)
    return labs.load(folder)


def _variant(tmp_path, name, old, new) -> Path:
    source = (LAB1 / "instructor" / "solution.py").read_text()
    assert source.count(old) == 1
    path = tmp_path / name
    path.write_text(source.replace(old, new))
    return path


def test_the_reference_against_itself_scores_full_marks(timing_lab):
    graded = grade.grade(timing_lab, timing_lab.instructor / "solution.py")
    [test] = graded.tests
    assert (test.status, test.score) == ("passed", 4), test.output
    assert "alternating rounds" in test.output and "solution.py" in test.output


@pytest.mark.slow
def test_a_slow_submission_loses_points_on_the_curve(timing_lab, tmp_path):
    slow = _variant(tmp_path, "slow.py", "    out = torch.empty_like(x)\n",
                    "    import time\n    time.sleep(0.05)\n    out = torch.empty_like(x)\n")
    graded = grade.grade(timing_lab, slow)
    [test] = graded.tests
    assert test.status == "failed" and test.score < 2, test.output
    assert "x its speed" in test.output


def test_a_timed_loop_that_answers_wrong_scores_zero(timing_lab, tmp_path):
    """Right while it is checked call by call, wrong once it is called many times in a row
    (as a timed loop calls it): the loop's outputs are checked afterwards."""
    lazy = _variant(tmp_path, "lazy.py", "    out = torch.empty_like(x)\n", (
        "    global CALLS\n    CALLS = globals().get('CALLS', 0) + 1\n"
        "    out = torch.empty_like(x)\n    n = x.numel()\n    if CALLS > 4:\n"
        "        vector_add_kernel[(triton.cdiv(n, BLOCK),)](x, x, out, n, BLOCK=BLOCK)\n"
        "        return out\n"))
    graded = grade.grade(timing_lab, lazy)
    [test] = graded.tests
    assert test.score == 0 and "the timed loop's output" in test.output, test.output


@pytest.mark.parametrize("cheat,reason", [
    ("mutate_input.py", "changed its inputs"),
    ("cache_output.py", "previous call's output")])
def test_the_timed_loop_catches_the_cheats_a_correctness_call_catches(timing_lab, cheat,
                                                                      reason):
    """Input mutation and output reuse, seen in the timed loop itself: the sets the grader
    checks afterwards are drawn again from their seed and compared, and every output of the
    loop must be a tensor of its own."""
    graded = grade.grade(timing_lab, ROOT / "tests" / "data" / "labs" / "cheats" / cheat)
    [test] = graded.tests
    assert test.score == 0 and reason in test.output, test.output


def test_an_input_changed_behind_a_right_output_is_caught_in_the_timed_loop(timing_lab,
                                                                           tmp_path):
    """A right answer in a fresh output, with y overwritten after it: the sets the grader
    checks are drawn again from their seed and compared with what the loop left."""
    spoils = _variant(tmp_path, "spoils.py", "    return out\n", (
        "    if n:\n"
        "        vector_add_kernel[(triton.cdiv(n, BLOCK),)](x, y, y, n, BLOCK=BLOCK)\n"
        "    return out\n"))
    graded = grade.grade(timing_lab, spoils)
    [test] = graded.tests
    assert test.score == 0 and "changed its inputs" in test.output, test.output


def test_a_cuda_function_is_unwatched_only_inside_the_timed_calls():
    """A .cu file's function skips its profiler while timed (CudaFunction.timing), and only
    then: the correctness tests after a performance test are watched again."""
    import torch

    from bench.grading.sandbox import _Timing

    class Fn:
        timing = False
        seen = []

        def __call__(self, x):
            self.seen.append(self.timing)
            return torch.empty_like(x)

    fn = Fn()
    outs, why = _Timing._calls(fn, [[torch.zeros(3)]] * 2, "cpu")
    assert (len(outs), why, Fn.seen, fn.timing) == (2, "", [True, True], False)
