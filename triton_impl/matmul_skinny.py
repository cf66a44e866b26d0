"""Skinny matmul without tl.dot: M or N at most 16, the big operand streamed once through
FMAs. The Triton twin of cuda_skinny (cuda/matmul_skinny.cu).

  idea      with one side of C at most R = 16 wide, the product does 2*R FLOPs per value of
            the big operand: 8 FLOPs/byte in fp32 at R = 16, below the FFMA ridge, so its
            time is the time to read that operand once. triton_split_k runs such shapes on
            tl.dot's smallest tile, 16 rows, and in fp32 ("ieee") tl.dot is FFMA from
            shared memory: the H200 counted 58.8 M bank conflicts in 75.6 M shared-memory
            wavefronts at 8192 x 16 x 8192 (results/sweeps/h200_skinny_counters), and ran
            the N-small shapes at 15-20% of their limit. Here a program multiplies in
            registers and never stages the big operand.
  design    the kernel sees C' = A' B' with the small side as its R rows: A' = A and B' = B
            where M is small; where N is (N < M), C^T = B^T A^T through strides, no copy,
            so that the big operand A is B' read along k. A program owns BLOCK_N columns of
            C' and all of its R rows (BLOCK_R, R rounded up to a power of two). Per step it
            loads A' as an [R, KL, V, 1] block and B' as [1, KL, V, BLOCK_N], both already
            in the shape of their broadcast (k = kl * V + v), multiplies them, sums the V
            axis, and adds the result into float32 accumulators acc[R, KL, BLOCK_N]. The sum
            over the KL runs comes once, after the loop.
              V     where k is the big operand's contiguous side ("rows"), a lane's 16-byte
                    vector holds V = 4 values of k, so the V sum is FMAs inside one thread,
                    and V divides the accumulators: registers bound the programs per SM, and
                    with them the bytes in flight (tiles.SKINNY_FMA has the counts). Where k
                    is strided ("cols", M small), V = 1: the vectors run along the columns.
              dot   the sum over k, done inside the loop on operands broadcast from 2-D
                    loads, is the pattern Triton rewrites into a tl.dot, at tf32 for fp32
                    operands (seen at R = 16); loaded in their 4-D shapes they are not
                    broadcasts of a 2-D value. tests/cpu/test_matmul_skinny_ptx.py compiles
                    the kernel for sm_90 and fails on a dot, or on A' loaded one value at a
                    time.
  splits    the k loop is split over grid axis 1 as triton_split_k splits it (its `plan`:
            about PROGRAMS_PER_SM programs per SM, the partials' round trip within the
            compulsory bytes, no split empty) and its `sum_splits` adds the float32 partial
            tiles in split order: the same bits on every run, no atomics. One split stores
            C itself.
  traffic   global loads  the big operand: K*N' values, each once (N' its output side)
                          the small one: R*K per program of a split's range, tiles*R*K in
                          all (L2 hits after the first)
            global stores C: R*N'; with S > 1 splits, the workspace S*R*N' float32, written
                          and read once more by the sum
            FMAs          BLOCK_R per value of the big operand (R rounded up)
  precond.  fp32, tf32, fp16, bf16 operands, float32 multiply-adds at every precision (the
            FMAs are the FFMA path; tf32 is not rounded to, as cuda_skinny does not);
            M <= 16 or N <= 16, else a ValueError naming the op and the shape; any K >= 0;
            any strides and offsets, 64-bit offsets. Vector loads where the big operand's
            contiguous side and its strides allow them (Triton's divisibility by 16).
  params    tiles.SKINNY_FMA: (BLOCK_K, BLOCK_N, V, warps) per side and R, from the tile
            sweep of docs/performance/shapes_probe.py --sweep-skinny.
  run       python -m bench check --kernels triton_auto --suite shapes:skinny --precision fp32
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles
from triton_impl.matmul_split_k import plan, sum_splits

NAME = "triton_skinny"
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
MAX_R = tiles.SKINNY_MAX_R   # the small side at most this


@triton.jit
def matmul_skinny_kernel(
    a_ptr, b_ptr, c_ptr, w_ptr,              # A' (R x K), B' (K x N), C' (R x N), workspace
    R, N, K, steps,                          # sizes; k tiles per split
    stride_ar, stride_ak, stride_bk, stride_bn, stride_cr, stride_cn,
    BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr,
    V: tl.constexpr,                          # k values per run summed inside the loop
    SPLIT: tl.constexpr,                      # S > 1: partial tiles to the workspace
    K_WIDE: tl.constexpr,                     # near_int32_limit(K): an int64 k loop
):
    KL: tl.constexpr = BLOCK_K // V           # k = kl * V + v: runs of V values of k
    tile = tl.program_id(0)
    split = tl.program_id(1)
    rows = tl.arange(0, BLOCK_R).to(tl.int64)            # all of C's small side
    cols = tile.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    kk = tl.arange(0, KL)[:, None] * V + tl.arange(0, V)[None, :]   # [KL, V]; i32 ok: < BLOCK_K

    # This split's k range: [start, stop), whole BLOCK_K steps, the last split's cut at K.
    start = split.to(tl.int64) * steps * BLOCK_K
    stop = tl.minimum(start + steps * BLOCK_K, K)
    k64 = start + kk.to(tl.int64)
    # Both operands addressed in the shape of their broadcast: [R, KL, V, 1], [1, KL, V, N].
    a_ptrs = a_ptr + rows[:, None, None, None] * stride_ar + k64[None, :, :, None] * stride_ak
    b_ptrs = b_ptr + k64[None, :, :, None] * stride_bk + cols[None, None, None, :] * stride_bn
    a_step = BLOCK_K * tl.cast(stride_ak, tl.int64)
    b_step = BLOCK_K * tl.cast(stride_bk, tl.int64)
    row_ok = rows[:, None, None, None] < R
    col_ok = cols[None, None, None, :] < N

    acc = tl.zeros((BLOCK_R, KL, BLOCK_N), dtype=tl.float32)
    first = start.to(tl.int32)               # i32 ok: K < 2^31 - STEP_BOUND unless K_WIDE
    last = stop.to(tl.int32)
    if K_WIDE:                               # then an int64 loop counter
        first = start
        last = stop
    for k0 in range(first, last, BLOCK_K):   # i32 ok: last <= K < 2^31 - STEP_BOUND, else K_WIDE
        k_ok = ((k0 + kk) < last)[None, :, :, None]
        a = tl.load(a_ptrs, mask=row_ok & k_ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptrs, mask=k_ok & col_ok, other=0.0).to(tl.float32)
        acc += tl.sum(a * b, axis=2)         # a run of V: FMAs within one thread (see V)
        a_ptrs += a_step
        b_ptrs += b_step
    c = tl.sum(acc, axis=1)                  # [BLOCK_R, BLOCK_N]: the KL runs, once

    ok = (rows[:, None] < R) & (cols[None, :] < N)
    if SPLIT:   # W[split, r, n], contiguous, float32
        w_ptrs = w_ptr + (split.to(tl.int64) * R + rows[:, None]) * N + cols[None, :]
        tl.store(w_ptrs, c, mask=ok)
    else:
        c_ptrs = c_ptr + rows[:, None] * stride_cr + cols[None, :] * stride_cn
        tl.store(c_ptrs, c.to(c_ptr.dtype.element_ty), mask=ok)


def params(side: str, r: int) -> dict[str, int]:
    """The tile for a small side of r rows: tiles.skinny's entry for `side` ("rows": N
    small, the big operand read along k; "cols": M small, read along its columns)."""
    return tiles.skinny(side, r, _common.interpreting())


def matmul(a: torch.Tensor, b: torch.Tensor, precision: str = "fp32") -> torch.Tensor:
    """C = A @ B for M or N at most 16, by FMAs (header); A and B used with their strides."""
    return _matmul(a, b, precision)


def _matmul(a: torch.Tensor, b: torch.Tensor, precision: str, *,
            tile: dict | None = None, splits: int | None = None) -> torch.Tensor:
    """matmul with a tile or a number of splits forced: ``tile`` for the tile sweep
    (docs/performance/shapes_probe.py), ``splits`` for tests of the sum over splits."""
    _common.check_precision(NAME, precision, PRECISIONS)
    M, N, K = _common.check_matmul_2d(NAME, a, b, precision)
    if min(M, N) > MAX_R:
        raise ValueError(f"{NAME}: takes M or N <= {MAX_R}, got M = {M}, N = {N} "
                         f"(triton_split_k or triton_auto run any shape)")
    trivial = _common.trivial_result(a, M, N, K)
    if trivial is not None:
        return trivial
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if N < M:                  # C^T = B^T A^T: R = N rows, the big operand A read along k
        _skinny(b.t(), a.t(), c.t(), "rows", tile, splits)
    else:
        _skinny(a, b, c, "cols", tile, splits)
    return c


def _skinny(a, b, c, side, tile, splits) -> None:
    R, K = a.shape
    N = b.shape[1]
    p = tile or params(side, R)
    block_r = triton.next_power_of_2(R)
    tiles_n = triton.cdiv(N, p["BLOCK_N"])
    k_tiles = triton.cdiv(K, p["BLOCK_K"])
    s, steps = plan(a, b, tiles_n, k_tiles, p["programs_per_sm"], False, splits)
    _common.check_grid(NAME, (tiles_n, s), "the splits")
    w = (torch.empty((s, R, N), dtype=torch.float32, device=a.device) if s > 1 else c)
    _common.launch(matmul_skinny_kernel, (tiles_n, s),
                   a, b, c, w, R, N, K, steps,
                   a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                   BLOCK_R=block_r, BLOCK_K=p["BLOCK_K"], BLOCK_N=p["BLOCK_N"], V=p["V"],
                   SPLIT=s > 1, K_WIDE=_common.near_int32_limit(K),
                   num_warps=p["num_warps"], num_stages=p["num_stages"])
    if s > 1:
        sum_splits(w, c)


def _op_impl(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    return matmul(a, b, precision)


def _auto(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    """The backward's products, dA = g Bᵀ and dB = Aᵀ g, by triton_auto: dB of a skinny
    product is K x N, not skinny, so this op would refuse it (bindings/derivatives.py)."""
    from triton_impl import matmul_auto

    return matmul_auto.matmul(a, b, precision)


def op():
    """torch.ops.cvt_triton.matmul_skinny(a, b, precision) (registered on first call)."""
    return _common.register_op("matmul_skinny", _op_impl, derivative="dispatched_matmul",
                               dispatch=_auto)
