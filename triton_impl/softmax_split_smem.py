"""Softmax with a row split over several programs, each holding its segment in SHARED memory
(split rows, Gluon): softmax_split.py's exchange, with the segment where CUDA keeps it.

  idea      softmax_split.py keeps a segment in registers: an SM holds 128 KiB of segments
            (float32, or 16-bit rows packed in int32 pairs), and at 4096 x 393216 that reads
            88-91% of the copy bandwidth, where CUDA's split softmax, which copies its slice into
            shared memory (up to 227 KiB a block), reads 93%. Plain Triton has no explicit
            shared memory; Gluon (triton.experimental.gluon) has, and TMA to fill it. Here a
            program's segment is 64 KiB of shared memory, three programs per SM: 192 KiB of a
            row in flight per SM, loaded by a handful of TMA instructions (one per 8 KiB box)
            where the register kernel spends a 16-byte load per thread for every 16 bytes.
  view      TMA moves boxes of a tensor of up to 5 dimensions, at most 256 elements along
            each. A row of n = R x W elements (W = 256, 128 or 64: the largest that divides n)
            is seen as R "lines" of W elements: x is described as a (rows, R, W) tensor and a
            segment is SEG_CHUNKS boxes [1, CHUNK, W] of consecutive lines. A box past the
            row's last line reads zeros (TMA checks each dimension: never the next row's
            bytes), and the passes below skip or mask such lines.
  per row   1. TMA: the segment's boxes into shared memory, counted on one mbarrier.
            2. pass 1 (shared -> registers, CHUNK lines at a time): the segment's maximum m.
            3. pass 2: s = sum exp(x - m).
            4. the exchange of softmax_split.py: (m, s) into a global workspace, an arrival
               counter (release), poll until the row's G pairs are there (acquire), fold
               M = max m_g, S = sum s_g exp(m_g - M).
            5. pass 3: y = exp(x - M) / S from shared memory, 16-byte stores to global.
            6. a barrier (every thread done reading the segment) before the next row's
               boxes overwrite it. With BUFFERS = 2 the next row's boxes go into a second
               buffer at step 1 instead, so they load during steps 2-5 (half the segment
               for the same shared memory).
            The exp is taken twice per element (passes 2 and 3); the row crosses DRAM once in
            each direction and shared memory is read three times: 3 bytes of shared reads
            per byte from DRAM, about 20 B per clock per SM at the copy bandwidth, against
            the 128 B it serves (not the limit).
  exps      ex2.approx.ftz for the sum (terms under 2^-126 of the segment's maximum do not
            change it) and for 16-bit outputs, raised by 2^RAISE as softmax_split.py does
            (no output is flushed above bfloat16's smallest subnormal); float32 outputs by
            gl.exp2 (subnormal results kept).
  residency as softmax_split.py: a persistent grid of G x groups programs, all resident at
            once (sized from the compiled kernel's shared memory: resident_programs), each
            group of G looping over rows; the poll gives up after SPIN_LIMIT reads.
  traffic   reads N, writes N elements (2 N sizeof(T)), plus 8 G bytes of pairs and the polls
            per row; shared memory: N written by TMA, 3 N read.
  precond.  float32 / float16 / bfloat16 rows, contiguous, n a multiple of 64, x and y
            16-byte aligned; a CUDA device of compute capability 9.x (TMA); fewer than
            2^31 - 2^16 rows; G x groups <= what the GPU holds at once (plan() returns None
            otherwise, and softmax_split runs its register kernel). No interpreter: Gluon
            kernels only compile.
  tiles     tiles.SOFTMAX_SPLIT_SMEM: (segment bytes, buffers, warps, the shortest row that
            softmax_split sends here by default) per element size: 64 KiB, one buffer, 8
            warps; 16-bit rows from 65536 elements, float32 rows from 262144.
  measured  H100, % of the copy bandwidth, 4096 x 393216 fp32 / fp16 / bf16: 95.4 / 94.2 /
            93.3 (the segment in registers: 90.9 / 88.1 / 87.4); shorter rows and other
            segments in tiles.py (results/sweeps/h100/softmax_smem).
  run       python -m pytest tests/cpu/test_softmax_split_smem.py      (CPU: compiles for sm_90)
            python -m pytest tests/gpu/test_softmax_split_smem.py      (GPU)
"""
from __future__ import annotations

import functools

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from triton_impl import _common, tiles

