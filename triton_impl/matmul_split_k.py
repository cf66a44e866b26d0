"""Split-K tl.dot matmul: the k loop shared out over programs, for outputs too small to
fill the GPU (skinny and few-tile shapes).

  idea      a program per output tile leaves SMs idle when there are fewer tiles than
            SMs: 128 x 128 x 131072 is one 128-tile for 132 SMs, and 16 x 8192 x 8192
            (a decoder's 16 tokens through a 8192-wide layer) is 64 tiles of 16 x 128
            whose k loops each read 2 MiB of B. Give every tile S programs, each a
            contiguous 1/S of the k range (whole BLOCK_K steps): S times the programs, each
            1/S of the loop. The S partial tiles are summed afterwards.
  change    from triton_grouped: grid axis 1 is the split s; program (t, s) runs k tiles
            [s*steps, (s+1)*steps) of tile t. With S = 1 it stores C as triton_grouped does;
            with S > 1 it stores its float32 partial tile into a workspace W[s, m, n] and a
            second kernel sums W over s, in split order (the same bits every run; no atomics),
            and stores C in its dtype. Skinny shapes take a 16-row tile (tl.dot's smallest);
            a shape whose N is the small one (N <= 16 < M) runs as C^T = B^T A^T through
            strides, with no copy: the big operand is read once either way.
  splits    S = min(slots / tiles, k_tiles // MIN_STEPS, the most whose partial tiles'
            round trip, S*M*N*8 bytes, stays within the compulsory bytes / WORKSPACE_SHARE:
            L2 holds most of it), at least 1, slots = programs per SM x SMs (the tile's,
            tiles.SPLIT_K); then steps = ceil(k_tiles / S) and S = ceil(k_tiles / steps),
            so that no split is empty. slots / tiles rounds down for the few-tile tile, as
            cuda_split_k's split_count does: compute-bound programs past the slots run a
            second round (512 x 512 x 16384 in bf16: 32 tiles of 64 x 128 and 264 slots,
            9 splits were 288 programs, two rounds for 1.09 rounds' work; 8 are 256, one).
            It rounds up for the skinny tile, whose programs are bound by memory: more of
            them, more loads in flight. H200 (132 SMs), bf16: 16 x 8192 x 8192 is 128 tiles
            of 16 x 64 and 64 k tiles of 128 -> S = 3, steps = 22 (384 programs); 128 x 128
            x 131072 is 2 tiles of 64 x 128 and 2048 k tiles of 64 -> S = 128, steps = 16
            (256 programs).
  traffic   global loads  A: M*K*ceil(N/BLOCK_N)   B: N*K*ceil(M/BLOCK_M)   (as triton_grouped:
                          the splits share out the k loop, each element of a tile's strips once)
            workspace     S*M*N float32 written, and read once by the sum (S > 1 only)
            global stores M*N
            Skinny (M <= 16 = BLOCK_M): B is read once, A (M x K, small) ceil(N/BLOCK_N)
            times, mostly from L2: the compulsory bytes K*N of B bound it (copy bandwidth).
  precond.  fp32 (ieee), tf32, fp16, bf16 as triton_grouped; any M, N, K >= 0, any strides;
            float32 accumulation, the partial sums added in float32, C rounded once.
  run       python -m bench check --kernels triton_auto --suite shapes --precision bf16
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles
from triton_impl._common import tile_count    # by name: torch.compile copies it

NAME = "triton_split_k"
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")

SKINNY = tiles.SPLIT_K_SKINNY   # M or N at most this: the 16-row tile (tl.dot's smallest M)
PROGRAMS_PER_SM = 2  # the splits aim at this many programs per SM
MIN_STEPS = 4        # k tiles per split at least: fewer, and the partial sums cost more
WORKSPACE_SHARE = 1  # the partial tiles' round trip at most the compulsory bytes


@triton.jit
def matmul_split_k_kernel(
    a_ptr, b_ptr, c_ptr, w_ptr,              # A (M x K), B (K x N), C (M x N), workspace
    M, N, K, steps,                          # sizes; k tiles per split
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
    SPLIT: tl.constexpr,                      # S > 1: partial tiles to the workspace
    K_WIDE: tl.constexpr,                     # near_int32_limit(K): an int64 k loop
):
    tile = tl.program_id(0)
    split = tl.program_id(1)
    num_pid_n = tile_count(N, BLOCK_N)
    pid_m = tile // num_pid_n
    pid_n = tile % num_pid_n

    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    col_ok = cols < N

    # This split's k range: [start, stop), whole BLOCK_K steps, the last split's cut at K.
    start = split.to(tl.int64) * steps * BLOCK_K
    stop = tl.minimum(start + steps * BLOCK_K, K)
    k64 = start + ks.to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + k64[None, :] * stride_ak
    b_ptrs = b_ptr + k64[:, None] * stride_bk + cols[None, :] * stride_bn
    a_step = BLOCK_K * tl.cast(stride_ak, tl.int64)
    b_step = BLOCK_K * tl.cast(stride_bk, tl.int64)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    first = start.to(tl.int32)               # i32 ok: K < 2^31 - STEP_BOUND unless K_WIDE
    last = stop.to(tl.int32)
    if K_WIDE:                               # then an int64 loop counter
        first = start
        last = stop
    for k0 in range(first, last, BLOCK_K):   # i32 ok: last <= K < 2^31 - STEP_BOUND, else K_WIDE
        k_ok = (k0 + ks) < last
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += a_step
        b_ptrs += b_step

    ok = row_ok[:, None] & col_ok[None, :]
    if SPLIT:   # W[split, m, n], contiguous, float32
        w_ptrs = w_ptr + (split.to(tl.int64) * M + rows[:, None]) * N + cols[None, :]
        tl.store(w_ptrs, acc, mask=ok)
    else:
        c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=ok)


@triton.jit
def split_k_sum_kernel(w_ptr, c_ptr, M, N, splits, stride_cm, stride_cn,
                       BLOCK: tl.constexpr, BLOCK_S: tl.constexpr):
    """C[m, n] = sum over s of W[s, m, n], rounded once to C's dtype. Each program sums
    BLOCK outputs, BLOCK_S splits at a time ([BLOCK_S, BLOCK] loads in flight, then a sum
    along the splits: a fixed order, so the same bits on every run)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    size = tl.cast(M, tl.int64) * N
    ok = offs < size
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s0 in range(0, splits, BLOCK_S):     # i32 ok: splits <= k tiles < 2^31 / BLOCK_K
        ss = s0 + tl.arange(0, BLOCK_S)
        tile = tl.load(w_ptr + ss[:, None].to(tl.int64) * size + offs[None, :],
                       mask=(ss[:, None] < splits) & ok[None, :], other=0.0)
        acc += tl.sum(tile, axis=0)
    m = offs // N
    n = offs % N
    tl.store(c_ptr + m * stride_cm + n * stride_cn, acc.to(c_ptr.dtype.element_ty), mask=ok)


