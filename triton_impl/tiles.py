"""Tile parameters of every Triton matmul, and the launch parameters of the memory-bound
twins, in one place that does not import Triton.

Why a separate module: a @triton.jit kernel is compiled for the GPU or for the interpreter
depending on TRITON_INTERPRET *when it is defined*, so importing a kernel module too early
(say, while the registry lists kernels) would fix that choice before bench.device.setup()
makes it. The registry and the traffic models read tiles from here instead.

The twins' numbers are never written here: they are read from cuda/matmul_config.h and
cuda/memory_config.h (through bindings/config.py, their one reader), so a retuned CUDA
kernel moves its twin with it. What is Triton's own (the tiles of the matmuls of Triton's
tutorial and of the notebook "Meet Triton", the online softmax's chunks) is written here,
with where it comes from.
"""
from __future__ import annotations

MIN_DOT_K = 16  # tl.dot's smallest K on NVIDIA GPUs (triton/backends/nvidia: min_dot_size)


def _header() -> dict[str, int]:
    from bindings import config

    return config.params()


def _warps(threads: int) -> int:
    """The CUDA block's warps: num_warps = threads / 32 (at least 1)."""
    return max(1, threads // 32)


def v1_naive() -> dict[str, int]:
    """A program is the CUDA block of BLOCK x BLOCK threads."""
    block = _header()["V1_BLOCK"]
    return {"BLOCK": block, "num_warps": _warps(block * block)}


def v1_5_thread_tiling() -> dict[str, int]:
    """A program is the CUDA block of T x T threads, each computing V x V."""
    h = _header()
    return {"V": h["V1_5_V"], "T": h["V1_5_T"], "num_warps": _warps(h["V1_5_T"] ** 2)}


def v2_register_tiling() -> dict[str, int]:
    """A program is the CUDA block of T x T threads; its tile is (T*V) x (T*V)."""
    h = _header()
    return {"V": h["V2_V"], "T": h["V2_T"], "num_warps": _warps(h["V2_T"] ** 2)}


def v3_smem_tiling() -> dict[str, int]:
    """A program is the CUDA block of (L/V)^2 threads; its k step S is raised to tl.dot's
    minimum (S_cuda keeps the CUDA value; see the kernel's header)."""
    h = _header()
    L, S, V = h["V3_L"], h["V3_S"], h["V3_V"]
    return {"L": L, "S": max(S, MIN_DOT_K), "V": V, "S_cuda": S,
            "num_warps": _warps((L // V) ** 2)}


# ---------------------------------------------------------------------------------------
# The memory-bound twins (triton_impl/vector_add.py, ...): a program is the CUDA block of
# cuda/memory_config.h, num_warps its threads / 32.
# ---------------------------------------------------------------------------------------

def _memory_header() -> dict[str, int]:
    from bindings import config

    return config.memory_params()


def vector_add() -> dict[str, int]:
    """A program is the CUDA block of THREADS threads, each with VECTORS_PER_THREAD 16-byte
    vectors of each input (VECTORS_PER_THREAD_SMALL when that would leave SMs without a
    program)."""
    h = _memory_header()
    return {"THREADS": h["ADD_THREADS"], "VECTORS_PER_THREAD": h["ADD_UNROLL"],
            "VECTORS_PER_THREAD_SMALL": h["ADD_UNROLL_SMALL"],
            "num_warps": _warps(h["ADD_THREADS"])}


def copy() -> dict[str, int]:
    """A program is the CUDA block of THREADS threads, each with VECTORS_PER_THREAD vectors."""
    h = _memory_header()
    return {"THREADS": h["COPY_THREADS"], "VECTORS_PER_THREAD": h["COPY_UNROLL"],
            "num_warps": _warps(h["COPY_THREADS"])}


def relu_dropout() -> dict[str, int]:
    """A program is the CUDA block: BLOCK = threads x groups per thread x 4 elements per group
    (the 4 words of one Philox call)."""
    h = _memory_header()
    return {"BLOCK": h["DROP_THREADS"] * h["DROP_UNROLL"] * 4,
            "num_warps": _warps(h["DROP_THREADS"])}


def rgb_to_grey() -> dict[str, int]:
    """A program is the CUDA block: BLOCK_H rows x BLOCK_W = threads along a row x pixels each."""
    h = _memory_header()
    return {"BLOCK_H": h["GREY_BY"], "BLOCK_W": h["GREY_BX"] * h["GREY_PX"],
            "num_warps": _warps(h["GREY_BX"] * h["GREY_BY"])}


def softmax() -> dict[str, int]:
    """What the Triton softmax shares with its CUDA twins: the longest row of the SRAM version
    (SRAM_MAX_N), the rule for neighbour columns per program (COLUMNS_FIRST, at most COLUMNS,
    doubled while the grid keeps BLOCKS_PER_SM programs per SM: memory_common.cuh's
    column_tile), and the online column kernel's chunk: COLUMN_CHUNK elements, the CUDA
    block's threads x elements each in flight, on COLUMN_WARPS warps."""
    h = _memory_header()
    return {"SRAM_MAX_N": h["SOFTMAX_SRAM_MAX_N"], "COLUMNS_FIRST": h["SOFTMAX_COLUMNS_FIRST"],
            "COLUMNS": h["SOFTMAX_COLUMNS_MAX"], "BLOCKS_PER_SM": h["SOFTMAX_BLOCKS_PER_SM"],
            "COLUMN_CHUNK": h["ONLINE_COL_THREADS"] * h["ONLINE_COL_UNROLL"],
            "COLUMN_WARPS": _warps(h["ONLINE_COL_THREADS"])}


# matmul_grouped: default tiles per precision (not tuned; matmul_autotuned is). 4-byte
# operands take half the k-depth of 2-byte ones, so a pipeline stage holds as many bytes.
GROUPED = {
    "fp32": dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=16, GROUP_M=8, num_warps=8, num_stages=3),
    "tf32": dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=8, num_stages=3),
    "fp16": dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3),
    "bf16": dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3),
}

