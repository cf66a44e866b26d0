"""CPU tier: the labs' CUDA variants (bench/grading/cuda_lab.py). A .cu submission runs on
the CUDA emulator (bench/cuda_emulator/) with its kernels' pointer parameters counted
(counted.cuh): what the rewrite makes of a kernel, the counts, and the ways a CUDA
submission can go wrong or cheat that a Python one cannot (host code computing the output,
a raw pointer that escapes the count, a launch CUDA refuses, a file that does not compile),
and the build folder of a sandbox that is killed, removed with the sandbox's TMPDIR.
tests/cpu/test_labs.py grades each lab's CUDA solution, starter and planted bugs;
tests/gpu/test_labs_gpu.py the same through nvcc on a GPU. (Each grade here compiles and
runs a file on the emulator: the cases past the first few are in the slow tier.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.grading import cuda_lab, labs

# the same on every machine: fast tier without a GPU, slow tier beside one (tests/conftest.py)
pytestmark = pytest.mark.same_everywhere

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = (ROOT / "labs" / "01_vector_add" / "instructor" / "solution.cu").read_text()


def test_the_signature_is_read_into_pointers_integers_and_floats():
    name, params = cuda_lab.parse_signature(
        "void f(const float* __restrict__ x, float *out, long n, float p, int seed)")
    assert name == "f"
    assert [(p.name, p.kind) for p in params] == [
        ("x", "pointer"), ("out", "pointer"), ("n", "int"), ("p", "float"), ("seed", "int")]
    with pytest.raises(ValueError, match="void name"):
        cuda_lab.parse_signature("int f(float* x)")


def test_only_the_kernels_pointer_parameters_are_counted():
    source = ("template <int T>\n__global__ void __launch_bounds__(256) k(const float* __restrict__ a,"
              " float* b, int n) {}\nvoid host(const float* a, float* b) {}\n")
    out = cuda_lab.counted_kernels(source)
    assert "cvt_emu::counted<const float> a" in out and "cvt_emu::counted<float> b" in out
    assert "int n)" in out and "void host(const float* a, float* b)" in out
    assert cuda_lab.kernel_names(source) == {"k"}
    assert cuda_lab.tile_constants("#define TILE 32\nconstexpr int BLOCK = 256;\n") == {
        "TILE": 32, "BLOCK": 256}


def grade(tmp_path, number, source: str, *extra):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "submission.cu"
    path.write_text(source)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "bench", "grade", str(number), str(path),
                          "--out", str(out), *extra], capture_output=True, text=True,
                         timeout=600, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""})
    assert (out / "results.json").is_file(), run.stdout + run.stderr
    results = json.loads((out / "results.json").read_text())
    return run.returncode, {t["name"]: t for t in results["tests"]}


def test_the_solution_is_counted_element_by_element(tmp_path):
    status, tests = grade(tmp_path, 1, SOLUTION)
    assert status == 0, tests
    assert "8198 counted, bound 2 * n = 8198" in tests["each element read once"]["output"]
    assert "half precision" not in tests            # a Triton-only test


def test_host_code_that_computes_the_output_scores_zero(tmp_path):
    cheat = SOLUTION.replace("    vector_add_kernel<<<blocks, BLOCK>>>(x, y, out, n);",
                             "    for (long i = 0; i < n; ++i) out[i] = x[i] + y[i];\n"
                             "    vector_add_kernel<<<1, 1>>>(x, y, out, 0);")
    status, tests = grade(tmp_path, 1, cheat)
    assert status == 1
    assert all(t["score"] == 0 for t in tests.values()), tests
    assert "must be written by the kernel" in tests["many blocks"]["output"]


@pytest.mark.slow
def test_a_pointer_that_escapes_the_count_is_not_graded_on_traffic(tmp_path):
    escaped = SOLUTION.replace("    out[i] = x[i] + y[i];",
                               "    const float* xs = x;\n    out[i] = xs[i] + y[i];")
    status, tests = grade(tmp_path, 1, escaped)
    assert tests["many blocks"]["status"] == "passed"              # still right
    assert tests["each element read once"]["score"] == 0
    assert "raw pointers taken" in tests["each element read once"]["output"]


@pytest.mark.slow
def test_a_launch_cuda_refuses_fails_as_on_a_gpu(tmp_path):
    too_big = SOLUTION.replace("    vector_add_kernel<<<blocks, BLOCK>>>(x, y, out, n);",
                               "    vector_add_kernel<<<(n + 2047) / 2048, 2048>>>(x, y, out, n);")
    status, tests = grade(tmp_path, 1, too_big)
    assert status == 1
    assert "invalid configuration argument" in tests["one block"]["output"]


def test_a_file_that_does_not_compile_is_named_with_its_line(tmp_path):
    broken = SOLUTION.replace("  if (i < n) {", "  if (i < n) {{")
    status, tests = grade(tmp_path, 1, broken)
    assert status == 1 and all(t["score"] == 0 for t in tests.values())
    assert "compiling it failed: submission.cu:" in tests["one block"]["output"]


def test_a_stopped_sandbox_leaves_no_temporary_folder(tmp_path, monkeypatch):
    """The sandbox is killed, so its build folder's own cleanup never runs: what it writes
    to its TMPDIR, a folder of the grader's, is removed when it is stopped (twice is fine)."""
    import tempfile

    from bench.grading import grade as grade_mod

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    lab = labs.get(1)
    spec = {"op": lab.op, "cuda": {**lab.cuda, "include": str(lab.folder)}}
    box = grade_mod.Sandbox(lab.solution("cuda"), lab.function, 60.0, spec, cpu=True)
    box.start()
    assert not box.load_error, box.load_error
    assert list(tmp_path.glob("cvt_sandbox_*/cvt_lab_*/lab_*.so"))    # its build folder
    box.stop()
    box.stop()
    assert not list(tmp_path.rglob("cvt_lab_*")) and not list(tmp_path.glob("cvt_sandbox_*"))


