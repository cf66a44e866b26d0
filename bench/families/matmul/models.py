"""Closed-form traffic models: what a kernel's threads load and store, counted exactly.

Every model is a pure function of the shape and the kernel's tile parameters; none runs
any work. Counts are in ELEMENTS and are *thread-level*: the number of load instructions
the threads issue (a masked-off lane issues nothing), which Nsight Compute reports as
``smsp__sass_thread_inst_executed_op_global_ld.sum`` for scalar loads. A kernel whose load
instruction moves several elements (the FFMA rungs' float4 loads) says how many in
``load_width``: the profile multiplies the instructions it counts by it. Bytes follow from
the element size. See the header of each kernel file for the derivation of its formula.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from math import ceil

from bindings.precision import element_bytes

# The ladder's versions, by their names (the @ladder group, the figures' order and colours):
# the lecture's v1-v3 (v1c: v1 coalesced, v1.5), then the FFMA rungs past it (v4, v5, ...;
# cuda/matmul_v4_vectorized.cu ...), so that a new rung joins the ladder by its record's
# version alone. The tensor-core rungs likewise: t1, t2, t2.1, t2.2, ..., t3, ... (the
# @tensor_cores group; t2.1 to t2.3 add t3's ideas to t2 one at a time).
_LADDER = re.compile(r"v(\d+)(c|\.5)?")
_TENSOR_CORES = re.compile(r"t(\d+)(?:\.(\d))?")


def is_ladder(version: str) -> bool:
    return _LADDER.fullmatch(version or "") is not None


def ladder_order(version: str) -> tuple:
    """Sort key of the ladder's versions: v1, v1c, v1.5, v2, ..., v10 (others after them)."""
    m = _LADDER.fullmatch(version or "")
    return (int(m[1]), ("", "c", ".5").index(m[2] or "")) if m else (1 << 30, 0)


def is_tensor_core(version: str) -> bool:
    return _TENSOR_CORES.fullmatch(version or "") is not None


def tensor_core_order(version: str) -> tuple:
    """Sort key of the tensor-core rungs: t1, t2, t2.1, t2.2, t2.3, t3, ..."""
    m = _TENSOR_CORES.fullmatch(version or "")
    return (int(m[1]), int(m[2] or 0)) if m else (1 << 30, 0)
# Multiply-adds of one warp-level tensor-pipe instruction, as Nsight Compute counts them
# (sm__inst_executed_pipe_tensor_op_hmma): mma.sync.m16n8k16 is one warp's 16 x 8 x 16; a
# warpgroup's wgmma m64nNk16 is issued by its four warps, each counted once: 64 N 16 / 4.
MMA_M16N8K16 = 16 * 8 * 16


def wgmma_macs_per_warp(n: int, k: int = 16) -> int:
    """m64nNk16 (fp16, bf16); tf32's wgmma is m64nNk8 (k = 8)."""
    return 64 * n * k // 4