# matmul_bugs (the deliberately wrong matmuls): one small tile for every precision.
MATMUL_BUGS = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, num_warps=4)

# matmul_batched: tf32, fp16 and bf16 are autotuned over AUTOTUNE_CONFIGS (below; 0.91-1.02x
# cuBLAS in 16-bit, 0.58-0.68x in tf32, where the 64 x 64 tiles of the notebook "Meet Triton"
# ran 0.43-0.54x and 0.14-0.18x: docs/performance/fast_matmul.md); fp32 (FFMA), not measured
# autotuned, keeps the notebook's 64 x 64 tiles.
BATCHED_AUTOTUNED = ("tf32", "fp16", "bf16")
BATCHED = {
    "fp32": dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3),
}


def _cfg(bm, bn, bk, warps, stages, group=8, b_regs=False):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, B_FROM_REGISTERS=b_regs,
                num_warps=warps, num_stages=stages)


# matmul_autotuned: the candidates per precision; the first is what problems too small to
# tune run. Shared memory per candidate = stages * (BM + BN) * BK * bytes, all <= 227 KB.
# Chosen from the H100 probe of 2026-11-22 at 4096^3 (docs/performance/fast_matmul.md,
# "The probe: every variant against cuBLAS"):
#  fp32 (ieee) runs tl.dot as FFMA from shared memory; its result layout gives a thread
#    BM*BN/(4*threads) rows of 4 contiguous columns. The best six measured: 64x128x32 w4
#    (0.86x cuBLAS) down to 128x128x32 w8 (0.83x); 16-deep k steps and 128-accumulator
#    tiles (which spill) were slower.
#  tf32: 4-byte operands, so half the k-depth of the 16-bit tiles for the same bytes per
#    stage, and both operand orders (B_FROM_REGISTERS: see matmul_autotuned's header).
#    The fast tf32 is triton_persistent's; these stay for the tutorial's story.
#  fp16/bf16: the usual Hopper wgmma tiles: 64-deep k, 3-4 stages, 8 warps = 2 warpgroups;
#    128x256x64 w8 s3 measured 0.95x cuBLAS in fp16.
AUTOTUNE_CONFIGS = {
    "fp32": [
        _cfg(64, 128, 32, 4, 3),
        _cfg(64, 128, 32, 4, 4),
        _cfg(32, 128, 32, 4, 3),
        _cfg(32, 256, 32, 4, 3),
        _cfg(64, 256, 32, 8, 4),
        _cfg(128, 128, 32, 8, 3),
    ],
    "tf32": [
        _cfg(128, 128, 32, 8, 4),                 # first: the plain order, for small problems
        _cfg(128, 128, 32, 8, 4, b_regs=True),
        _cfg(128, 256, 32, 8, 3, b_regs=True),
        _cfg(256, 128, 32, 8, 3, b_regs=True),
        _cfg(128, 128, 32, 4, 4, b_regs=True),
        _cfg(128, 256, 32, 8, 3),
    ],
    "fp16": [
        _cfg(128, 256, 64, 8, 3),
        _cfg(128, 256, 64, 8, 4),
        _cfg(256, 128, 64, 8, 3),
        _cfg(256, 128, 64, 8, 4),
        _cfg(128, 256, 64, 8, 3, group=16),
        _cfg(128, 128, 64, 8, 4),
    ],
}
AUTOTUNE_CONFIGS["bf16"] = AUTOTUNE_CONFIGS["fp16"]

