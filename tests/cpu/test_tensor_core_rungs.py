"""The tensor-core rungs: cuda/matmul_t1_mma_sync.cu ...

CPU tier: each file opens with the ladder's header; each builds for sm_80 and sm_90 with
every instantiation (fp16 and bf16, the 16-byte and the scalar path) without a spill; its
traffic model equals a piece-by-piece count of what the kernel copies and ldmatrix-loads,
and the lecture-style formulas at tile multiples; the profile's counter target checks
mma.sync instructions x 2048 against the model's multiply-adds; the fake kernels check what
the op checks; the tile sweep names only parameters that exist; and every rung runs on the
CPU emulator (tests/support/cuda_emulator/: warp-wide ldmatrix and mma.sync emulated lane
by lane) at odd shapes on both paths, checked element by element. (GPU tier:
tests/gpu/test_tensor_core_rungs.py, and every CUDA matmul test in
tests/gpu/test_matmul_cuda.py at fp16 and bf16.)
"""
from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench import problems, profile, registry
from bench.families.matmul.models import TENSOR_CORE_VERSIONS, MatmulShape
from bindings import config
from tests.support import emulated
from tests.support.tile_counts import count_tiles

ROOT = Path(__file__).resolve().parents[2]
RUNGS = [k for k in registry.kernels() if k.backend == "cuda" and k.version in TENSOR_CORE_VERSIONS]
IDS = [k.name for k in RUNGS]
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")


def test_every_tensor_core_op_is_a_registered_rung():
    assert sorted(Path(k.source).stem for k in RUNGS) == sorted(config.TENSOR_CORE_OPS)
    for k in RUNGS:
        assert k.precisions == ("fp16", "bf16"), k.name
        assert k.min_capability >= (8, 0) and k.needs, k.name
    assert [k.version for k in registry.select("@tensor_cores")] == list(TENSOR_CORE_VERSIONS)


@pytest.mark.parametrize("kernel", RUNGS, ids=IDS)
def test_rung_opens_with_the_ladder_header(kernel):
    text = (ROOT / kernel.source).read_text()
    for field in ("idea", "change", "banks", "traffic", "precond.", "params", "run"):
        assert re.search(rf"^//   {re.escape(field)}\s", text, re.M), f"{kernel.name}: no '{field}'"
    assert "vector_path_ok_16bit(A, B, C, N, K)" in text, "the launcher picks the path"
    assert "cudaErrorNotSupported" in text, "the launcher refuses GPUs without the instructions"


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("kernel", RUNGS, ids=IDS)
def test_builds_without_spills(kernel, arch, tmp_path):
    """fp16 and bf16, each on the 16-byte and the scalar path: four kernels, no spill, no
    stack frame."""
    out = subprocess.run([NVCC, f"-arch={arch}", "-O3", "-std=c++17", "-Xptxas=-v", "-c",
                          str(ROOT / kernel.source), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True, cwd=ROOT / "cuda")
    assert out.returncode == 0, out.stderr
    entries = re.findall(r"Compiling entry function '(\w+)'", out.stderr)
    assert len(entries) == 4, entries
    assert {re.search(r"Lb([01])EEEv", e).group(1) for e in entries} == {"0", "1"}, entries
    assert sum("6__half" in e for e in entries) == 2, entries
    for stores, loads in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads",
                                    out.stderr):
        assert (stores, loads) == ("0", "0"), out.stderr
    assert set(re.findall(r"(\d+) bytes stack frame", out.stderr)) == {"0"}, out.stderr


# --------------------------------------------------------------------------- the model

def _count_pieces(s: MatmulShape, p) -> tuple[int, int, int]:
    """(global elements, shared elements, multiply-adds) counted as t1 issues them: the
    values of A and B inside the matrices (16-byte pieces outside are zero stores); per 16 k
    each warp's ldmatrix.x4: WM/16 of A and WN/16 of B, 256 values each."""
    warps = (p["BM"] // p["WM"]) * (p["BN"] // p["WN"])
    per_k_tile = p["BK"] // 16 * warps * (p["WM"] // 16 + p["WN"] // 16) * 256
    return count_tiles(s.M, s.N, s.K, p["BM"], p["BN"], p["BK"], per_k_tile)


@pytest.mark.parametrize("kernel", RUNGS, ids=IDS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (17, 13, 7), (127, 129, 31), (136, 264, 40),
                                   (1, 300, 8), (300, 1, 9), (5, 7, 0), (257, 520, 96)])
def test_model_equals_a_piece_count(kernel, shape):
    s = MatmulShape(*shape)
    t = kernel.traffic(s, "bf16")
    assert (t.global_loads, t.shared_loads, t.fma) == _count_pieces(s, kernel.params("bf16"))
    assert t.global_stores == s.M * s.N and t.elem_bytes == 2
    # 16-byte path: a cp.async moves 8 values; scalar path: plain 2-byte loads
    assert t.copy_width == (8.0 if s.K % 8 == 0 and s.N % 8 == 0 else 0.0)