NAME = "triton_softmax_split"               # the op; its constants as softmax_split.py's
LOG2E = gl.constexpr(1.4426950408889634)    # log2(e)
RAISE = gl.constexpr(8.0)                   # 16-bit outputs: exps taken as 2^RAISE e
PER_THREAD = {4: 8, 2: 16}                  # elements per thread in a chunk (two 16-byte reads)


@gluon.jit
def _exp2_ftz(t):
    """2^t by ex2.approx.ftz.f32 (results below 2^-126 flushed to zero)."""
    return gl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [t],
                                     dtype=gl.float32, is_pure=True, pack=1)


@gluon.jit
def _load_segment(x_desc, smem, ready, buf, row, first, pred,
                  CHUNK: gl.constexpr, SEG_CHUNKS: gl.constexpr):
    """TMA: the segment's SEG_CHUNKS boxes of row `row` (lines first, first + CHUNK, ...)
    into buffer `buf`, counted on its mbarrier (a box past the row's end reads zeros and
    counts its bytes all the same)."""
    bar = ready.index(buf)
    mbarrier.expect(bar, SEG_CHUNKS * x_desc.block_type.nbytes, pred=pred)
    for i in gl.static_range(SEG_CHUNKS):
        dst = smem.index(buf * SEG_CHUNKS + i).reshape(x_desc.block_type.shape)
        tma.async_copy_global_to_shared(x_desc, [row, first + i * CHUNK, 0], bar, dst,
                                        pred=pred)


@gluon.jit
def _chunk(smem, index, lines, line0, R, MASKED: gl.constexpr, layout: gl.constexpr):
    """Chunk `index` of the shared segment as float32 [CHUNK, W] registers, lines past the
    row's last (R) as -inf (MASKED: R is not a multiple of CHUNK)."""
    x = smem.index(index).load(layout).to(gl.float32)
    if MASKED:
        x = gl.where((line0 + lines)[:, None] < R, x, -float("inf"))
    return x


@gluon.jit
def _exchange(part_ptr, count_ptr, row, row64, seg, m, s, SEGMENTS: gl.constexpr,
              SEGMENTS_P2: gl.constexpr, SPIN_LIMIT: gl.constexpr, pair_layout: gl.constexpr):
    """softmax_split.py's one-launch exchange: publish (m, s), arrive (release), wait for the
    row's other G - 1 programs (acquire), fold the G pairs into the row's (M, S). A row of
    one segment: its (m, s), nothing exchanged."""
    if SEGMENTS == 1:
        row_max, row_sum = m, s
    else:
        pairs = part_ptr + row64 * (2 * SEGMENTS)
        gl.store(pairs + 2 * seg, m)          # i32 ok: 2 seg < 2 G < 2^17 (G <= resident)
        gl.store(pairs + 2 * seg + 1, s)
        gl.thread_barrier()                   # every store of the pair before the release
        gl.atomic_add(count_ptr + row, 1, sem="release")
        seen = gl.atomic_add(count_ptr + row, 0, sem="acquire")
        polls = 0
        while (seen < SEGMENTS) & (polls < SPIN_LIMIT):
            seen = gl.atomic_add(count_ptr + row, 0, sem="acquire")
            polls += 1
        k = gl.arange(0, SEGMENTS_P2, layout=pair_layout)
        pm = gl.load(pairs + 2 * k, mask=k < SEGMENTS, other=-float("inf"),
                     cache_modifier=".cg")
        ps = gl.load(pairs + 2 * k + 1, mask=k < SEGMENTS, other=0.0, cache_modifier=".cg")
        row_max = gl.max(pm, axis=0)
        shift = gl.where(row_max == -float("inf"), 0.0, row_max)
        row_sum = gl.sum(ps * gl.exp2((pm - shift) * LOG2E), axis=0)
    return row_max, row_sum


