"""The tensor-core rungs: cuda/matmul_t1_mma_sync.cu, cuda/matmul_t2_wgmma_tma.cu ...

CPU tier: each file opens with the ladder's header; t1 builds for sm_80 and sm_90 with every
instantiation (fp16 and bf16, the 16-byte and the scalar path) without a spill, the Hopper
rungs (t2, t3) for sm_90a with the instructions they are about (HGMMA, UTMALDG, ...) in
their SASS and without a spill; each traffic model equals a piece-by-piece count of what
the kernel copies (t1: cp.async pieces and ldmatrix loads; t2, t3: TMA boxes, t1's counts
off the TMA path) and the lecture-style formulas at tile multiples; the profile's counter
target checks tensor-pipe instructions x their multiply-adds against the model's (2048 per
mma.sync, 64 BN 16 / 4 per warp of a wgmma) and the TMA rungs' loads by the bytes L2 sent;
the fake kernels check what the op checks; the tile sweep names only parameters that exist;
and t1 runs on the CPU emulator (bench/cuda_emulator/: warp-wide ldmatrix and
mma.sync emulated lane by lane) at odd shapes on both paths, checked element by element
(TMA and wgmma have no emulator). (GPU tier: tests/gpu/test_tensor_core_rungs.py, and every
CUDA matmul test in tests/gpu/test_matmul_cuda.py at fp16 and bf16.)
"""
from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench import problems, profile, registry
from bench.families.matmul.models import MatmulShape, is_tensor_core, tensor_core_order, tma_path
from bindings import config
from tests.support import emulated
from bench.cuda_emulator.emulate import EMULATED_TENSOR_CORE_RUNGS
from tests.support.tile_counts import count_tiles

ROOT = Path(__file__).resolve().parents[2]
RUNGS = [k for k in registry.kernels() if k.backend == "cuda" and is_tensor_core(k.version)]
IDS = [k.name for k in RUNGS]
HOPPER = [k for k in RUNGS if k.min_capability == (9, 0)]      # t2 on: sm_90a only
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")


def test_every_tensor_core_op_is_a_registered_rung():
    # the split_k paths share the rungs' contracts but are paths beside them
    paths = [op for op in (*config.TENSOR_CORE_OPS, *config.TF32_OPS)
             if not op.removeprefix("matmul_").startswith("t")]
    assert paths == ["matmul_split_k", "matmul_split_k_tf32"]
    for op in paths:
        assert registry.get(op.replace("matmul_", "cuda_")).source == f"cuda/{op}.cu"
    assert sorted(Path(k.source).stem for k in RUNGS) == sorted(
        [op for op in (*config.TENSOR_CORE_OPS, *config.TF32_OPS) if op not in paths])
    for k in RUNGS:
        tf32 = Path(k.source).stem in config.TF32_OPS
        assert k.precisions == (("tf32",) if tf32 else ("fp16", "bf16")), k.name
        assert k.min_capability >= (8, 0) and k.needs, k.name
    versions = [k.version for k in registry.select("@tensor_cores")]
    assert versions == sorted(versions, key=tensor_core_order) == [
        "t1", "t2", "t2.1", "t2.2", "t2.3", "t2.4", "t3", "t4", "t5"]


@pytest.mark.parametrize("kernel", RUNGS, ids=IDS)
def test_rung_opens_with_the_ladder_header(kernel):
    text = (ROOT / kernel.source).read_text()
    for field in ("idea", "change", "banks", "traffic", "precond.", "params", "run"):
        assert re.search(rf"^//   {re.escape(field)}\s", text, re.M), f"{kernel.name}: no '{field}'"
    import shlex

    from bench import cli

    run = re.search(r"^//   run\s+python -m bench (.*)$", text, re.M).group(1)
    cli.build_parser().parse_args(shlex.split(run))     # the command the header gives runs
    picks = text + ((ROOT / "cuda" / "hopper.cuh").read_text() if kernel in HOPPER else "")
    assert re.search(r"path_ok\w*\(A, B, C, N, K(, 4)?\)", picks), "the launcher picks the path"
    assert "cudaErrorNotSupported" in picks, "the launcher refuses GPUs without the instructions"
    if kernel.version == "t4":   # off the TMA path v7's FFMA kernel, and it says so
        assert "tma_path_ok(A, B, C, N, K, 4)" in text
        assert "launch_matmul_v7_lean_fetch(A, B, C, M, N, K, stream)" in text
        assert "v7's" in kernel.summary and kernel.max_capability == (9, 0)
        assert re.search(r"^//   rounding\s", text, re.M)
    elif kernel in HOPPER:   # off the TMA path the rung runs t1's kernel, and says so
        assert "launch_tma_rung(" in text
        assert "launch_matmul_t1_mma_sync(A, B, C, M, N, K, type, stream)" in (
            ROOT / "cuda" / "hopper.cuh").read_text()
        assert "t1's" in kernel.summary and kernel.max_capability == (9, 0)


