"""The FFMA rungs past the lecture: cuda/matmul_v4_vectorized.cu, v5_warptiling, v6_pipelined,
v7_lean_fetch, v8_split_k.

CPU tier: each file opens with the ladder's header; each builds for sm_80 (the sm_90 build
and its no-spill check are tests/test_cuda_build.py's) with both instantiations, the
128-bit one and the scalar one, and spills nothing; the traffic models equal an
element-by-element count of what the kernels issue and the lecture-style formulas at tile
multiples; the profile's target counts float4 load instructions as four elements (and fails
a kernel whose loads were split into scalars); the sweep script names only parameters that
exist; and every ladder kernel runs on the CPU emulator (bench/cuda_emulator/) at odd shapes
on both paths, under AddressSanitizer. (GPU tier: tests/gpu/test_ffma_rungs.py.)
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import problems, profile, registry
from bench.families.matmul import models
from bench.families.matmul.models import MatmulShape
from bindings import config
from tests.support import emulated
from tests.support.grid_rows import shape_with_rows, version_of
from tests.support.tile_counts import count_tiles

ROOT = Path(__file__).resolve().parents[2]
RUNGS = {"v4": "v4_vectorized", "v5": "v5_warptiling", "v6": "v6_pipelined",
         "v7": "v7_lean_fetch", "v8": "v8_split_k"}
KERNELS = {v: f"cuda_{op}" for v, op in RUNGS.items()}
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")


def _kernel(version: str):
    return registry.get(KERNELS[version])


# --------------------------------------------------------------------------- the files

@pytest.mark.parametrize("op", RUNGS.values())
def test_rung_opens_with_the_ladder_header(op):
    """idea, change, traffic, precond., params, run: the layout of v1-v3, so that the diff
    between two rungs reads as a slide; and the launcher chooses the vector width."""
    text = (ROOT / "cuda" / f"matmul_{op}.cu").read_text()
    for field in ("idea", "change", "traffic", "precond.", "params", "run"):
        assert re.search(rf"^//   {re.escape(field)}\s", text, re.M), f"{op}: no '{field}'"
    assert f"X({op})" in (ROOT / "cuda" / "matmul_config.h").read_text().replace(" ", "")
    assert "vector_path_ok(A, B, C, N, K)" in text, f"{op}: the launcher picks the path"


@needs_nvcc
@pytest.mark.parametrize("op", RUNGS.values())
def test_builds_for_sm80_without_spills(op, tmp_path):
    """Every rung runs from sm_80 up: both instantiations (W = 4 and W = 1) compile there
    with no spill and no stack frame."""
    out = subprocess.run([NVCC, "-arch=sm_80", "-O3", "-std=c++17", "-Xptxas=-v", "-c",
                          str(ROOT / "cuda" / f"matmul_{op}.cu"), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    entries = re.findall(r"Compiling entry function '(\w+)'", out.stderr)
    # W = 4 and W = 1 (v8: each also with SPLIT = false and true)
    widths = [re.search(r"Li([14])E(?:Lb[01]E)?EEvPKfS2_Pfi+$", e).group(1) for e in entries]
    assert len(entries) in (2, 4) and sorted(set(widths)) == ["1", "4"], entries
    for stores, loads in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads",
                                    out.stderr):
        assert (stores, loads) == ("0", "0"), out.stderr
    assert set(re.findall(r"(\d+) bytes stack frame", out.stderr)) == {"0"}, out.stderr


# --------------------------------------------------------------------------- the models

def _count_by_elements(s: MatmulShape, BM: int, BN: int, BK: int, per_thread_k: int,
                       threads: int) -> tuple[int, int, int]:
    """(global loads, shared loads, FMAs) counted tile by tile as the kernels issue them;
    each thread reads per_thread_k shared elements per k."""
    return count_tiles(s.M, s.N, s.K, BM, BN, BK, threads * per_thread_k * BK)


def _tiles(version: str) -> tuple[int, int, int, int, int]:
    """(BM, BN, BK, shared elements per thread per k, threads) of a rung's defaults."""
    p = _kernel(version).params()
    if version == "v4":
        return p["L"], p["L"], p["S"], 2 * p["V"], (p["L"] // p["V"]) ** 2
    return p["BM"], p["BN"], p["BK"], p["TM"] + p["TN"], p["BM"] * p["BN"] // (p["TM"] * p["TN"])


@pytest.mark.parametrize("version", RUNGS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (17, 13, 7), (127, 129, 31), (129, 127, 33),
                                   (131, 132, 36), (1, 300, 8), (300, 1, 9), (5, 7, 0)])