# Under the interpreter nothing is timed: one small configuration per precision.
INTERPRETER_CONFIG = {p: _cfg(32, 32, 16, 4, 1, group=2, b_regs=(p == "tf32"))
                      for p in ("fp32", "tf32", "fp16", "bf16")}


# The online softmax's long rows, by element size: (elements per chunk, warps per row
# program). Measured on the H100 at 4096 x 32768 (docs/performance/memory_bound.md,
# "Online softmax in Triton: L2 eviction hints"): float32 99.7% of the copy bandwidth with
# 16384 x 16 warps (one program per SM: 123 registers per thread), float16 91% with
# 4096 x 16; the first choice, 8192 x 16 for both, gave 75% and 86% without L2 hints. A row
# of at most one chunk is read once (bench/families/memory/models.py).
SOFTMAX_ONLINE = {4: (16384, 16), 2: (4096, 16)}

# The split softmax's segments (triton_impl/softmax_split.py), by element size:
# (elements per program, warps). 32 elements per thread (64 took 128-146 registers). Measured
# on the H100 with the kept exps (results/sweeps/h100/softmax_split_sync/debts_table.txt, % of
# the copy bandwidth): 4096 x 4 warps against 8192 x 8 and 16384 x 16: float32 93.5 / 92.3 /
# 89.0 at 4096 x 32768 and 89.7 / 81.6 / 60.7 at 4096 x 393216; 16-bit 84.4 / 81.7 / 76.5
# at 32768, 77.2 / 78.4 / 76.3 at 393216 (the one place 8192 x 8 is ahead, by 1.2 points).
# Small programs let more of them share an SM (ptxas, sm_90, 393216: float32 62 registers,
# 8 per SM, 128 KiB of segments; 16-bit 56, 9 per SM, 72 KiB), so while one program
# exchanges its pair the others' loads are in flight. The third entry caps the one-launch
# kernel's registers (None: ptxas decides): float32 at 56 holds 9 programs per SM, 144 KiB
# of segments, for one spilled register (one STL and one LDL a row): 90.2 -> 91.1% of copy
# at 4096 x 393216, 93.5 -> 93.3% at 32768 (results/sweeps/h100/batched_tma_split_regs);
# unpacked 16-bit rows (odd lengths; the others run SOFTMAX_SPLIT_PACKED) keep their 56.
SOFTMAX_SPLIT = {4: (4096, 4, 56), 2: (4096, 4, None)}

# The split's packed path (the default for 16-bit rows of 16-byte multiples: int32 pairs,
# softmax_row_split_pairs_kernel): (elements per program, warps, register cap). 64 elements
# per thread in 64 registers (ptxas, sm_90, no spill; uncapped it takes 96, scheduling all of
# a segment's exps at once), so 8 programs of 16 KiB per SM where unpacked 16-bit rows had 9
# of 8 KiB (float32 rows: 8 of 16 KiB). H100, 4096 x 393216: 88% of copy against 77%
# unpacked (results/sweeps/h100/softmax_packed). Also measured (batched_tma_split_regs):
# 56 registers (9 programs per SM) 85.2-85.8% at 393216; 16384 x 8 warps 88.0-88.9% at
# 393216 but 84.2% at 32768 (8192 x 4: 86.0-86.7%).
SOFTMAX_SPLIT_PACKED = {2: (8192, 4, 64)}

# The split's shared-memory segments (softmax_split_smem.py, Gluon + TMA; rows of multiples of
# 64 on Hopper): (segment bytes, buffers, warps, the shortest row that takes it by default).
# 64 KiB on 8 warps, one buffer: three programs per SM, 192 KiB of rows in flight. H100
# (results/sweeps/h100/softmax_smem), % of copy, shared memory against registers: 4096 x
# 393216 fp32 / fp16 / bf16 95.4 / 94.2 / 93.3 against 90.9 / 88.1 / 87.4. 16-bit rows gain
# from 65536 on (90 against 89; at 16384 registers lead, 82 to 81), float32 rows from 262144
# on (94 against 90; at 65536 registers lead, 95 to 93; at 131072 they tie). Segments of 48,
# 96 and 112 KiB, and two buffers of 48 or 96 KiB, measured beside it: none better.
SOFTMAX_SPLIT_SMEM = {4: (65536, 1, 8, 262144), 2: (65536, 1, 8, 65536)}


# matmul_split_k: the tile per case and precision, the winners of
# `docs/performance/shapes_probe.py --sweep` on the H200 (2026-11-28; GB/s on the compulsory
# bytes, x torch.matmul at the same shape): skinny (M or N <= 16) takes 16 rows (tl.dot's
# smallest) and aims at 2 programs per SM (bf16 3 x 8192 x 8192 2.3 TB/s, 1 x 128256 x 4096
# 4.2 TB/s; fp32 16 x 8192 x 8192 2.9 TB/s); few_tiles: 64-row tiles (fp32, fp16, bf16) or
# 32-row tiles at 4 programs per SM (tf32: 1.6-1.9x torch's FFMA at 128-512 rows).
def _split(bm, bn, bk, warps, stages, programs_per_sm):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages,
                programs_per_sm=programs_per_sm)