@pytest.mark.same_everywhere
@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("kernel", [k for k in RUNGS if k not in HOPPER],
                         ids=[k.name for k in RUNGS if k not in HOPPER])
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


# The SASS each Hopper rung is about: warpgroup MMAs from shared memory, TMA copies,
# mbarrier waits; t3 adds multicast, TMA stores and register reallocation.
HOPPER_SASS = {
    "t2": ("HGMMA.64x256x16.F32.BF16", "HGMMA.64x256x16.F32 ", "UTMALDG.2D", "SYNCS.PHASECHK"),
    # t2.1 to t2.4 add t3's ideas one at a time (what each must not have yet: HOPPER_NOT_YET)
    "t2.1": ("HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "SYNCS.PHASECHK"),
    "t2.2": ("HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "SYNCS.PHASECHK", "USETMAXREG"),
    "t2.3": ("HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "SYNCS.PHASECHK", "USETMAXREG"),
    "t2.4": ("HGMMA.64x256x16.F32.BF16", "UTMALDG.2D.MULTICAST", "SYNCS.PHASECHK",
             "USETMAXREG"),
    "t3": ("HGMMA.64x256x16.F32.BF16", "UTMALDG.2D.MULTICAST", "UTMASTG", "USETMAXREG",
           "SYNCS.PHASECHK"),
    # t4 adds B^T's fragments (8-byte shared loads, rounded by F2FP.TF32: cvt.rn.tf32.f32)
    # and stores C from registers (8-byte global stores), no TMA store
    "t4": ("HGMMA.64x256x8.F32.TF32", "UTMALDG.2D.MULTICAST", "USETMAXREG", "SYNCS.PHASECHK",
           "LDS.64", "F2FP.TF32.F32.PACK_B", "STG.E.64"),
    # t5 adds the helpers' partials (16-byte stores), the owners' reads of them past L1
    # (ld.global.cg) and the flags (a release store, acquire loads)
    "t5": ("HGMMA.64x256x16.F32.BF16", "UTMALDG.2D.MULTICAST", "UTMASTG", "USETMAXREG",
           "SYNCS.PHASECHK", "STG.E.128", "LDG.E.128.STRONG.GPU", "STG.E.STRONG.GPU",
           "LDG.E.STRONG.GPU"),
}


# What t2.1 to t2.4 must not have yet: the next rungs' ideas (the persistent grid has no
# instruction of its own; tests/gpu/test_tensor_core_rungs.py sees its grid).
HOPPER_NOT_YET = {
    "t2.1": ("USETMAXREG", "UTMALDG.2D.MULTICAST", "UTMASTG"),
    "t2.2": ("UTMALDG.2D.MULTICAST", "UTMASTG"),
    "t2.3": ("UTMALDG.2D.MULTICAST", "UTMASTG"),
    "t2.4": ("UTMASTG",),
}


@pytest.mark.same_everywhere
@needs_nvcc
@pytest.mark.parametrize("kernel", HOPPER, ids=[k.name for k in HOPPER])
def test_hopper_rungs_build_for_sm90a_with_their_instructions(kernel, tmp_path):
    """fp16 and bf16 (t4: tf32) for sm_90a: no spill, no stack frame, and the instructions
    the rung is about in its SASS; no write to a register an in-flight wgmma reads (t4's
    fragments: bench/wgmma_hazards.py); for sm_90 (no 'a') the same file builds, without
    them (the launcher then says what it needs)."""
    from triton import knobs

    from bench import wgmma_hazards

    obj = tmp_path / "k.o"
    out = subprocess.run([NVCC, "-arch=sm_90a", "-O3", "-std=c++17", "-Xptxas=-v", "-c",
                          str(ROOT / kernel.source), "-o", str(obj)],
                         capture_output=True, text=True, cwd=ROOT / "cuda")
    assert out.returncode == 0, out.stderr
    entries = re.findall(r"Compiling entry function '(\w+)'", out.stderr)
    if kernel.precisions == ("tf32",):
        assert len(entries) == 1, entries
    else:
        assert len(entries) == 2 and sum("6__half" in e for e in entries) == 1, entries
    for stores, loads in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads",
                                    out.stderr):
        assert (stores, loads) == ("0", "0"), out.stderr
    assert set(re.findall(r"(\d+) bytes stack frame", out.stderr)) == {"0"}, out.stderr
    assert "C7515" not in out.stderr, "ptxas serialised the wgmma"
    sass = subprocess.run([knobs.nvidia.cuobjdump.path, "-sass", str(obj)],
                          capture_output=True, text=True, check=True).stdout
    for instruction in HOPPER_SASS[kernel.version]:
        assert instruction in sass, instruction
    for instruction in HOPPER_NOT_YET.get(kernel.version, ()):
        assert instruction not in sass, instruction
    assert wgmma_hazards.hazards(sass) == []
    plain = subprocess.run([NVCC, "-arch=sm_90", "-O3", "-std=c++17", "-c",
                            str(ROOT / kernel.source), "-o", str(tmp_path / "plain.o")],
                           capture_output=True, text=True, cwd=ROOT / "cuda")
    assert plain.returncode == 0, plain.stderr
    sass = subprocess.run([knobs.nvidia.cuobjdump.path, "-sass", str(tmp_path / "plain.o")],
                          capture_output=True, text=True, check=True).stdout
    assert "HGMMA" not in sass and "UTMALDG" not in sass


# --------------------------------------------------------------------------- the model

def _count_pieces(s: MatmulShape, p) -> tuple[int, int, int]:
    """(global elements, shared elements, multiply-adds) counted as t1 issues them: the
    values of A and B inside the matrices (16-byte pieces outside are zero stores); per 16 k
    each warp's ldmatrix.x4: WM/16 of A and WN/16 of B, 256 values each."""
    warps = (p["BM"] // p["WM"]) * (p["BN"] // p["WN"])
    per_k_tile = p["BK"] // 16 * warps * (p["WM"] // 16 + p["WN"] // 16) * 256
    return count_tiles(s.M, s.N, s.K, p["BM"], p["BN"], p["BK"], per_k_tile)


def _count_boxes(s: MatmulShape, p) -> tuple[int, int, int]:
    """(elements the blocks receive, shared loads, multiply-adds) counted box by box as t2
    and t3 copy them: per block tile (BM rows of `rows_per_tile`, BN columns) and 64-deep k
    tile, A's BM x 64 box and BN/64 boxes of B of 64 x 64, each delivering the values that
    lie inside the matrix (TMA fills the rest with zeros without reading it); t3's clusters
    cover C*BM rows, every block computing. No thread loads shared memory."""
    cluster = p.get("CLUSTER", 1)
    loads = fma = 0
    for cm in range(-(-s.M // (cluster * p["BM"]))):
        for r in range(cluster):
            m0 = (cm * cluster + r) * p["BM"]
            rows = max(0, min(p["BM"], s.M - m0))
            for n0 in range(0, s.N, p["BN"]):
                for k0 in range(0, s.K, 64):
                    depth = min(64, s.K - k0)
                    loads += rows * depth
                    for b0 in range(n0, n0 + p["BN"], 64):
                        loads += depth * max(0, min(64, s.N - b0))
                    fma += p["BM"] * p["BN"] * 64
    return loads, 0, fma


def _count_t4_boxes(s: MatmulShape, p) -> tuple[int, int, int]:
    """(elements the blocks receive, shared loads, multiply-adds) counted box by box as t4
    copies them: clusters of C blocks along n; per block tile and 32-deep k tile, the whole
    BM x 32 A tile of its rows (half from each block of the cluster, multicast to both) and
    BN/32 boxes of B of 32 x 32, each delivering the values inside the matrix; every block
    computes, also one wholly right of N, and its threads load every B value of each stage
    (zero fill included) once."""
    cluster, BM, BN, BK = p["CLUSTER"], p["BM"], p["BN"], p["BK"]
    loads = shared = fma = 0
    for m0 in range(0, s.M, BM):
        rows = min(BM, s.M - m0)
        for cn in range(-(-s.N // (cluster * BN))):
            for r in range(cluster):
                n0 = (cn * cluster + r) * BN
                for k0 in range(0, s.K, BK):
                    depth = min(BK, s.K - k0)
                    loads += rows * depth
                    for b0 in range(n0, n0 + BN, 32):
                        loads += depth * max(0, min(32, s.N - b0))
                    shared += BN * BK
                    fma += BM * BN * BK
    return loads, shared, fma


@pytest.mark.parametrize("shape", [(1, 4, 4), (17, 13, 7), (127, 129, 31), (136, 264, 40),
                                   (1, 300, 8), (300, 4, 36), (5, 8, 0), (257, 520, 96),
                                   (520, 1028, 36), (1, 8, 8)])
def test_t4_model_equals_a_box_count(shape):
    from bench.families.matmul.models import t4_l2_reads, tf32_tma_path

    kernel = registry.get("cuda_t4_tf32")
    s = MatmulShape(*shape)
    t, p = kernel.traffic(s, "tf32"), kernel.params("tf32")
    if tf32_tma_path(s):
        assert (t.global_loads, t.shared_loads, t.fma) == _count_t4_boxes(s, p)
        assert t.tma and t.tensor_pipe and t.mma_macs == 64 * 256 * 8 // 4
        assert t4_l2_reads(s, p) * p["CLUSTER"] >= t.global_loads >= t4_l2_reads(s, p)
    else:   # v7's kernel and v7's model
        v7 = registry.get("cuda_v7_lean_fetch")
        assert t == v7.traffic(s, "fp32") and not t.tensor_pipe
    assert t.global_stores == s.M * s.N and t.elem_bytes == 4


@pytest.mark.parametrize("kernel", [k for k in RUNGS if k.version != "t4"],
                         ids=[k.name for k in RUNGS if k.version != "t4"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (17, 13, 7), (127, 129, 31), (136, 264, 40),
                                   (1, 300, 8), (300, 1, 9), (5, 7, 0), (257, 520, 96),
                                   (100, 264, 40), (1, 8, 8)])
def test_model_equals_a_piece_count(kernel, shape):
    s = MatmulShape(*shape)
    t = kernel.traffic(s, "bf16")
    p = kernel.params("bf16")
    if kernel in HOPPER and tma_path(s):
        assert (t.global_loads, t.shared_loads, t.fma) == _count_boxes(s, p)
        assert t.tma and t.copy_width == 0.0 and t.mma_macs == 64 * p["BN"] * 16 // 4
    else:   # t1, and t2 and t3 off their TMA path: t1's kernel with t1's tiles
        t1 = {k.removeprefix("T1_"): v for k, v in p.items() if k.startswith("T1_")} or p
        assert (t.global_loads, t.shared_loads, t.fma) == _count_pieces(s, t1)
        # 16-byte path: a cp.async moves 8 values; scalar path: plain 2-byte loads
        assert t.copy_width == (8.0 if s.K % 8 == 0 and s.N % 8 == 0 else 0.0)
        assert not t.tma and t.mma_macs == 2048
    assert t.global_stores == s.M * s.N and t.elem_bytes == 2


@pytest.mark.parametrize("kernel", RUNGS, ids=IDS)
@pytest.mark.parametrize("n", [256, 1024, 4096])
def test_lecture_style_formulas_at_tile_multiples(kernel, n):
    """global N^3/BN + N^3/BM; shared (ldmatrix) N^3/WN + N^3/WM for t1, none by threads for
    t2 and t3, B^T's fragments N^3/BM for t4; multiply-adds N^3; t3's L2 reads N^3/BN +
    N^3/(CLUSTER BM), t4's N^3/(CLUSTER BN) + N^3/BM."""
    from bench.families.matmul.models import t3_l2_reads, t4_l2_reads

    precision = kernel.precisions[0]
    p = kernel.params(precision)
    s = MatmulShape(n, n, n)
    t = kernel.traffic(s, precision)
    assert t.global_loads == n**3 // p["BN"] + n**3 // p["BM"]
    if kernel.version == "t4":
        assert t.shared_loads == n**3 // p["BM"]
        assert t4_l2_reads(s, p) == n**3 // (p["CLUSTER"] * p["BN"]) + n**3 // p["BM"]
    else:
        assert t.shared_loads == (0 if kernel in HOPPER else n**3 // p["WN"] + n**3 // p["WM"])
    assert t.fma == n**3
    if kernel.version in ("t3", "t5"):
        assert t3_l2_reads(s, p) == n**3 // p["BN"] + n**3 // (p["CLUSTER"] * p["BM"])


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


T2_T3 = [k for k in HOPPER if k.version in ("t2", "t3", "t5")]   # t5 at 4096^3: t3's loop


@pytest.mark.parametrize("kernel", T2_T3, ids=[k.name for k in T2_T3])
def test_counter_target_of_the_tma_rungs(kernel):
    """What Nsight Compute counted on the H100 at 4096^3 bf16, for t2 and t3 alike:
    1,048,576 tensor-pipe warp instructions (262,144 wgmma m64n256k16, four warps each:
    65,536 multiply-adds per count) and 1.61 GB sent from L2 to the SMs
    (l1tex__m_xbar2l1tex_read_bytes; t3's multicast reaches both blocks of a cluster), no
    thread load. The loads are the bytes; half the instructions or a third more bytes
    fail."""
    model = kernel.traffic(MatmulShape(4096, 4096, 4096), "bf16")
    assert model.global_load_bytes == 1_610_612_736
    short = dict(ld_thread_inst=0.0, ld_warp_inst=0.0, ldgsts_warp_inst=0.0, ldgsts_bytes=0.0,
                 xbar2l1tex_read_bytes=1.61e9, hmma_warp_inst=1048576.0, ffma=0.0)
    counters = {full: short[name] for full, name in profile.METRICS if name in short}
    lv = profile.levels(counters, 2, model.load_width, model.copy_width, model.tma,
                        model.mma_macs)
    assert lv["mma_fma"] == model.fma == 4096**3
    out = profile.compare(kernel, problems.get("matmul"), lv, model)
    assert out["target"] == "PASS" and out["ratio_mma"] == 1.0
    assert abs(out["ratio_issued"] - 1) < 0.001
    lv["mma_fma"] /= 2
    assert problems.get("matmul").profile_target(kernel, lv, model) == "FAIL"
    lv["mma_fma"] *= 2
    lv["issued_elements"] *= 4 / 3
    assert problems.get("matmul").profile_target(kernel, lv, model) == "FAIL"


def test_counter_target_of_t4():
    """At 4096^3 tf32 the model asks for 2,097,152 tensor-pipe warp instructions (262,144
    wgmma m64n256k8 per ... four warps each: 32,768 multiply-adds per count) and 3.22 GB
    delivered by L2 (A twice per cluster: each block receives all of it), B^T's fragments
    from shared memory (every B value once per row of tiles: 268 M values, 1.07 GB); no FFMA
    counts toward the target. Half the instructions fail."""
    kernel = registry.get("cuda_t4_tf32")
    model = kernel.traffic(MatmulShape(4096, 4096, 4096), "tf32")
    assert model.global_load_bytes == 3_221_225_472 and model.shared_load_bytes == 1_073_741_824
    short = dict(ld_thread_inst=0.0, ld_warp_inst=0.0, ldgsts_warp_inst=0.0, ldgsts_bytes=0.0,
                 xbar2l1tex_read_bytes=3.2212e9, hmma_warp_inst=2097152.0, ffma=0.0,
                 shared_ld_bytes=1_073_741_824.0)
    counters = {full: short[name] for full, name in profile.METRICS if name in short}
    lv = profile.levels(counters, 4, model.load_width, model.copy_width, model.tma,
                        model.mma_macs)
    assert lv["mma_fma"] == model.fma == 4096**3
    out = profile.compare(kernel, problems.get("matmul"), lv, model)
    assert out["target"] == "PASS" and out["ratio_mma"] == 1.0 and out["ratio_shared"] == 1.0
    lv["mma_fma"] /= 2
    assert problems.get("matmul").profile_target(kernel, lv, model) == "FAIL"


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


def test_tf32_fakes_check_what_the_op_checks(fake_cuda):
    """float32 like the ladder, whose fake it shares; no grid limit on the TMA path (a
    persistent grid) nor off it (K or N not a multiple of 4: v7's grid, whose rows of blocks
    fold into grid y and z past 65535)."""
    import torch

    from bindings import _fake as fk

    for op in config.TF32_OPS:
        fake = fk._matmul_fake(op)
        out = fake(fake_cuda(5, 8), fake_cuda(8, 4))
        assert out.shape == (5, 4) and out.dtype == torch.float32
        with pytest.raises(Exception, match=f"{op}: A and B must be float32, got torch.float16"):
            fake(fake_cuda(5, 8).half(), fake_cuda(8, 4).half())
        with pytest.raises(Exception, match=f"{op}: inner dimensions must agree"):
            fake(fake_cuda(5, 8), fake_cuda(7, 4))
        tall = 65536 * 128 + 1                     # v7: 65537 rows of 128 rows of C
        assert fake(fake_cuda(tall, 8), fake_cuda(8, 4)).shape == (tall, 4)   # TMA path
        assert fake(fake_cuda(tall, 8), fake_cuda(8, 3)).shape == (tall, 3)   # v7


# --------------------------------------------------------------------------- the sweep

def test_sweep_names_only_parameters_that_exist():
    text = (ROOT / "cuda" / "driver" / "tensor_core_sweep.sh").read_text()
    names = set(re.findall(r"-DCVT_(\w+)=", text))
    assert names and names <= set(config.params()), names - set(config.params())
    for rung in re.findall(r'"(\w+)\|', text):
        assert f"matmul_{rung}" in (*config.TENSOR_CORE_OPS, *config.TF32_OPS), rung
    assert subprocess.run(["bash", "-n", str(ROOT / "cuda" / "driver" / "tensor_core_sweep.sh")]
                          ).returncode == 0


@pytest.mark.same_everywhere
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
    assert out.count(" ok") == 2 * len(EMULATED_TENSOR_CORE_RUNGS) * len(EMULATED_SHAPES), out
    assert set(EMULATED_TENSOR_CORE_RUNGS) <= {op.removeprefix("matmul_")
                                               for op in config.TENSOR_CORE_OPS}


# --------------------------------------------------------------------------- t5's schedule

def _t5_work(cluster: int, clusters: int, k_tiles: int, schedule) -> list[tuple[int, int, int]]:
    """for_each_work of cuda/matmul_t5_stream_k.cu: (tile, first k tile, end k tile), in order."""
    whole, split, run = schedule
    work = [(u, 0, k_tiles) for u in range(cluster, whole, clusters)]
    i, end = cluster * run, min(cluster * run + run, split)
    while i < end:
        kb = i % k_tiles
        ke = k_tiles if k_tiles - kb < end - i else kb + (end - i)
        work.append((whole + i // k_tiles, kb, ke))
        i += ke - kb
    return work


T5_SCHEDULES = [(tiles, clusters, k_tiles) for clusters in (1, 2, 17, 60, 66)
                for tiles in (1, 2, 16, 34, 65, 66, 67, 256, 1024, 1057)
                for k_tiles in (1, 2, 3, 8, 9, 16, 17, 64, 128, 1024)]


@needs_nvcc
def test_t5_schedule_of_the_launcher_is_the_models(tmp_path):
    """stream_k_schedule (compiled from the kernel's file, run on the host) and
    models.t5_schedule agree on every case; at the H100's 66 clusters 8192^3 splits its last
    34 tiles in runs of 66 k tiles, 4096^3 and 1024^3 split nothing (too little to gain for
    the hand-over), 264x264x4104 (the sanitizers' shape) splits its 4 tiles in runs of 17."""
    from bench.families.matmul.models import t5_schedule

    main = tmp_path / "main.cu"
    main.write_text('#include "matmul_t5_stream_k.cu"\n#include <cstdio>\n#include <cstdlib>\n'
                    "int main(int argc, char** argv) {\n"
                    "  for (int i = 1; i + 2 < argc; i += 3) {\n"
                    "    const auto s = cvt::stream_k_schedule(atoll(argv[i]), atoll(argv[i + 1]),"
                    " atoll(argv[i + 2]));\n"
                    '    printf("%lld %lld %lld\\n", (long long)s.whole, (long long)s.split_k_tiles,'
                    " (long long)s.run);\n  }\n}\n")
    exe = tmp_path / "schedule"
    out = subprocess.run([NVCC, "-arch=sm_90a", "-O1", "-std=c++17", f"-I{ROOT / 'cuda'}",
                          str(main), str(ROOT / "cuda" / "matmul_t1_mma_sync.cu"), "-o", str(exe)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    cases = T5_SCHEDULES + [(1024, 66, 128), (256, 66, 64), (16, 66, 16), (4, 66, 65)]
    args = [str(v) for case in cases for v in case]
    got = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True).stdout
    p = registry.get("cuda_t5_stream_k").params("bf16")
    want = [t5_schedule(*case, p) for case in cases]
    assert [tuple(map(int, line.split())) for line in got.splitlines()] == want
    assert want[-4:] == [(990, 4352, 66), (198, 3712, 64), (0, 256, 16), (0, 260, 17)]


@pytest.mark.parametrize("clusters", [1, 2, 17, 60, 66])
def test_t5_schedule_covers_every_k_tile_once_and_no_one_waits_on_a_waiter(clusters):
    """Walked as the kernel walks it: every k tile of every tile is multiplied by exactly one
    cluster; a cluster has at most one helper part (a part starting inside a tile), the
    first of its run (after its whole tiles), and helpers never wait; an owner of a split
    tile (its part starts at k tile 0 and ends early) finds the rest as the helper parts of
    clusters cluster + 1, + 2, ..., each starting where its count (done += min(run, k_tiles
    - done)) says; no tile has more than MAX_SPLIT + 1 parts."""
    from bench.families.matmul.models import t5_schedule

    p = registry.get("cuda_t5_stream_k").params("bf16")
    for tiles, _, k_tiles in [c for c in T5_SCHEDULES if c[1] == clusters]:
        schedule = t5_schedule(tiles, clusters, k_tiles, p)
        _, _, run = schedule
        works = [_t5_work(c, clusters, k_tiles, schedule) for c in range(clusters)]
        covered: dict[int, list[tuple[int, int]]] = {}
        for c, work in enumerate(works):
            for i, (u, kb, ke) in enumerate(work):
                assert 0 <= kb < ke <= k_tiles
                covered.setdefault(u, []).append((kb, ke))
                if kb > 0:
                    assert i == len(work) - 1 or work[i + 1][1] == 0
                    assert i == [j for j, w in enumerate(work) if w[1] > 0][0]
                    assert all(w[1] == 0 for w in work[:i])
        assert sorted(covered) == list(range(tiles)), (tiles, k_tiles)
        for u, parts in covered.items():
            parts.sort()
            assert parts[0][0] == 0 and parts[-1][1] == k_tiles
            assert all(a[1] == b[0] for a, b in zip(parts, parts[1:])), (u, parts)
            assert len(parts) <= p["MAX_SPLIT"] + 1
        for c, work in enumerate(works):
            for u, kb, ke in work:
                if kb == 0 and ke < k_tiles:   # the owner's loop over its helpers
                    helper, done = c + 1, ke
                    while done < k_tiles:
                        first = next((w for w in works[helper] if w[1] > 0), None)
                        assert first is not None and first[0] == u and first[1] == done
                        done += min(run, k_tiles - done)
                        assert first[2] == done
                        helper += 1