def test_a_cu_file_for_a_lab_without_a_cuda_variant_is_refused_before_grading(tmp_path):
    lab = labs.Lab(number=9, slug="x", title="x", op="vector_add", function="f",
                   backend="triton", folder=tmp_path)
    with pytest.raises(labs.LabError, match="no CUDA variant"):
        lab.backend_of("a.cu")
    with pytest.raises(labs.LabError, match="takes a .py file"):
        lab.backend_of("a.txt")


CUDA_FILES = sorted(p for lab in labs.all_labs() if lab.cuda
                    for p in (lab.starter("cuda"), lab.solution("cuda")))


@pytest.mark.parametrize("path", CUDA_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_labs_cuda_file_compiles_with_nvcc(path, tmp_path):
    """What the GPU builds: each lab's CUDA starter and solution, with the grader's entry,
    for sm_90a (the H100 and H200) and sm_80 (lab 6's mma.sync needs 8.0)."""
    import shutil

    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").is_file():
        pytest.skip("needs nvcc")
    lab = next(lab for lab in labs.all_labs() if path.is_relative_to(lab.folder))
    for arch in ("sm_90a", "sm_80"):
        lib = cuda_lab.compile_library(path, lab.cuda["signature"], "cuda", tmp_path / arch,
                                       str(lab.folder), arch=arch)
        assert lib.is_file()


def test_a_suite_kernel_behind_a_torch_library_op_is_named_as_the_suites():
    """On a GPU this suite's Triton ops reach the grader's dispatch mode as a higher-order op
    holding the kernel (autotuned ones inside an Autotuner): the refusal names it as this
    suite's own kernel (bench/grading/guard.py, wrapped_refusal)."""
    from bench.grading import guard
    from triton_impl import matmul_autotuned, vector_add

    for kernel in (vector_add.vector_add_kernel, matmul_autotuned.matmul_autotuned_kernel):
        why = str(guard.wrapped_refusal(kernel, guard.Record()))
        assert "this suite's own kernel" in why, why
    assert "through a torch.library op" in str(guard.wrapped_refusal(len, guard.Record()))


@pytest.mark.slow
def test_the_emulator_takes_what_a_students_kernel_may_use(tmp_path):
    """Dynamic shared memory without __align__, the other warp shuffles, __syncwarp,
    warpSize, device math and min: a student's CUDA runs on the CPU as written."""
    source = """#include <cuda_runtime.h>
constexpr int BLOCK = 64;
__global__ void k(const float* x, const float* y, float* out, long n) {
  extern __shared__ float buf[];
  long i = static_cast<long>(blockIdx.x) * BLOCK + threadIdx.x;
  float v = i < n ? float(x[i]) + float(y[i]) : 0.0f;
  float s = v;
  for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
  s = __shfl_sync(0xffffffffu, s, 0) + __shfl_up_sync(0xffffffffu, s, 1);
  buf[threadIdx.x] = s;
  __syncwarp();
  __syncthreads();
  if (i < n) out[i] = v + 0.0f * __expf(min(0.0f, buf[threadIdx.x] * 0.0f)) * warpSize;
}
void vector_add(const float* x, const float* y, float* out, long n) {
  if (n > 0) k<<<(n + BLOCK - 1) / BLOCK, BLOCK, BLOCK * sizeof(float)>>>(x, y, out, n);
}
"""
    status, tests = grade(tmp_path, 1, source)
    assert status == 0, tests


@pytest.mark.slow
def test_the_emulator_names_reads_past_an_input_and_refuses_stores_past_the_output(tmp_path):
    """counted.cuh checks every access against the tensors of the call: a read past x is
    named with its distance, a store past the output is dropped and fails the call (on a
    GPU it would overwrite another allocation)."""
    reads = SOLUTION.replace("    out[i] = x[i] + y[i];", "    out[i] = x[i] + y[i] + 0.0f * x[i + 1];")
    status, tests = grade(tmp_path / "r", 1, reads)
    why = tests["a partial last block"]["output"]
    assert "reads past the inputs: 1 loads outside every tensor, the first just past the end " \
           "of x (1000)" in why, why
    stores = SOLUTION.replace("  if (i < n) {", "  {")
    status, tests = grade(tmp_path / "s", 1, stores)
    why = tests["a partial last block"]["output"]
    assert "stored 24 elements outside every tensor" in why and "past the end of out" in why, why


def test_a_gradebook_of_both_variants_leaves_the_tests_a_file_did_not_take_empty(tmp_path):
    import csv

    from bench.grading import grade, outputs

    lab = labs.get(1)
    py = grade.Graded(lab, "a.py", [grade.TestResult("one block", 1, 1, ""),
                                    grade.TestResult("half precision", 1, 0, "", status="failed")])
    cu = grade.Graded(lab, "b.cu", [grade.TestResult("one block", 1, 1, "")])
    rows = list(csv.reader(outputs.gradebook([py, cu], tmp_path / "book.csv").open()))
    assert rows == [["submission", "score", "max_score", "one block", "half precision"],
                    ["a.py", "1", "2", "1", "0"], ["b.cu", "1", "1", "1", ""]]