SPLIT_K = {
    "skinny": {
        "fp32": _split(16, 64, 64, 4, 4, 2),
        "tf32": _split(16, 64, 64, 4, 4, 2),
        "fp16": _split(16, 64, 128, 4, 4, 2),
        "bf16": _split(16, 64, 128, 4, 4, 2),
    },
    "few_tiles": {
        "fp32": _split(64, 64, 32, 4, 4, 2),
        "tf32": _split(32, 64, 32, 4, 4, 4),
        "fp16": _split(64, 128, 64, 4, 4, 2),
        "bf16": _split(64, 128, 64, 4, 4, 2),
    },
}
SPLIT_K_INTERPRETER = _split(16, 16, 16, 4, 1, 2)
SPLIT_K_SKINNY = 16    # M or N at most this: the skinny case (16 rows: tl.dot's smallest M)


def split_k(precision: str, M: int, N: int, interpreting: bool = False) -> dict[str, int]:
    """matmul_split_k's tile for an M x N output: the skinny tile where M or N <= 16 (the
    kernel runs C^T = B^T A^T where N is the small one), the few-tile tile otherwise."""
    if interpreting:
        return dict(SPLIT_K_INTERPRETER)
    case = "skinny" if min(M, N) <= SPLIT_K_SKINNY else "few_tiles"
    return dict(SPLIT_K[case][precision])


# matmul_skinny (FMAs, no tl.dot; M or N at most SKINNY_MAX_R): per side and per R rounded
# up to a power of two, (BLOCK_K, BLOCK_N, V, warps). A step loads BLOCK_K x BLOCK_N values
# of the big operand and keeps R * BLOCK_K / V * BLOCK_N float32 accumulators per program:
# each lane sums its runs of V values of k as it loads them (V = 4: one 16-byte vector of
# fp32), so V divides the accumulators that pin registers, and registers bound the programs
# per SM and with them the bytes in flight. "rows" (N small: C^T = B^T A^T, A read along k,
# its contiguous side) takes V = 4; "cols" (M small: B read along its rows of N, k strided)
# V = 1. Compiled for sm_90 (ptxas, fp32, 4 warps): rows R = 1 at 64 x 64 took 48
# registers where V = 1 took 72; R = 4 at 64 x 32, 71 against 127.
# The winners of `docs/performance/shapes_probe.py --sweep-skinny` on the H200 (2026-11-29,
# fp32, GB/s on the compulsory bytes; copy 4253): rows R = 1 256 x 32 (8192 x 1 x 8192 3482,
# 2048 x 1 x 1048576 4175; 64 x 64 gave 1992 and 2932), R = 4 32 x 64 (8192 x 3 x 8192
# 3086), R = 16 64 x 32 (8192 x 16 x 8192 2039; 32 x 32 gave 1463); cols R = 1 64 x 128
# (1 x 128256 x 4096 4353), R = 4 8 x 128 (3 x 8192 x 8192 2021), R = 16 8 x 64 (16 x 8192
# x 8192 1834). R = 2 and 8 were not swept: their neighbours' tiles. triton_auto runs the
# rows side, and the cols side at M = 1 only (matmul_auto.py says why).
SKINNY_MAX_R = 16
SKINNY_PROGRAMS_PER_SM = 4


def _skinny(bk, bn, v, warps=4, stages=1, programs_per_sm=SKINNY_PROGRAMS_PER_SM):
    return dict(BLOCK_K=bk, BLOCK_N=bn, V=v, num_warps=warps, num_stages=stages,
                programs_per_sm=programs_per_sm)


SKINNY_FMA = {
    "rows": {1: _skinny(256, 32, 4), 2: _skinny(128, 32, 4), 4: _skinny(32, 64, 4),
             8: _skinny(64, 32, 4), 16: _skinny(64, 32, 4)},
    "cols": {1: _skinny(64, 128, 1), 2: _skinny(32, 128, 1), 4: _skinny(8, 128, 1),
             8: _skinny(8, 64, 1), 16: _skinny(8, 64, 1)},
}
SKINNY_INTERPRETER = {"rows": _skinny(16, 16, 4, 4, 1, 2), "cols": _skinny(16, 16, 1, 4, 1, 2)}


def skinny(side: str, r: int, interpreting: bool = False) -> dict[str, int]:
    """matmul_skinny's tile for a small side of r rows (1 to SKINNY_MAX_R) on `side`."""
    if interpreting:
        return dict(SKINNY_INTERPRETER[side])
    return dict(SKINNY_FMA[side][1 << max(0, r - 1).bit_length()])