def is_skinny(M: int, N: int) -> bool:
    """M or N at most SKINNY: the shapes bound by reading the big operand once."""
    return min(M, N) <= SKINNY


def params(precision: str, M: int, N: int) -> dict[str, int]:
    """The tile for a shape: tiles.SPLIT_K's skinny tile (16 rows) where M or N <= 16,
    its few-tile tile otherwise, per precision (tiles.py says how they were chosen)."""
    return tiles.split_k(precision, M, N, _common.interpreting())


def splits_for(tiles_mn: int, k_tiles: int, sms: int, max_splits: int,
               programs_per_sm: int = PROGRAMS_PER_SM,
               whole_rounds: bool = False) -> tuple[int, int]:
    """(S, k tiles per split) for `tiles_mn` output tiles of `k_tiles` k steps on `sms`
    SMs, at most `max_splits`, by the rule of the header; no split is empty. whole_rounds:
    no more programs than the GPU holds at once (the few-tile case, see "splits")."""
    slots = programs_per_sm * sms
    want = slots // tiles_mn if whole_rounds else -(-slots // tiles_mn)
    s = max(1, min(want, k_tiles // MIN_STEPS, max_splits))
    steps = -(-k_tiles // s)
    return -(-k_tiles // steps), steps


def plan(a: torch.Tensor, b: torch.Tensor, tiles_mn: int, k_tiles: int,
         programs_per_sm: int, whole_rounds: bool, splits: int | None) -> tuple[int, int]:
    """(S, k tiles per split) for C = A B (M x K times K x N) in `tiles_mn` output tiles of
    `k_tiles` k steps: splits_for's rule on this GPU, the partial tiles' round trip capped
    at the compulsory bytes / WORKSPACE_SHARE (whole_rounds: see splits_for); or, where
    `splits` is not None, that many forced (the tests' _matmul), no split empty.
    Shared with triton_skinny (matmul_skinny.py)."""
    if splits is not None:
        steps = triton.cdiv(k_tiles, max(1, min(splits, k_tiles)))
        return triton.cdiv(k_tiles, steps), steps
    (M, K), N = a.shape, b.shape[1]
    compulsory = (M * K + K * N + M * N) * a.element_size()
    return splits_for(tiles_mn, k_tiles, _common.sm_count(a.device),
                      compulsory // (WORKSPACE_SHARE * 8 * M * N), programs_per_sm,
                      whole_rounds=whole_rounds)


def sum_splits(w: torch.Tensor, c: torch.Tensor) -> None:
    """C = the sum over s of the float32 partial tiles W[s] (S x M x N, contiguous), in
    split order, rounded once to C's dtype; C with any strides."""
    s, M, N = w.shape
    block = 256
    _common.launch(split_k_sum_kernel, (triton.cdiv(M * N, block),),
                   w, c, M, N, s, c.stride(0), c.stride(1), BLOCK=block, BLOCK_S=8,
                   num_warps=4)


def matmul(a: torch.Tensor, b: torch.Tensor, precision: str = "fp32") -> torch.Tensor:
    """C = A @ B at the given precision, the k loop split over programs (header); A and B
    used with their strides."""
    return _matmul(a, b, precision)


def _matmul(a: torch.Tensor, b: torch.Tensor, precision: str, *,
            tile: dict | None = None, splits: int | None = None) -> torch.Tensor:
    """matmul with a tile or a number of splits forced (the product takes params() and
    splits_for's): ``tile`` for the tile sweep (docs/performance/shapes_probe.py),
    ``splits`` so that tests reach the sum over splits on small shapes, and counts that
    splits_for does not pick."""
    _common.check_precision(NAME, precision, PRECISIONS)
    M, N, K = _common.check_matmul_2d(NAME, a, b, precision)
    trivial = _common.trivial_result(a, M, N, K)
    if trivial is not None:
        return trivial
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if N <= SKINNY < M:        # C^T = B^T A^T: the small dimension becomes the tile's 16 rows
        _split_k(b.t(), a.t(), c.t(), precision, tile, splits)
    else:
        _split_k(a, b, c, precision, tile, splits)
    return c


def _split_k(a, b, c, precision, tile, splits) -> None:
    M, K = a.shape
    N = b.shape[1]
    p = tile or params(precision, M, N)
    tiles_mn = triton.cdiv(M, p["BLOCK_M"]) * triton.cdiv(N, p["BLOCK_N"])
    k_tiles = triton.cdiv(K, p["BLOCK_K"])
    s, steps = plan(a, b, tiles_mn, k_tiles, p.get("programs_per_sm", PROGRAMS_PER_SM),
                    not is_skinny(M, N), splits)
    _common.check_grid(NAME, (tiles_mn, s), "the splits")
    w = (torch.empty((s, M, N), dtype=torch.float32, device=a.device) if s > 1 else c)
    _common.launch(matmul_split_k_kernel, (tiles_mn, s),
                   a, b, c, w, M, N, K, steps,
                   a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                   BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"], BLOCK_K=p["BLOCK_K"],
                   INPUT_PRECISION=_common.DOT_INPUT_PRECISION[precision],
                   SPLIT=s > 1, K_WIDE=_common.near_int32_limit(K),
                   num_warps=p.get("num_warps", 4), num_stages=p.get("num_stages", 3))
    if s > 1:
        sum_splits(w, c)


def _op_impl(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    return matmul(a, b, precision)


def op():
    """torch.ops.cvt_triton.matmul_split_k(a, b, precision) (registered on first call)."""
    return _common.register_op("matmul_split_k", _op_impl, derivative="matmul")