def test_model_equals_an_element_count(version, shape):
    s = MatmulShape(*shape)
    t = _kernel(version).traffic(s)
    loads, shared, fma = _count_by_elements(s, *_tiles(version))
    assert (t.global_loads, t.shared_loads, t.fma) == (loads, shared, fma)
    assert t.global_stores == s.M * s.N


@pytest.mark.parametrize("version", RUNGS)
@pytest.mark.parametrize("n", [256, 1024, 4096])
def test_lecture_style_formulas_at_tile_multiples(version, n):
    """global 2N^3/L (N^3/BN + N^3/BM), shared 2N^3/V (N^3/TN + N^3/TM), FMAs N^3."""
    p = _kernel(version).params()
    t = _kernel(version).traffic(MatmulShape(n, n, n))
    if version == "v4":
        assert t.global_loads == 2 * n**3 // p["L"]
        assert t.shared_loads == 2 * n**3 // p["V"]
    else:
        assert t.global_loads == n**3 // p["BN"] + n**3 // p["BM"]
        assert t.shared_loads == n**3 // p["TN"] + n**3 // p["TM"]
    assert t.fma == n**3


def test_load_width_follows_the_launchers_choice():
    """v4 and v5 load float4s where K and N are multiples of 4 (aligned tensors); v6, v7 and v8 copy
    with cp.async (no load instruction: load width 1, and a copy width that averages its
    one-float copies of A and its W-float copies of B); the lecture's rungs load scalars."""
    for shape, width in (((64, 64, 64), 4), ((63, 64, 64), 4), ((64, 63, 64), 1),
                         ((64, 64, 63), 1)):
        s = MatmulShape(*shape)
        assert _kernel("v4").traffic(s).load_width == width
        assert _kernel("v5").traffic(s).load_width == width
        for copier in ("v6", "v7", "v8"):
            assert _kernel(copier).traffic(s).load_width == 1
            p = _kernel(copier).params()
            threads = p["BM"] * p["BN"] // (p["TM"] * p["TN"])
            a, b = p["BM"] * p["BK"] // threads, p["BK"] * p["BN"] // threads  # floats per tile
            assert _kernel(copier).traffic(s).copy_width == (a + b) / (a + b / width)
        assert _kernel("v5").traffic(s).copy_width == 0
    for k in registry.kernels():
        if k.backend == "cuda" and k.op == "matmul" and k.version in ("v1", "v1c", "v1.5", "v2", "v3"):
            assert k.traffic(MatmulShape(64, 64, 64)).load_width == 1, k.name


def _counters(**short):
    full = {s: m for m, s in profile.METRICS}
    return {full[k]: float(v) for k, v in short.items()}