@gluon.jit
def softmax_row_split_smem_kernel(
    x_desc,                                   # x as (rows, R, W), boxes [1, CHUNK, W]
    y_ptr,                                    # y: [rows, n] contiguous, n = R x W
    part_ptr, count_ptr,                      # pairs: [rows, G, 2] float32; arrivals: [rows] int32, zeroed
    rows, R,                                  # rows, lines per row
    W: gl.constexpr,                          # elements per line
    CHUNK: gl.constexpr,                      # lines per box (= per register chunk)
    SEG_CHUNKS: gl.constexpr,                 # boxes per segment
    SEGMENTS: gl.constexpr,                   # G = cdiv(R, CHUNK x SEG_CHUNKS): programs per row
    SEGMENTS_P2: gl.constexpr,                # next_power_of_2(G)
    BUFFERS: gl.constexpr,                    # 1, or 2: the next row loads during this one
    MASKED: gl.constexpr,                     # R % CHUNK != 0: the last chunk is partial
    SPIN_LIMIT: gl.constexpr,                 # polls before giving up
    layout: gl.constexpr,                     # registers of a [CHUNK, W] chunk (16-byte reads)
    smem_layout: gl.constexpr,                # the segment's shared memory (unswizzled)
    pair_layout: gl.constexpr,                # the G pairs as one tensor
):
    pid = gl.program_id(0)
    seg = pid % SEGMENTS                      # this program's segment of every row it takes
    group = pid // SEGMENTS
    groups = gl.num_programs(0) // SEGMENTS
    first = seg * (SEG_CHUNKS * CHUNK)        # its first line; i32 ok: < R + CHUNK x SEG_CHUNKS
    n = R * W                                 # i32 ok: n < 2^31 (wrapper)
    # chunks of the segment that hold lines of the row (>= 1: the wrapper's G)
    chunks = gl.minimum((R - first + CHUNK - 1) // CHUNK, SEG_CHUNKS)
    out_16: gl.constexpr = y_ptr.dtype.element_ty != gl.float32

    smem = gl.allocate_shared_memory(x_desc.dtype, [BUFFERS * SEG_CHUNKS, CHUNK, W],
                                     smem_layout)
    ready = gl.allocate_shared_memory(gl.int64, [BUFFERS, 1], mbarrier.MBarrierLayout())
    for b in gl.static_range(BUFFERS):
        mbarrier.init(ready.index(b), count=1)
    fence_async_shared()                      # the barriers' init before TMA signals them

    lines = gl.arange(0, CHUNK, layout=gl.SliceLayout(1, layout))
    offsets = lines[:, None] * W + gl.arange(0, W, layout=gl.SliceLayout(0, layout))[None, :]
    if BUFFERS == 2:                          # the first row's boxes
        _load_segment(x_desc, smem, ready, 0, group, first, group < rows, CHUNK, SEG_CHUNKS)
    it = 0
    for row in range(group, rows, groups):    # i32 ok: rows + groups < 2^31 (wrapper)
        buf = it % BUFFERS
        if BUFFERS == 2:                      # the next row's boxes into the other buffer
            _load_segment(x_desc, smem, ready, 1 - buf, row + groups, first,
                          row + groups < rows, CHUNK, SEG_CHUNKS)
        else:
            _load_segment(x_desc, smem, ready, 0, row, first, True, CHUNK, SEG_CHUNKS)
        mbarrier.wait(ready.index(buf), (it // BUFFERS) & 1)
        base = buf * SEG_CHUNKS

        # pass 1: the segment's maximum (elementwise over chunks, one reduction at the end)
        top = gl.full([CHUNK, W], -float("inf"), gl.float32, layout)
        for i in range(chunks):
            top = gl.maximum(top, _chunk(smem, base + i, lines, first + i * CHUNK, R,
                                         MASKED, layout))
        m = gl.max(gl.max(top, axis=1), axis=0)
        shift = gl.where(m == -float("inf"), 0.0, m)          # all -inf: exp(-inf) = 0
        # pass 2: s = sum exp(x - m)
        acc = gl.zeros([CHUNK, W], gl.float32, layout)
        for i in range(chunks):
            x = _chunk(smem, base + i, lines, first + i * CHUNK, R, MASKED, layout)
            acc += _exp2_ftz((x - shift) * LOG2E)
        s = gl.sum(gl.sum(acc, axis=1), axis=0)

        row64 = row.to(gl.int64)
        row_max, row_sum = _exchange(part_ptr, count_ptr, row, row64, seg, m, s, SEGMENTS,
                                     SEGMENTS_P2, SPIN_LIMIT, pair_layout)

        # pass 3: y = exp(x - M) / S (a row of -inf: M = -inf, NaN as in softmax)
        y_seg = y_ptr + row64 * n + first * W
        if out_16:
            scale = (1.0 / row_sum) * 0.00390625                 # 2^-RAISE / S
        else:
            scale = 1.0 / row_sum
        for i in range(chunks):
            x = smem.index(base + i).load(layout).to(gl.float32)
            if out_16:
                y = _exp2_ftz((x - row_max) * LOG2E + RAISE) * scale
            else:
                y = gl.exp2((x - row_max) * LOG2E) * scale
            keep = (first + i * CHUNK + lines)[:, None] < R
            gl.store(y_seg + i * (CHUNK * W) + offsets, y.to(y_ptr.dtype.element_ty),
                     mask=keep, cache_modifier=".cs")
        gl.thread_barrier()                   # the segment read before its buffer is refilled
        it += 1
    for b in gl.static_range(BUFFERS):
        mbarrier.invalidate(ready.index(b))


def available(x: torch.Tensor) -> bool:
    """True where this kernel can run: a CUDA tensor on a device with TMA (compute capability
    9.x), not the interpreter."""
    if _common.interpreting() or x.device.type != "cuda":
        return False
    return _common.cuda_properties(x.device).major == 9


def line_width(n: int) -> int:
    """W: the largest of 256, 128, 64 dividing n (0: none does, the kernel does not apply)."""
    return next((w for w in (256, 128, 64) if n % w == 0), 0)


@functools.lru_cache(maxsize=None)
def _layouts(element_size: int, W: int, warps: int):
    """(chunk registers, shared segment, TMA box, pairs) layouts. A chunk: 16 bytes per thread
    along a line, the warp's 32 threads along W (several lines per warp when W is short)."""
    vec = 16 // element_size
    along = min(32, W // vec)
    bits = 8 * element_size
    return (gl.BlockedLayout([1, vec], [32 // along, along], [warps, 1], [1, 0]),
            gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=bits, rank=2),
            gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=bits, rank=3),
            gl.BlockedLayout([1], [32], [warps], [0]))


def plan(element_size: int, n: int, segment_bytes: int | None = None,
         buffers: int | None = None, warps: int | None = None) -> dict | None:
    """The launch's shape for rows of n elements: W, CHUNK, SEG_CHUNKS, G, BUFFERS, warps
    (tiles.SOFTMAX_SPLIT_SMEM's, or those asked for); None where n is not a multiple of 64.
    Segments as equal as CHUNK allows: G = cdiv(R, lines a segment holds), then each segment
    cdiv(R, G) lines rounded up to CHUNK."""
    W = line_width(n)
    if not W:
        return None
    seg_bytes, bufs, w, _shortest = tiles.SOFTMAX_SPLIT_SMEM[element_size]
    seg_bytes = seg_bytes if segment_bytes is None else segment_bytes
    bufs = bufs if buffers is None else buffers
    w = w if warps is None else warps
    if w not in (1, 2, 4, 8, 16, 32) or bufs not in (1, 2) or seg_bytes < 1:
        raise ValueError(f"{NAME}: the shared-memory tile needs warps a power of two up to 32, "
                         f"1 or 2 buffers and a positive segment, got {w} warps, {bufs} "
                         f"buffers, {seg_bytes} bytes")
    chunk = PER_THREAD[element_size] * 32 * w // W      # lines a chunk (a box) holds: <= 256
    R = n // W
    most = max(1, seg_bytes // (chunk * W * element_size))   # boxes a segment may hold
    segments = -(-R // (most * chunk))
    seg_chunks = -(-(-(-R // segments)) // chunk)
    segments = -(-R // (seg_chunks * chunk))
    return dict(W=W, CHUNK=chunk, SEG_CHUNKS=seg_chunks, SEGMENTS=segments,
                SEGMENTS_P2=triton.next_power_of_2(segments), BUFFERS=bufs,
                MASKED=R % chunk != 0, num_warps=w)


def arguments(x: torch.Tensor, y: torch.Tensor, p: dict, pairs: torch.Tensor,
              count: torch.Tensor, spin_limit: int) -> tuple[tuple, dict]:
    """(arguments, constexprs and launch options) of softmax_row_split_smem_kernel for
    y = softmax(x) over the last dimension of x (contiguous) with plan p, the exchange's
    workspace (softmax_split._workspace) and its poll limit. softmax_split sizes the
    persistent grid and launches it, as it does its register kernels."""
    W = p["W"]
    layout, smem_layout, box_layout, pair_layout = _layouts(x.element_size(), W,
                                                            p["num_warps"])
    n = x.shape[-1]
    rows, R = x.numel() // n, n // W
    desc = TensorDescriptor(x, [rows, R, W], [n, W, 1], [1, p["CHUNK"], W], box_layout)
    meta = dict(p, SPIN_LIMIT=spin_limit, layout=layout, smem_layout=smem_layout,
                pair_layout=pair_layout)
    return (desc, y, pairs, count, rows, R), meta
