"""Triton twins of cuda/softmax_row_sram.cu and cuda/softmax_online.cu: softmax over any dim.

  idea      softmax(x)_k = exp(x_k - m) / sum_j exp(x_j - m), m = max_j x_j ("Numerically
            stable softmax" in the notebook "Meet Triton"): subtracting the maximum keeps
            every exp in (0, 1]. Its `dim` argument is honoured WITHOUT its transpose: the
            wrapper views the contiguous input as [outer, n, inner] around dim, and
              - dim = -1 (inner == 1): rows; a program owns one row (as in "Meet Triton");
              - any other dim: columns, element k of column (o, i) at (o * n + k) * inner + i;
                a program owns BLOCK_I neighbour columns, so each load is a [BLOCK_N, BLOCK_I]
                tile whose rows are BLOCK_I contiguous elements (coalesced), where the
                x.transpose(dim, -1).contiguous() of "Meet Triton" costs a full extra read
                and write.
  versions  row_sram   the whole row (column) is ONE tensor value: BLOCK = next_power_of_2(n),
                       as in "Meet Triton"; the compiler keeps it in registers, so DRAM sees
                       the row once. Rows up to 32768 elements (as the CUDA twin).
            online     rows of any length. A row of at most ONE_CHUNK_MAX_N elements (SRAM_MAX_N,
                       32768) is ONE chunk, BLOCK = next_power_of_2(n) on row_sram's warps,
                       kept in registers and read once, whatever its type (16-bit rows of
                       32768 in 4096-element chunks were read twice: 88-90% of the copy
                       bandwidth, one chunk 93%; float32 97.5% against 98.5% in 16384-element
                       chunks, one path for every type at 1% of float32;
                       results/sweeps/h100/debts_table.txt). Longer rows go in chunks
                       (ONLINE_CONFIG), twice: pass 1 keeps a running max and a running sum
                       of exp(x - max) (rescaled when the max grows: Milakov and Gimelshein
                       2018), pass 2 writes exp(x - max) / sum walking the row BACKWARDS (as
                       "Meet Triton" does in stage 2), so the chunks read last, the likeliest
                       still in L2, are read first. The running max and sum are kept per LANE
                       of the chunk (a [BLOCK] tensor each) and folded once at the end: no
                       cross-warp reduction inside the loop (the CUDA twin keeps one pair per
                       thread; a Triton program cannot name its threads). Pass 1 loads with
                       eviction_policy="evict_last", pass 2 with "evict_first" (KEEP): the
                       rows in flight then stay in L2 for pass 2.
            The split version (a row over several programs) is
            triton_impl/softmax_split.py.
  mapping   CUDA (cuda/softmax_*.cu)                this file
            block per row, row staged in shared     program per row, row in registers
              memory (the row in SRAM)
            run-time check: rows 16-byte aligned    the same check; VEC constexpr, then
              -> VEC-wide accesses                    tl.multiple_of(row pointer, 16) and a
                                                      mask bound n // VEC * VEC
            block_allreduce (shuffles + shared)     tl.max / tl.sum (the compiler's reduction)
            2-D block TX x TY for columns, the      [BLOCK_N, BLOCK_I] tiles; row_sram keeps
              n x TX tile in shared memory            its tile in registers, 16384 elements
                                                      at most (32 per thread), so BLOCK_I is
                                                      half the CUDA TX: [4096, 4] for n = 3000
                                                      where CUDA stages [3000, 8]
            __expf                                  tl.exp (both: ex2.approx after x * log2 e)
            online: steps of 16 float32 per thread  rows up to 32768: one chunk; longer rows:
              (1024 threads) or 64 16-bit ones        chunks of 16384 float32 (4096 16-bit) and
              (512 threads); default L2 policy        16 warps; evict_last / evict_first hints
              (it keeps 132 rows = 17 MB in           (CUDA has no one-word equivalent: it
              flight and reaches 95% without one)     takes createpolicy + ld ...L2::cache_hint)
  traffic   row_sram: reads N, writes N elements (N = outer * n * inner): compulsory = model
            = 2 N sizeof(T) bytes.  online: model reads 2 N, writes N (3 N sizeof(T)); the
            second read comes from L2 when the rows in flight fit there; a one-chunk row
            (n <= 32768, dim = -1) reads N (2 N sizeof(T)).
  precond.  float32 / float16 / bfloat16 (computed in float32), any shape with >= 1 dim, any
            dim; made contiguous by the wrapper. Rows of length 1 give 1. A row of -inf
            gives NaN (exp(-inf - -inf)), as torch.softmax; a NaN or +inf makes its row NaN.
  run       python -m bench check --kernels 'triton_softmax*' --shapes 1000x1000,100x100:dim=0
            python -m bench time --kernels '*softmax*' --shapes 4096x32768 --precision fp32
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, tiles

# Shared with the CUDA twins, read from cuda/memory_config.h (tiles.softmax()): the longest
# row of the SRAM version (32768), the neighbour columns per program (8 to start with, at
# most 32, while 4 programs per SM remain) and the online column kernel's chunk (1024
# elements on 8 warps: the CUDA block's 256 threads x 4). The rest is Triton's own:
ONLINE_CONFIG = tiles.SOFTMAX_ONLINE  # long rows: (chunk, warps) by element size
# Online rows (dim = -1) of at most this many elements are one chunk, read once; None:
# SRAM_MAX_N (32768, the row_sram version's longest row).
ONE_CHUNK_MAX_N: int | None = None
# Pass 1 asks L2 to keep the row (evict_last) and pass 2 to drop it (evict_first): without
# it pass 2 missed L2 and DRAM read 848 MB instead of the 537 MB compulsory (ncu).
ONLINE_KEEP = True
# A column tile lives in registers: 16384 elements = 32 per thread of 16 warps (64 spill),
# where the CUDA twin stages its tile in shared memory (32768 floats). Columns longer than
# that (up to the SRAM version's longest row) still run, as a [32768, 1] tile that spills.
COLUMN_TILE = 16384


# ---------------------------------------------------------------------------------------
# Rows (dim = -1)
# ---------------------------------------------------------------------------------------

@triton.jit
def _row_in_registers(x_row, y_row, n, BLOCK: tl.constexpr):
    """Softmax of the n <= BLOCK elements at x_row into y_row, the row one tensor value."""
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
    row_max = tl.max(x, axis=0)               # sweep 1
    e = tl.exp(x - row_max)                   # sweep 2 (padding: exp(-inf) = 0)
    row_sum = tl.sum(e, axis=0)
    y = e * (1.0 / row_sum)                   # sweep 3
    tl.store(y_row + cols, y.to(y_row.dtype.element_ty), mask=mask, cache_modifier=".cs")


@triton.jit
def softmax_row_sram_kernel(
    x_ptr, y_ptr,                             # pointers: x, y ([rows, n], contiguous)
    n,                                        # row length
    BLOCK: tl.constexpr,                      # next_power_of_2(n): the whole row
    VEC: tl.constexpr,                        # 16 // element size if rows are aligned, else 1
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n
    y_row = y_ptr + row * n
    if VEC > 1:                               # checked by the wrapper: tell the compiler
        x_row = tl.multiple_of(x_row, 16)
        y_row = tl.multiple_of(y_row, 16)
    _row_in_registers(x_row, y_row, n // VEC * VEC, BLOCK)  # n // VEC * VEC = n: no vector cut


@triton.jit
def softmax_row_online_kernel(
    x_ptr, y_ptr,                             # pointers: x, y ([rows, n], contiguous)
    n,                                        # row length (any)
    BLOCK: tl.constexpr,                      # elements per chunk
    VEC: tl.constexpr,                        # 16 // element size if rows are aligned, else 1
    ONE_CHUNK: tl.constexpr,                  # n <= BLOCK: the row is read once
    KEEP: tl.constexpr,                       # pass 1 asks L2 to keep the row for pass 2
    WIDE: tl.constexpr,                       # n + BLOCK >= 2^31: 64-bit offsets in the row
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n
    y_row = y_ptr + row * n
    if VEC > 1:
        x_row = tl.multiple_of(x_row, 16)
        y_row = tl.multiple_of(y_row, 16)
    n_vec = n // VEC * VEC                    # = n (i32 ok: <= n)
    cols = tl.arange(0, BLOCK)
    stop = n
    if WIDE:                                  # start + cols would wrap past 2^31, and so
        cols = cols.to(tl.int64)              # would the loop counter's last step: an
        stop = tl.cast(n, tl.int64)           # int64 bound gives an int64 counter

    if ONE_CHUNK:                             # the row is one chunk: keep it, as row_sram
        _row_in_registers(x_row, y_row, n_vec, BLOCK)
    else:
        # Pass 1: per lane, the running max m and the running sum s of exp(x - m).
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, stop, BLOCK):   # i32 ok: n + BLOCK < 2^31 unless WIDE
            offs = start + cols
            if KEEP:
                x = tl.load(x_row + offs, mask=offs < n_vec, other=-float("inf"),
                            eviction_policy="evict_last")
            else:
                x = tl.load(x_row + offs, mask=offs < n_vec, other=-float("inf"))
            x = x.to(tl.float32)
            m_new = tl.maximum(m, x)
            shift = tl.where(m_new == -float("inf"), 0.0, m_new)  # all -inf so far: exp(-inf) = 0
            s = s * tl.exp(m - shift) + tl.exp(x - shift)
            m = m_new
        row_max = tl.max(m, axis=0)           # fold the lanes once
        shift = tl.where(row_max == -float("inf"), 0.0, row_max)
        row_sum = tl.sum(s * tl.exp(m - shift), axis=0)
        inv = 1.0 / row_sum

        # Pass 2, last chunk first.
        chunks = tl.cdiv(stop, BLOCK)         # i32 ok: n + BLOCK < 2^31 unless WIDE (int64)
        for back in range(0, chunks):
            offs = (chunks - 1 - back) * BLOCK + cols    # i32 ok: (chunks - 1) * BLOCK < n
            mask = offs < n_vec
            if KEEP:
                x = tl.load(x_row + offs, mask=mask, other=0.0, eviction_policy="evict_first")
            else:
                x = tl.load(x_row + offs, mask=mask, other=0.0)
            y = tl.exp(x.to(tl.float32) - row_max) * inv  # a row of -inf: exp(NaN) = NaN
            tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


# ---------------------------------------------------------------------------------------
# Columns (any other dim): [outer, n, inner], program = (o, BLOCK_I neighbour columns)
# ---------------------------------------------------------------------------------------

@triton.jit
def softmax_cols_sram_kernel(
    x_ptr, y_ptr,                             # pointers: x, y ([outer, n, inner], contiguous)
    n, inner, tiles_i,                        # sizes; tiles_i = cdiv(inner, BLOCK_I)
    BLOCK_N: tl.constexpr,                    # next_power_of_2(n): the whole column
    BLOCK_I: tl.constexpr,                    # neighbour columns per program
    WIDE: tl.constexpr,                       # n * inner >= 2^31: 64-bit offsets in the slab
):
    pid = tl.program_id(0).to(tl.int64)
    o = pid // tiles_i
    i0 = (pid % tiles_i) * BLOCK_I
    x_slab = x_ptr + o * n * inner + i0       # 64-bit scalar arithmetic, once
    y_slab = y_ptr + o * n * inner + i0
    i = tl.arange(0, BLOCK_I)
    k = tl.arange(0, BLOCK_N)
    if WIDE:
        k = k.to(tl.int64)
    # 32-bit offsets inside the slab when they fit: a tile element's address then costs one
    # register until the load, not two (114 registers for a [4096, 4] float32 tile at 16 warps,
    # where 64-bit offsets needed 128 and spilled).
    offs = k[:, None] * inner + i[None, :]    # [BLOCK_N, BLOCK_I] (i32 ok: < n inner unless WIDE)
    mask = (k[:, None] < n) & (i0 + i[None, :] < inner)
    x = tl.load(x_slab + offs, mask=mask, other=-float("inf")).to(tl.float32)
    col_max = tl.max(x, axis=0)
    e = tl.exp(x - col_max[None, :])
    inv = 1.0 / tl.sum(e, axis=0)
    tl.store(y_slab + offs, (e * inv[None, :]).to(y_ptr.dtype.element_ty), mask=mask,
             cache_modifier=".cs")


@triton.jit
def softmax_cols_online_kernel(
    x_ptr, y_ptr,                             # pointers: x, y ([outer, n, inner], contiguous)
    n, inner, tiles_i,                        # sizes; tiles_i = cdiv(inner, BLOCK_I)
    BLOCK_N: tl.constexpr,                    # elements of each column per chunk
    BLOCK_I: tl.constexpr,                    # neighbour columns per program
    WIDE: tl.constexpr,                       # n * inner >= 2^31: 64-bit offsets in the slab
):
    pid = tl.program_id(0).to(tl.int64)
    o = pid // tiles_i
    i = (pid % tiles_i) * BLOCK_I + tl.arange(0, BLOCK_I)
    k = tl.arange(0, BLOCK_N)
    stop = n
    if WIDE:                                  # kk * inner would wrap past 2^31 (and the
        k = k.to(tl.int64)                    # loop counter, for a column near 2^31)
        stop = tl.cast(n, tl.int64)
    base = o * n * inner
    i_ok = i[None, :] < inner

    m = tl.full([BLOCK_N, BLOCK_I], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK_N, BLOCK_I], tl.float32)
    for start in range(0, stop, BLOCK_N):     # i32 ok: n < 2^30 (inner >= 2) unless WIDE
        kk = start + k
        offs = base + kk[:, None] * inner + i[None, :]    # i32 ok: < n inner unless WIDE
        x = tl.load(x_ptr + offs, mask=(kk[:, None] < n) & i_ok, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.exp(x - shift)
        m = m_new
    col_max = tl.max(m, axis=0)
    shift = tl.where(col_max == -float("inf"), 0.0, col_max)
    inv = 1.0 / tl.sum(s * tl.exp(m - shift[None, :]), axis=0)

    chunks = tl.cdiv(stop, BLOCK_N)           # i32 ok: n < 2^30 (inner >= 2) unless WIDE
    for back in range(0, chunks):
        kk = (chunks - 1 - back) * BLOCK_N + k    # i32 ok: (chunks - 1) * BLOCK_N < n
        offs = base + kk[:, None] * inner + i[None, :]    # i32 ok: < n inner unless WIDE
        mask = (kk[:, None] < n) & i_ok
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp(x - col_max[None, :]) * inv[None, :]
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


# ---------------------------------------------------------------------------------------
# Wrapper: check, view as [outer, n, inner], allocate, launch
# ---------------------------------------------------------------------------------------

def softmax_view(op: str, x: torch.Tensor, dim: int) -> tuple[int, int, int]:
    """(outer, n, inner) of x around dim, after the checks every softmax op makes."""
    _memory.check_float(op, x)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    if x.dim() == 0:
        raise ValueError(f"{op}: x must have at least one dimension, got a 0-D tensor")
    if not -x.dim() <= dim < x.dim():
        raise ValueError(f"{op}: dim must be in [{-x.dim()}, {x.dim() - 1}] for a "
                         f"{x.dim()}-D tensor, got {dim}")
    d = dim % x.dim()
    return math.prod(x.shape[:d]), x.shape[d], math.prod(x.shape[d + 1:])


def _num_warps(elements: int, per_thread: int) -> int:
    return max(1, min(16, elements // (32 * per_thread)))


def column_tile(outer: int, inner: int, most: int, sms: int) -> int:
    """Neighbour columns per program (cuda/memory_common.cuh, column_tile): 8 to start with,
    fewer if the tensor has fewer columns, more (up to `most`) only while the grid keeps at
    least 4 programs per SM of the device, which has `sms` of them."""
    p = tiles.softmax()
    bi = 1
    while bi < p["COLUMNS_FIRST"] and bi < inner and bi < most:
        bi *= 2
    while bi < most and outer * triton.cdiv(inner, 2 * bi) >= p["BLOCKS_PER_SM"] * sms:
        bi *= 2
    return bi


def _row_warps(block: int) -> int:
    """The warps of "Meet Triton" for a whole-row block: 4, 8 from 2048 elements, 16 from
    4096 (64 per thread at 32768)."""
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


def softmax(x: torch.Tensor, dim: int = -1, version: str = "online") -> torch.Tensor:
    """softmax(x, dim) with version "row_sram" (n <= 32768) or "online" (any n)."""
    op = f"triton_softmax_{version}"
    if version not in ("row_sram", "online"):
        raise ValueError(f"triton_softmax: version must be 'row_sram' or 'online', got {version!r}")
    outer, n, inner = softmax_view(op, x, dim)
    p = tiles.softmax()
    if version == "row_sram" and n > p["SRAM_MAX_N"]:
        raise ValueError(f"{op}: a row of {n} elements (dim {dim} of {tuple(x.shape)}) does not "
                         f"fit in SRAM: at most {p['SRAM_MAX_N']}; triton_softmax_online takes "
                         f"rows of any length")
    _memory.check_device(op, x)
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    if inner == 1:
        vec = _memory.vector_width(x.dtype, x, y, row_elements=n)
        if version == "row_sram":
            block = max(16, triton.next_power_of_2(n))
            _common.launch(softmax_row_sram_kernel, (outer,), x, y, n, BLOCK=block, VEC=vec,
                           num_warps=_row_warps(block))
        elif n <= (p["SRAM_MAX_N"] if ONE_CHUNK_MAX_N is None else ONE_CHUNK_MAX_N):
            block = max(16, triton.next_power_of_2(n))  # one chunk: the row is read once
            _common.launch(softmax_row_online_kernel, (outer,), x, y, n, BLOCK=block, VEC=vec,
                           ONE_CHUNK=True, KEEP=ONLINE_KEEP, WIDE=False,
                           num_warps=_row_warps(block))
        else:
            chunk, warps = ONLINE_CONFIG[x.element_size()]
            block = max(16, min(chunk, triton.next_power_of_2(n)))
            _common.launch(softmax_row_online_kernel, (outer,), x, y, n, BLOCK=block, VEC=vec,
                           ONE_CHUNK=n <= block, KEEP=ONLINE_KEEP, WIDE=n + block >= 2**31,
                           num_warps=min(warps, max(1, block // 256)))
        return y
    if version == "row_sram":
        block_n = max(16, triton.next_power_of_2(n))
        most = 1  # up to 32 neighbour columns, the tile within COLUMN_TILE elements
        while most < p["COLUMNS"] and 2 * most * block_n <= COLUMN_TILE:
            most *= 2
        block_i = column_tile(outer, inner, most, _common.sm_count(x.device))
        tiles_i = triton.cdiv(inner, block_i)
        _common.launch(softmax_cols_sram_kernel, (outer * tiles_i,), x, y, n, inner, tiles_i,
                       BLOCK_N=block_n, BLOCK_I=block_i, WIDE=n * inner >= 2**31,
                       num_warps=_num_warps(block_n * block_i, 32))
    else:
        block_i = column_tile(outer, inner, p["COLUMNS"], _common.sm_count(x.device))
        block_n = p["COLUMN_CHUNK"] // block_i  # 1024: the CUDA block's 256 threads x 4
        tiles_i = triton.cdiv(inner, block_i)
        _common.launch(softmax_cols_online_kernel, (outer * tiles_i,), x, y, n, inner, tiles_i,
                       BLOCK_N=block_n, BLOCK_I=block_i, WIDE=n * inner >= 2**31,
                       num_warps=p["COLUMN_WARPS"])
    return y


def softmax_row_sram(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return softmax(x, dim, "row_sram")


def softmax_online(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return softmax(x, dim, "online")


BUG_FLUSH = 5e-4   # the wrong softmax's threshold, relative to each row's maximum


def softmax_bug_flush_small(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """DELIBERATELY WRONG: the online softmax with every output below BUG_FLUSH of its
    row's maximum flushed to zero (76% of the elements of a 64 x 1000 float16 input).
    An error measured against the row maximum let it pass in float16; the check must
    FAIL it (bench/families/memory/problems.py, SoftmaxProblem)."""
    y = softmax(x, dim, "online")
    top = y.amax(dim=dim, keepdim=True) if y.numel() else y
    return torch.where(y < BUG_FLUSH * top, torch.zeros_like(y), y)


BUG_ROWS = 1000   # the mis-normalising softmax's one row in BUG_ROWS (index % BUG_ROWS == 1)


def softmax_bug_sum_from_one(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """DELIBERATELY WRONG: the online softmax with one row in a thousand (its index along
    the rows, % BUG_ROWS == 1) normalised by a sum that started at 1 instead of 0: that row
    comes out scaled by S / (S + 1), S its sum of exp(x - max) (at least 1). The other rows
    are right, so the check must find one wrong row among many."""
    y = softmax(x, dim, "online")
    if y.dim() == 0 or y.numel() == 0:
        return y
    xr = x.float().movedim(dim, -1)
    total = torch.exp(xr - xr.amax(-1, keepdim=True)).sum(-1).reshape(-1, 1)
    rows = y.movedim(dim, -1)                       # a view of y: the copy below lands in y
    wrong = rows.reshape(-1, rows.shape[-1]).clone()
    r = torch.arange(1, wrong.shape[0], BUG_ROWS, device=y.device)
    wrong[r] = (wrong[r].float() * total[r] / (total[r] + 1)).to(y.dtype)
    rows.copy_(wrong.view(rows.shape))
    return y


def _row_sram_impl(x: torch.Tensor, dim: int) -> torch.Tensor:
    return softmax(x, dim, "row_sram")


def _online_impl(x: torch.Tensor, dim: int) -> torch.Tensor:
    return softmax(x, dim, "online")


def op(version: str = "online"):
    """torch.ops.cvt_triton.softmax_row_sram / softmax_online(x, dim) (registered on first call)."""
    if version == "row_sram":
        return _common.register_op("softmax_row_sram", _row_sram_impl, derivative="softmax")
    if version == "online":
        return _common.register_op("softmax_online", _online_impl, derivative="softmax")
    raise ValueError(f"triton_softmax: version must be 'row_sram' or 'online', got {version!r}")