def test_profile_target_counts_float4_loads_as_four_elements():
    problem = problems.get("matmul")
    shape = MatmulShape(1024, 1024, 1024)
    for version in ("v4", "v5"):
        k = _kernel(version)
        model = k.traffic(shape)
        vector = _counters(ld_thread_inst=model.global_loads // 4, ffma=model.fma)
        lv = profile.levels(vector, 4, model.load_width)
        assert lv["issued_elements"] == model.global_loads
        assert profile.compare(k, problem, lv, model)["target"] == "PASS"
        # the same loads split into scalar instructions: 4x the modelled instructions
        scalar = _counters(ld_thread_inst=model.global_loads, ffma=model.fma)
        lv = profile.levels(scalar, 4, model.load_width)
        assert profile.compare(k, problem, lv, model)["target"] == "FAIL"
    # v6: cp.async copies, counted by warp instructions x 32 lanes x the model's copy width.
    # The byte metric beside them reported 0.52 of the copied bytes on the H100 (what it
    # says is not used when the model knows the copies' widths).
    k = _kernel("v6")
    model = k.traffic(shape)
    warp_inst = model.global_loads / (32 * model.copy_width)
    assert warp_inst == int(warp_inst)
    copies = _counters(ld_thread_inst=0, ldgsts_warp_inst=warp_inst,
                       ldgsts_bytes=0.52 * 4 * model.global_loads, ffma=model.fma)
    lv = profile.levels(copies, 4, model.load_width, model.copy_width)
    assert lv["issued_elements"] == model.global_loads
    assert profile.compare(k, problem, lv, model)["target"] == "PASS"
    # one copy instruction in 50 missing is seen
    fewer = _counters(ld_thread_inst=0, ldgsts_warp_inst=warp_inst * 0.97, ffma=model.fma)
    lv = profile.levels(fewer, 4, model.load_width, model.copy_width)
    assert profile.compare(k, problem, lv, model)["target"] == "FAIL"


def test_v6_copy_count_matches_the_h100_counters_of_its_first_tiles():
    """The H100's counters of v6 at 4096^3 with its first tiles (BM = BN = 128, BK = 8,
    32 x 64 warp tiles, 8 x 8 per thread): 20,971,520 LDGSTS warp instructions, 5 per warp
    and 8-k step, 4 one-float copies of A and one 16-byte copy of B per thread."""
    p = dict(_kernel("v6").params(), BM=128, BN=128, BK=8, WM=32, WN=64, TM=8, TN=8,
             precision="fp32")
    model = models.matmul_v6(MatmulShape(4096, 4096, 4096), p)
    assert model.copy_width == 8 / 5
    lv = profile.levels(_counters(ld_thread_inst=0, ldgsts_warp_inst=20_971_520), 4, 1,
                        model.copy_width)
    assert lv["issued_elements"] == model.global_loads == 2 * 4096**3 // 128


def test_rungs_are_on_the_ladder():
    ladder = {k.name for k in registry.select("@ladder")}
    assert set(KERNELS.values()) <= ladder
    assert all(models.is_ladder(v) for v in RUNGS)
    ladder = [k.version for k in registry.select("@ladder") if k.backend == "cuda"]
    assert ladder == sorted(ladder, key=models.ladder_order)[:len(ladder)]
    assert ladder[-len(RUNGS):] == list(RUNGS)


# --------------------------------------------------------------------------- the sweep

SWEEP = ROOT / "cuda" / "driver" / "ffma_sweep.sh"


def _candidates() -> list[tuple[str, list[str]]]:
    text = SWEEP.read_text()
    block = re.search(r"^candidates=\((.*?)^\)", text, re.M | re.S).group(1)
    return [(rung, re.findall(r"-D(\w+)=", defs))
            for rung, defs in re.findall(r'"(\w+)\|([^"]*)"', block)]


def test_sweep_candidates_name_real_parameters():
    cands = _candidates()
    assert 0 < len(cands) <= 40
    defined = set(config.params())
    for rung, names in cands:
        assert f"matmul_{rung}" in config.MATMUL_OPS, rung
        for name in names:
            assert name.removeprefix("CVT_") in defined, (rung, name)
    assert subprocess.run(["bash", "-n", str(SWEEP)]).returncode == 0


def test_driver_needs_no_cublas_by_default():
    """The CMake build and the tests link the driver without cuBLAS; only the sweep (and
    -DCVT_WITH_CUBLAS=ON) asks for it."""
    driver = (ROOT / "cuda" / "driver" / "matmul_driver.cu").read_text()
    include = driver.index("#include <cublas_v2.h>")
    assert driver.rfind("#ifdef CVT_WITH_CUBLAS", 0, include) != -1
    assert "cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH)" in driver  # TF32 off
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert 'option(CVT_WITH_CUBLAS "' in cmake and "OFF)" in cmake


# --------------------------------------------------------------------------- the emulator

EMULATOR = ROOT / "bench" / "cuda_emulator"
# (M, N, K, offset in floats): the scalar path (odd K or N, or an offset pointer) and the
# 128-bit path (K, N multiples of 4, aligned), at tile edges, K = 0 and 1 x 1 x 1.
# The last two give v8 (the emulator plays an H100: 132 SMs, sm_90) a split of K across a
# cluster, on both paths: 4 splits of 5, 5, 5 and 4 k tiles, and 5 of 5, 5, 5, 5 and 1 (the
# partial last tile alone); and split_k_fp32 a split over grid z with its partials through a
# workspace and the sum kernel (4 splits; the float4 sum, then the scalar one at N = 131),
# and on its narrow tile where N <= 128 (both paths).
EMULATED_SHAPES = [(1, 1, 1, 0), (17, 13, 7, 0), (127, 129, 31, 0), (129, 131, 33, 1),
                   (131, 132, 36, 0), (131, 132, 36, 1), (1, 4, 4, 0), (64, 64, 0, 0),
                   (200, 8, 12, 0), (130, 260, 300, 0), (129, 131, 321, 1), (130, 100, 300, 0),
                   (129, 97, 321, 1)]


@pytest.mark.slow
def test_every_ladder_kernel_on_the_cpu_emulator(tmp_path):
    """The kernels' own code (index arithmetic, masks, barriers, cp.async groups done as
    late as allowed) on emulated threads, checked element by element against float64, with
    AddressSanitizer watching every global and shared access (~1 minute)."""
    out = emulated.run(tmp_path, "runner.cpp", "all_kernels.inc", EMULATED_SHAPES)
    assert out.count(" ok") == len(config.MATMUL_OPS) * len(EMULATED_SHAPES), out


# The fold of a grid's rows of blocks into (y, z) (cuda/common.cuh: fold_grid, block_y), with
# CUDA's 65535 blocks along y and z lowered to CVT_MAX_GRID_YZ = 3 for the kernels and the
# emulator (which aborts a launch past it): every rung at 8 rows of blocks, the last partial,
# launched as 3 along y by 3 along z, the ninth row past C (its blocks must return at once:
# for v6-v8 it would start a group of GROUP = 8 rows of its own, with no rows in it); on the
# scalar path (odd K, an offset pointer) and, for a launcher that has one, the 128-bit path.
# v8's 8 rows are more than y holds, so it runs unsplit (the split takes z) and folds as v7.
FOLD_LIMIT, FOLD_ROWS = 3, 8
LADDER = [k for k in registry.select("@ladder") if k.backend == "cuda"]


@pytest.mark.slow
def test_every_ladder_kernel_folds_a_long_grid_on_the_cpu_emulator(tmp_path):
    """Every element of C, against float64, for grids of more rows of blocks than grid y
    holds (~15 s)."""
    # split_k_fp32 (a path beside the ladder) splits only where grid y holds its rows, and
    # runs v7 elsewhere: v7's fold is its fold
    assert {version_of(k) for k in LADDER} == {v.removeprefix("matmul_") for v in config.MATMUL_OPS
                                               if v != "matmul_split_k_fp32"}
    assert all(FOLD_ROWS % _kernel(v).params()["GROUP"] == 0 for v in ("v6", "v7", "v8"))
    runner = emulated.build(tmp_path, "runner.cpp", "all_kernels.inc",
                            {"CVT_MAX_GRID_YZ": FOLD_LIMIT})
    for kernel in LADDER:
        m, n = shape_with_rows(kernel, FOLD_ROWS, 20)
        vector = "vector_path_ok(" in (ROOT / kernel.source).read_text()
        shapes = [(m, n, 9, 1), (m, n, 20, 0)][:1 + vector]
        out = emulated.run_built(runner, shapes, f"--only={version_of(kernel)}")
        assert out.count(" ok") == len(shapes), out


def test_emulator_rewrites_every_launch():
    sys.path.insert(0, str(EMULATOR))
    try:
        import emulate
    finally:
        sys.path.pop(0)
    emulated = [*sorted((ROOT / "cuda").glob("matmul_v*.cu")),
                ROOT / "cuda" / "matmul_split_k_fp32.cu", ROOT / "cuda" / "split_k.cuh",
                *(ROOT / "cuda" / f"matmul_{rung}.cu" for rung in emulate.EMULATED_TENSOR_CORE_RUNGS)]
    for cu in emulated:
        text = emulate.rewrite(cu.read_text())
        assert "<<<" not in text and "cvt_emu::launch(" in text, cu.name
    assert emulate.split_top_level("dim3(a, b), t, 0, s") == ["dim3(a, b)", "t", "0", "s"]