@pytest.mark.parametrize("kernel", RUNGS, ids=IDS)
@pytest.mark.parametrize("n", [256, 1024, 4096])
def test_lecture_style_formulas_at_tile_multiples(kernel, n):
    """global N^3/BN + N^3/BM; shared (ldmatrix) N^3/WN + N^3/WM; multiply-adds N^3."""
    p = kernel.params("fp16")
    t = kernel.traffic(MatmulShape(n, n, n), "fp16")
    assert t.global_loads == n**3 // p["BN"] + n**3 // p["BM"]
    assert t.shared_loads == n**3 // p["WN"] + n**3 // p["WM"]
    assert t.fma == n**3


def test_counter_target_counts_mma_instructions():
    """2048 multiply-adds per mma.sync.m16n8k16: at 4096^3, 33,554,432 HMMA instructions
    (what Nsight Compute counted on the H100) are the model's N^3, and the FFMA count plays
    no part."""
    kernel = RUNGS[0]
    model = kernel.traffic(MatmulShape(4096, 4096, 4096), "bf16")
    short = dict(ldgsts_warp_inst=model.global_loads / (32 * 8), ld_warp_inst=0.0,
                 ldgsts_bytes=model.global_load_bytes, hmma_warp_inst=33554432.0, ffma=0.0,
                 shared_ld_bytes=0.0, shared_ldsm_bytes=model.shared_load_bytes)
    counters = {full: short[name] for full, name in profile.METRICS if name in short}
    lv = profile.levels(counters, 2, model.load_width, model.copy_width)
    assert lv["mma_fma"] == model.fma
    out = profile.compare(kernel, problems.get("matmul"), lv, model)
    assert out["target"] == "PASS" and out["ratio_mma"] == 1.0 and out["ratio_shared"] == 1.0
    lv["mma_fma"] /= 2      # half the mma instructions: the target must fail
    assert problems.get("matmul").profile_target(kernel, lv, model) == "FAIL"
    assert math.isnan(profile.levels({}, 2)["mma_fma"])   # no counter: not a pass


# --------------------------------------------------------------------------- the fakes

@pytest.fixture
def fake_cuda():
    """Fake CUDA tensors on a CPU-only machine (what torch.compile traces with)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        yield lambda *shape: torch.empty(*shape, device="cuda")


def test_fake_kernels_check_what_the_op_checks(fake_cuda):
    import torch

    from bindings import _fake as fk

    for op in config.TENSOR_CORE_OPS:
        fake = fk._tensor_core_fake(op)
        a, b = fake_cuda(5, 7).half(), fake_cuda(7, 3).half()
        out = fake(a, b)
        assert out.shape == (5, 3) and out.dtype == torch.float16
        assert fake(a.bfloat16(), b.bfloat16()).dtype == torch.bfloat16
        with pytest.raises(Exception, match=f"{op}: A and B must both be float16 or both "
                                            "bfloat16, got torch.float32 and torch.float32"):
            fake(a.float(), b.float())
        with pytest.raises(Exception, match="got torch.float16 and torch.bfloat16"):
            fake(a, b.bfloat16())
        with pytest.raises(Exception, match=f"{op}: inner dimensions must agree"):
            fake(a, fake_cuda(6, 3).half())
        with pytest.raises(Exception, match="must be CUDA tensors, got cpu"):
            fake(torch.empty(2, 2, dtype=torch.half), torch.empty(2, 2, dtype=torch.half))


# --------------------------------------------------------------------------- the sweep

def test_sweep_names_only_parameters_that_exist():
    text = (ROOT / "cuda" / "driver" / "tensor_core_sweep.sh").read_text()
    names = set(re.findall(r"-DCVT_(\w+)=", text))
    assert names and names <= set(config.params()), names - set(config.params())
    for rung in re.findall(r'"(\w+)\|', text):
        assert f"matmul_{rung}" in config.TENSOR_CORE_OPS, rung


@needs_nvcc
def test_driver_builds_with_the_rungs(tmp_path):
    out = subprocess.run([NVCC, "-arch=sm_80", "-O1", "-std=c++17", "-I", str(ROOT / "cuda"),
                          str(ROOT / "cuda" / "driver" / "tensor_core_driver.cu"),
                          *(str(ROOT / "cuda" / f"{op}.cu") for op in config.TENSOR_CORE_OPS),
                          "-o", str(tmp_path / "driver")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# --------------------------------------------------------------------------- the emulator

# (M, N, K, offset in elements): K and N multiples of 8 (the 16-byte path) with the block
# tile cut in every dimension; an interior block whose last k tile is partial (the lean
# fetch, then the masked one); odd N or K and an offset pointer (the scalar path); K = 0.
EMULATED_SHAPES = [(1, 8, 8, 0), (17, 13, 7, 0), (136, 264, 40, 0), (257, 136, 72, 0),
                   (130, 257, 40, 0), (136, 264, 40, 1), (5, 8, 0, 0)]


@pytest.mark.slow
def test_every_rung_on_the_cpu_emulator(tmp_path):
    """The rungs' own code (swizzled offsets, fragment layouts, masks, the lean and masked
    fetch, cp.async groups done as late as allowed) on emulated warps, in fp16 and bf16,
    against float64, with AddressSanitizer watching every access (~30 s)."""
    out = emulated.run(tmp_path, "runner_tensor_cores.cpp", "tensor_core_kernels.inc",
                       EMULATED_SHAPES)
    assert out.count(" ok") == 2 * len(config.TENSOR_CORE_OPS) * len(EMULATED_SHAPES), out