@dataclass(frozen=True)
class MatmulShape:
    M: int
    N: int
    K: int

    @classmethod
    def parse(cls, text: str) -> "MatmulShape":
        """'1024x1024x512' -> MatmulShape(1024, 1024, 512), i.e. M x N x K."""
        parts = text.lower().split("x")
        if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"matmul shape must be MxNxK with integers >= 0, got {text!r}")
        return cls(*(int(p) for p in parts))

    def __str__(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"


@dataclass(frozen=True)
class Traffic:
    """What a kernel moves at the level its threads see, for one launch.

    global_loads   elements loaded from global memory by threads
    global_stores  elements stored to global memory
    shared_loads   elements loaded from shared memory (0 if it uses none)
    fma            fused multiply-adds executed, padding included
    elem_bytes     bytes per element
    compulsory_read_bytes / compulsory_write_bytes: each input read once, output written once
    useful_flops   2*M*N*K for a matmul: what TFLOP/s is computed from
    load_width     elements one thread-level global load instruction moves (4 for a float4
                   load; 1 for scalar loads)
    copy_width     for a kernel that reads global memory only through cp.async copies
                   (global -> shared, no load instruction): the elements one copy moves, on
                   average over its instruction mix (v6: 1 for each float of A, 4 for each
                   16-byte piece of B). The profile counts the copies as warp instructions x
                   32 lanes x copy_width. 0 for every other kernel (the profile then adds
                   async copies, e.g. Triton's pipelined loads, by their bytes)
    tma            True for a kernel whose threads load nothing from global memory: TMA
                   copies whole boxes into shared memory, so the profile counts its loads by
                   the bytes L2 sends to the SMs (global_loads elements x elem_bytes)
    mma_macs       multiply-adds of one counted tensor-pipe warp instruction (a tensor-core
                   rung's fma / its instructions; MMA_M16N8K16 for mma.sync)
    tensor_pipe    True where the multiply-adds run on the tensor pipe (the tensor-core rungs,
                   but not t4's fall-back to v7's FFMA), so the profile counts them there
    """

    global_loads: int
    global_stores: int
    shared_loads: int
    fma: int
    elem_bytes: int
    compulsory_read_bytes: int
    compulsory_write_bytes: int
    useful_flops: int
    load_width: int = 1
    copy_width: float = 0.0
    tma: bool = False
    mma_macs: int = MMA_M16N8K16
    tensor_pipe: bool = False

    @property
    def global_load_bytes(self) -> int:
        return self.global_loads * self.elem_bytes

    @property
    def global_store_bytes(self) -> int:
        return self.global_stores * self.elem_bytes

    @property
    def shared_load_bytes(self) -> int:
        return self.shared_loads * self.elem_bytes

    @property
    def compulsory_bytes(self) -> int:
        """The DRAM floor: each input read once, the output written once."""
        return self.compulsory_read_bytes + self.compulsory_write_bytes

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(global_load_bytes=self.global_load_bytes,
                 global_store_bytes=self.global_store_bytes,
                 shared_load_bytes=self.shared_load_bytes,
                 compulsory_bytes=self.compulsory_bytes)
        return d


def matmul_traffic(s: MatmulShape, p, loads: int, shared: int, fma: int,
                   load_width: int = 1, copy_width: float = 0.0, tma: bool = False,
                   mma_macs: int = MMA_M16N8K16, tensor_pipe: bool = False) -> Traffic:
    """A matmul's Traffic from its load, shared and FMA counts; stores, compulsory bytes and
    useful flops follow from the shape, bytes from the precision in p."""
    M, N, K = s.M, s.N, s.K
    elem_bytes = element_bytes(p["precision"])
    return Traffic(
        global_loads=loads,
        global_stores=M * N,
        shared_loads=shared,
        fma=fma,
        elem_bytes=elem_bytes,
        compulsory_read_bytes=(M * K + K * N) * elem_bytes,
        compulsory_write_bytes=M * N * elem_bytes,
        useful_flops=2 * M * N * K,
        load_width=load_width,
        copy_width=copy_width,
        tma=tma,
        mma_macs=mma_macs,
        tensor_pipe=tensor_pipe,
    )


def matmul_v1(s: MatmulShape, p) -> Traffic:
    """v1 naive and v1 coalesced: each of the M*N threads loads a row of A and a column of B.
    Lecture: 2N^3."""
    return matmul_traffic(s, p, loads=2 * s.M * s.N * s.K, shared=0, fma=s.M * s.N * s.K)


def matmul_v1_5(s: MatmulShape, p) -> Traffic:
    """v1.5 thread tiling: A once per (valid row, k) per thread, B once per output per k.
    Lecture: N^3/V + N^3."""
    M, N, K, V = s.M, s.N, s.K, p["V"]
    return matmul_traffic(s, p, loads=M * K * ceil(N / V) + M * N * K, shared=0, fma=M * N * K)


def matmul_v2(s: MatmulShape, p) -> Traffic:
    """v2 register tiling: per k, V values of A and V of B per thread (valid ones only).
    Lecture: 2N^3/V."""
    M, N, K, V = s.M, s.N, s.K, p["V"]
    tiles = ceil(M / V) * ceil(N / V)
    return matmul_traffic(s, p, loads=M * K * ceil(N / V) + N * K * ceil(M / V), shared=0,
                   fma=tiles * V * V * K)


def matmul_v3(s: MatmulShape, p) -> Traffic:
    """v3 shared-memory + register tiling. Lecture: global 2N^3/L, shared 2N^3/V."""
    M, N, K, L, S, V = s.M, s.N, s.K, p["L"], p["S"], p["V"]
    blocks = ceil(M / L) * ceil(N / L)
    k_padded = S * ceil(K / S)  # the tail tile is zero-filled and multiplied in full
    threads = (L // V) ** 2
    return matmul_traffic(s, p, loads=M * K * ceil(N / L) + N * K * ceil(M / L),
                   shared=blocks * threads * 2 * V * k_padded,
                   fma=blocks * L * L * k_padded)


def vector_width(s: MatmulShape) -> int:
    """Elements per load on the FFMA rungs at this shape: their launchers take the 128-bit
    path (float4 loads) when K and N are multiples of 4 and the pointers are 16-byte aligned
    (cvt::vector_path_ok), which the harness's fresh tensors are."""
    return 4 if s.K % 4 == 0 and s.N % 4 == 0 else 1


def _tiled(s: MatmulShape, p, BM: int, BN: int, BK: int, per_thread_k: int, threads: int,
           load_width: int, copy_width: float = 0.0) -> Traffic:
    """A BM x BN block tile, BK deep, staged through shared memory: each block column reads
    all of A, each block row all of B (masked elements issue nothing); each of `threads`
    threads per block reads `per_thread_k` shared elements per k over the k range padded to
    a multiple of BK; padded blocks and k multiply zeros."""
    M, N, K = s.M, s.N, s.K
    blocks = ceil(M / BM) * ceil(N / BN)
    k_padded = BK * ceil(K / BK)
    return matmul_traffic(s, p, loads=M * K * ceil(N / BN) + N * K * ceil(M / BM),
                          shared=blocks * threads * per_thread_k * k_padded,
                          fma=blocks * BM * BN * k_padded, load_width=load_width,
                          copy_width=copy_width)


def matmul_v4(s: MatmulShape, p) -> Traffic:
    """v4 vectorized: v3's tiles and counts; float4 loads where the shape allows them.
    Lecture-style: global 2N^3/L, shared 2N^3/V."""
    L, S, V = p["L"], p["S"], p["V"]
    return _tiled(s, p, L, L, S, 2 * V, (L // V) ** 2, vector_width(s))


def matmul_v5(s: MatmulShape, p) -> Traffic:
    """v5 warptiling: BM x BN block tiles, TM x TN per thread. Lecture-style: global
    N^3/BN + N^3/BM, shared N^3/TN + N^3/TM."""
    threads = p["BM"] * p["BN"] // (p["TM"] * p["TN"])
    return _tiled(s, p, p["BM"], p["BN"], p["BK"], p["TM"] + p["TN"], threads, vector_width(s))


def matmul_v6(s: MatmulShape, p) -> Traffic:
    """v6 pipelined: v5's counts; every global read is a cp.async copy (no load
    instruction). Per thread and tile: BM*BK/threads copies of one float of A (cp.async
    cannot transpose) and BK*BN/threads floats of B in copies of W (16 bytes on the 128-bit
    path), so a copy moves (a + b) / (a + b/W) elements on average."""
    threads = p["BM"] * p["BN"] // (p["TM"] * p["TN"])
    a, b, w = p["BM"] * p["BK"] / threads, p["BK"] * p["BN"] / threads, vector_width(s)
    return _tiled(s, p, p["BM"], p["BN"], p["BK"], p["TM"] + p["TN"], threads, 1,
                  copy_width=(a + b) / (a + b / w))


def matmul_v7(s: MatmulShape, p) -> Traffic:
    """v7 lean fetch: v6's counts, element for element. Interior tiles are copied from
    running pointers without masks, edge tiles with v6's masks; both copy exactly the
    elements that lie inside the matrices, in the same copies (one float of A, W of B)."""
    return matmul_v6(s, p)


def matmul_v8(s: MatmulShape, p) -> Traffic:
    """v8 split K: v7's counts, element for element, for any number of splits. The splits of
    a tile copy its k tiles between them, each once; the partial tiles they sum through
    distributed shared memory (S > 1) are not part of the k loop the model counts."""
    return matmul_v7(s, p)


def matmul_split_k_fp32(s: MatmulShape, p) -> Traffic:
    """split_k_fp32, the fp32 path for few tiles: v7's counts, element for element, for any
    number of splits (the splits share out each tile's k tiles, each copied once), on the
    tile the launcher takes: 128 columns wide where N <= NARROW_BN and the k loop splits
    (the H100's 132 SMs; bindings/auto.py), else v7's. Not counted: the float32 partial
    tiles (S*M*N written, read once by the sum, where S > 1)."""
    from bindings import auto

    if s.N <= p["NARROW_BN"] and auto.splits(s.M, s.N, s.K, precision="fp32") > 1:
        p = {**p, "BN": p["NARROW_BN"]}
    return matmul_v7(s, p)


def matmul_t1(s: MatmulShape, p) -> Traffic:
    """t1 mma.sync: the block tile's global counts as v6 (masked pieces issue nothing). On the
    16-byte path (K and N multiples of 8) every global read is a cp.async copy of 8 values;
    on the scalar path a 2-byte load each. Shared loads are ldmatrix's: per 16 values of k
    a warp loads a 16 x 16 tile of A for each 16 rows of its WM and one of B for each 16
    columns of its WN, (WM + WN) values per k; BM*BN/(WM*WN) warps per block. Multiply-adds
    are the padded block tile's."""
    M, N, K, BM, BN, BK = s.M, s.N, s.K, p["BM"], p["BN"], p["BK"]
    blocks = ceil(M / BM) * ceil(N / BN)
    k_padded = BK * ceil(K / BK)
    warps = (BM // p["WM"]) * (BN // p["WN"])
    vec = K % 8 == 0 and N % 8 == 0
    return matmul_traffic(s, p, loads=M * K * ceil(N / BN) + N * K * ceil(M / BM),
                          shared=blocks * warps * (p["WM"] + p["WN"]) * k_padded,
                          fma=blocks * BM * BN * k_padded, copy_width=8.0 if vec else 0.0,
                          tensor_pipe=True)


def _rows_of_16_bytes(s: MatmulShape, per_16: int) -> bool:
    """K >= 1 and K and N multiples of `per_16` values: rows TMA takes as they are (torch's
    allocations are 16-byte aligned)."""
    return s.K >= 1 and s.K % per_16 == 0 and s.N % per_16 == 0


def tma_path(s: MatmulShape) -> bool:
    """Whether t2 and t3 run their own TMA kernel at this shape on unstaged operands (K and
    N multiples of 8, K >= 1) rather than t1's (cuda/matmul_t2*.cu)."""
    return _rows_of_16_bytes(s, 8)


def stage_min_flops_per_byte() -> int:
    """CVT_STAGE_MIN_FLOPS_PER_BYTE (cuda/matmul_config.h): the TMA rungs stage unaligned
    operands into padded buffers at or above this many FLOPs per compulsory byte."""
    from bindings import config

    return config.params()["STAGE_MIN_FLOPS_PER_BYTE"]


def tma_shape(s: MatmulShape, per_16: int, elem_bytes: int) -> MatmulShape | None:
    """The shape a TMA rung's own kernel runs at (bindings/matmul_ops.cpp, "Staging for the
    TMA rungs"): `s` itself where K and N are multiples of `per_16` values (torch's
    allocations are 16-byte aligned); K and N rounded up to them where the op stages the
    operands (2MNK >= the threshold x compulsory bytes); None where it runs the fall-back.
    The staging copies themselves (each operand read and written once more, through
    PyTorch's copy kernel) are not in the thread counts."""
    if _rows_of_16_bytes(s, per_16):
        return s
    if min(s.M, s.N, s.K) == 0:
        return None
    bytes_ = (s.M * s.K + s.K * s.N + s.M * s.N) * elem_bytes
    if 2 * s.M * s.N * s.K < stage_min_flops_per_byte() * bytes_:
        return None
    pad = lambda x: -(-x // per_16) * per_16
    return MatmulShape(s.M, pad(s.N), pad(s.K))


def _t1_fallback(s: MatmulShape, p) -> Traffic:
    """t1's counts with t1's tiles, which t2 and t3 pass their record's T1_* parameters in."""
    return matmul_t1(s, {**{k: p[f"T1_{k}"] for k in ("BM", "BN", "BK", "WM", "WN")},
                         "precision": p["precision"]})


def matmul_t2(s: MatmulShape, p) -> Traffic:
    """t2 wgmma + TMA: TMA copies boxes of BM x 64 of A and 64 x 64 of B; values outside the
    matrices are zero-filled, not read, so L2 sends every A value once per column of block
    tiles and every B value once per row of them. The threads load nothing from global or
    shared memory (the tensor core reads the tiles through descriptors): shared loads 0.
    Multiply-adds are the padded block tile's, k padded to a multiple of BK (64). Unaligned
    and compute-bound: staged, the same counts at the padded shape (tma_shape); otherwise
    off the TMA path, t1's kernel and model."""
    run = tma_shape(s, 8, 2)
    if run is None:
        return _t1_fallback(s, p)
    M, N, K, BM, BN = run.M, run.N, run.K, p["BM"], p["BN"]
    blocks = ceil(M / BM) * ceil(N / BN)
    return matmul_traffic(s, p, loads=M * K * ceil(N / BN) + N * K * ceil(M / BM), shared=0,
                          fma=blocks * BM * BN * p["BK"] * ceil(K / p["BK"]), tma=True,
                          mma_macs=wgmma_macs_per_warp(BN), tensor_pipe=True)


def matmul_split_k(s: MatmulShape, p) -> Traffic:
    """split_k, the CUDA path for few tiles: t2's count at its own 128 x BN tile (TMA boxes,
    wgmma), 64 x BN where M <= SHORT_BM; its splits share out each tile's k tiles, so the loads
    are the same for any number of them. Staged or off the TMA path as t2 (tma_shape). Not
    counted, as in triton_split_k's model: the float32 partial tiles (S*M*N written, and read
    once by the sum, where S > 1)."""
    if s.M <= p["SHORT_BM"]:
        p = dict(p, BM=p["SHORT_BM"])
    return matmul_t2(s, p)


def matmul_t3(s: MatmulShape, p) -> Traffic:
    """t3 warp-specialized: what reaches the blocks is t2's count (every block gets its A
    and the whole B of its column, the profile's bytes L2 sent to the SMs; a block wholly
    below M still receives its cluster's B), but a cluster's B is READ from L2 once and
    multicast: L2 reads are M*K*ceil(N/BN) +
    N*K*ceil(M/(CLUSTER BM)) (lts__t_sectors_srcunit_tex_op_read; see t3_l2_reads). Every
    block of a cluster computes its tile, also one wholly below M (its A is zeros): the
    multiply-adds cover ceil(M / (CLUSTER BM)) clusters of CLUSTER tiles. Staged or off
    the TMA path as t2 (tma_shape)."""
    run = tma_shape(s, 8, 2)
    if run is None:
        return _t1_fallback(s, p)
    M, N, K, BM, BN, C = run.M, run.N, run.K, p["BM"], p["BN"], p["CLUSTER"]
    blocks = ceil(M / (C * BM)) * C * ceil(N / BN)
    return matmul_traffic(s, p, loads=M * K * ceil(N / BN) + N * K * C * ceil(M / (C * BM)),
                          shared=0, fma=blocks * BM * BN * p["BK"] * ceil(K / p["BK"]), tma=True,
                          mma_macs=wgmma_macs_per_warp(BN), tensor_pipe=True)


def t3_l2_reads(s: MatmulShape, p) -> int:
    """Elements t3 reads from L2 on its TMA path: B once per cluster (multicast)."""
    M, N, K, BN, C = s.M, s.N, s.K, p["BN"], p["CLUSTER"] * p["BM"]
    return M * K * ceil(N / BN) + N * K * ceil(M / C)


def matmul_t5(s: MatmulShape, p) -> Traffic:
    """t5 stream-K: t3's k loop, k tile for k tile: a split tile's k tiles are copied and
    multiplied once, by the cluster whose run holds them, so copies, L2 reads (t3_l2_reads)
    and multiply-adds are t3's. Beside them, not in this count: each helper part's
    partial tile, 128 x BN floats per block written and read once through L2
    (t5_partial_floats; how many parts there are depends on the GPU's cluster count). Off
    the TMA path, t1's."""
    return matmul_t3(s, p)


def t5_schedule(tiles: int, clusters: int, k_tiles: int, p) -> tuple[int, int, int]:
    """t5's schedule (cuda/matmul_t5_stream_k.cu, stream_k_schedule) of `tiles` cluster
    tiles of `k_tiles` k tiles over `clusters` clusters with the record's MAX_SPLIT, MIN_RUN
    and MIN_GAIN: (tiles taken whole, k tiles of the rest end to end, k tiles per cluster's
    run; k_tiles: nothing split)."""
    left = tiles % clusters
    whole, split = tiles - left, left * k_tiles
    run = k_tiles
    if left:
        run = max(-(-split // clusters), -(-k_tiles // p["MAX_SPLIT"]), p["MIN_RUN"])
        if run > k_tiles - p["MIN_GAIN"]:
            run = k_tiles
    return whole, split, run


def t5_partial_floats(s: MatmulShape, p, clusters: int) -> int:
    """Floats t5's helpers write to the workspace (and their owners read back once) with
    `clusters` clusters in the grid: 128 x BN per block of every helper part (a run that
    starts inside a tile), CLUSTER blocks per cluster."""
    run = tma_shape(s, 8, 2)
    if run is None:
        return 0
    s = run
    C, BM, BN = p["CLUSTER"], p["BM"], p["BN"]
    tiles = ceil(s.M / (C * BM)) * ceil(s.N / BN)
    k_tiles = ceil(s.K / p["BK"])
    _, split, run = t5_schedule(tiles, clusters, k_tiles, p)
    helpers = sum(1 for c in range(clusters) if c * run < split and (c * run) % k_tiles)
    return helpers * C * BM * BN


def tf32_tma_path(s: MatmulShape) -> bool:
    """Whether t4 runs its own TMA kernel at this shape on unstaged operands (K and N
    multiples of 4, K >= 1) rather than v7's (cuda/matmul_t4_tf32.cu)."""
    return _rows_of_16_bytes(s, 4)


def matmul_t4(s: MatmulShape, p) -> Traffic:
    """t4 tf32: block tiles of BM rows of C by BN columns in clusters of CLUSTER blocks along
    n. Every block receives the whole A tile of its rows (half of it copied by each block of
    the cluster and multicast), also a block wholly right of N: A reaches the SMs
    M*K*CLUSTER*ceil(N/(CLUSTER BN)) times; L2 reads it once per cluster (t4_l2_reads). B
    reaches each block once per row of tiles, N*K*ceil(M/BM) (columns right of N are
    zero-filled, not read). The threads load B^T's fragments from shared memory: every B
    value of every stage once, blocks * BN * k padded. Unaligned and compute-bound: staged,
    the same counts at the padded shape (tma_shape, 4 floats per 16 bytes); otherwise off
    the TMA path, v7's kernel and model with the record's V7_* parameters."""
    run = tma_shape(s, 4, 4)
    if run is None:
        return matmul_v7(s, {**{k: p[f"V7_{k}"] for k in ("BM", "BN", "BK", "WM", "WN", "TM",
                                                          "TN", "STAGES", "GROUP")},
                             "precision": p["precision"]})
    M, N, K, BM, BN, C = run.M, run.N, run.K, p["BM"], p["BN"], p["CLUSTER"]
    k_padded = p["BK"] * ceil(K / p["BK"])
    blocks = ceil(M / BM) * C * ceil(N / (C * BN))
    return matmul_traffic(s, p, loads=M * K * C * ceil(N / (C * BN)) + N * K * ceil(M / BM),
                          shared=blocks * BN * k_padded, fma=blocks * BM * BN * k_padded,
                          tma=True, mma_macs=wgmma_macs_per_warp(BM, k=8), tensor_pipe=True)


def matmul_split_k_tf32(s: MatmulShape, p) -> Traffic:
    """split_k_tf32, the CUDA path for few tiles at tf32: t4's count with one block per
    cluster (CLUSTER = 1: no multicast), its splits sharing out each tile's k tiles (the same
    loads for any number of them). Not counted: the float32 partial tiles (S*M*N written,
    read once by the sum, where S > 1)."""
    return matmul_t4(s, {**p, "CLUSTER": 1})


def t4_l2_reads(s: MatmulShape, p) -> int:
    """Elements t4 reads from L2 on its TMA path: A once per cluster (multicast)."""
    M, N, K, BM, C = s.M, s.N, s.K, p["BM"], p["CLUSTER"]
    return M * K * ceil(N / (C * p["BN"])) + N * K * ceil(M / BM)


def lecture_formula(version: str, n: int, p) -> int:
    """The lecture's global-load count for an N x N x N product (square, tile multiples)."""
    if version in ("v1", "v1c"):
        return 2 * n**3
    if version == "v1.5":
        return n**3 // p["V"] + n**3
    if version == "v2":
        return 2 * n**3 // p["V"]
    if version in ("v3", "v4"):
        return 2 * n**3 // p["L"]
    if "BM" in p and "BN" in p:  # 2N^3/L for a rectangular tile: v5 on, the tensor-core
        # rungs, split-k (cuda_split_k's; triton_split_k's params name no BN)
        return n**3 // p["BN"] + n**3 // p["BM"]
    raise KeyError(version)
