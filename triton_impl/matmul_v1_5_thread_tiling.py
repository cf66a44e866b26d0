"""Triton twin of GPU matmul v1.5, thread tiling: each "thread" computes a V x V block of C,
row by row.

  idea      give each thread more output so that a value it loads serves more than one
            product. A thread owns rows r0..r0+V-1 and columns c0..c0+V-1 of C; for each of
            its rows it walks k once, loads A[row][k] ONCE and uses it for all V columns;
            B[k][col] is still loaded once per output.
  change    from v1: the program's tensors gain a thread axis. A thread is no longer one
            element but one (ty, tx) position of a [T, T] grid, and its V outputs of the
            current row are the last axis of a [T, T, V] tensor.
  mapping   lecture (CUDA)                      this file (Triton)
            block of T x T threads              one program: a (T*V) x (T*V) tile of C
            thread (ty, tx)                     position [ty, tx] of [T, T] / [T, T, V] tensors
            c[x][y] (V*V registers)             for row x: acc[ty, tx, y]; the loop over the
                                                V rows is unrolled (tl.static_range), each row
                                                is stored when done (same stores, earlier)
            a = A[row][k] (1 load per thread)   a: [T, T] load, one element per thread
            B[k][c0+y] (V loads per thread)     b: [T, T, V] load
            V, T                                V, T from cuda/matmul_config.h
            blockIdx.x -> column block          tl.program_id(0) -> column block (same order)
            num_warps = T*T/32, the CUDA block's warps.
  traffic   counted as the CUDA threads issue them: a thread whose block starts inside C
            loads, per valid row and k, one value of A, and per valid (row, column) one of B:
              global loads  = M*K*ceil(N/V) + M*N*K elements   (lecture: N^3/V + N^3)
              global stores = M * N
              FMAs          = ceil(M/TV)*ceil(N/TV) * (TV)^2 * K (the whole program tile;
                              masked elements multiply zeros)
            The A term is the CUDA twin's exactly; the B term too. Where the compiler may
            depart: it chooses how the [T, T, V] elements map to its threads (it will
            likely give each thread the V contiguous columns, as CUDA does, because that
            makes the B load vectorizable), and identical A pointers held by one thread
            may be merged into one load.
  measured  (H100, SASS for sm_90, docs/performance/ladder.md) as predicted for B: a thread
            owns its V = 4 neighbour columns and loads them with one 16-byte LDG.E.128, so 2
            load instructions per k replace the model's 1 + V = 5 (issued/model 0.40). Not
            predicted: lanes 0-15 of a warp walk 16 ROWS (CUDA's walk 16 columns), so each A
            load gathers 16 cache lines where CUDA's touches 2; per FFMA it touches 1.7x the
            distinct lines, and the kernel runs 1.9x slower than its CUDA twin. ncu confirms
            where the time goes: both twins are bound by L1's data pipe (busy 93% for CUDA,
            97% here), and this twin needs 2.0x the L1 data wavefronts.
  precond.  float32 (precision "fp32": fp32 FFMA, no tensor cores); any M, N, K >= 0;
            any strides (made row-major by the wrapper, as the CUDA op does);
            M <= 65535 * T * V (grid axis 1; the CUDA launcher folds past it).
  params    V = CVT_V1_5_V, T = CVT_V1_5_T (cuda/matmul_config.h, read, never copied).
  run       python -m bench check --kernels 'triton_v1.5*' --shapes 1000x999x37
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles

NAME = "triton_v1.5_thread_tiling"


@triton.jit
def matmul_v1_5_thread_tiling_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (M x K), B (K x N), C (M x N)
    M, N, K,                                  # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # strides, in elements
    V: tl.constexpr,                          # each thread computes V x V outputs
    T: tl.constexpr,                          # T x T threads per block
):
    pid_n = tl.program_id(0).to(tl.int64)     # blockIdx.x: column block (as the CUDA twin)
    pid_m = tl.program_id(1).to(tl.int64)     # blockIdx.y: row block
    ty = tl.arange(0, T)                      # threadIdx.y of each thread
    tx = tl.arange(0, T)                      # threadIdx.x
    y = tl.arange(0, V)                       # the V columns of one thread

    r0 = pid_m * (T * V) + ty * V                 # [T]: first row of each thread (i32 ok: < T V)
    c0 = pid_n * (T * V) + tx * V                 # [T]: first column (i32 ok: < T V)
    cols = c0[:, None] + y[None, :]                           # [T, V]: a thread's columns
    cols3 = tl.broadcast_to(cols[None, :, :], (T, T, V))      # [ty, tx, y]
    # "if (r0 >= M || c0 >= N) return": a thread whose block starts outside C does nothing.
    alive = (r0[:, None] < M) & (c0[None, :] < N)             # [T, T]

    for x in tl.static_range(V):              # one row of each thread's block at a time
        row = r0 + x                                          # [T]
        row_ok = alive & (row[:, None] < M)                   # [T, T]: this row is in C
        out_ok = row_ok[:, :, None] & (cols3 < N)             # [T, T, V]
        # Every thread holds its own pointer to A[row][0] ([T, T], repeats along tx) and to
        # its V columns of B ([T, T, V], repeats along ty).
        a_ptrs = tl.broadcast_to(a_ptr + row[:, None] * stride_am, (T, T))
        b_ptrs = b_ptr + cols3 * stride_bn
        acc = tl.zeros((T, T, V), dtype=tl.float32)           # c[x][0..V-1] of every thread
        for k in range(0, K):
            a = tl.load(a_ptrs, mask=row_ok, other=0.0)       # A[row][k]: loaded once ...
            b = tl.load(b_ptrs, mask=out_ok, other=0.0)       # B[k][c0+y]: once per output
            acc = tl.fma(a[:, :, None], b, acc)               # ... and used V times
            a_ptrs += stride_ak
            b_ptrs += stride_bk
        c_ptrs = c_ptr + row[:, None, None] * stride_cm + cols3 * stride_cn
        tl.store(c_ptrs, acc, mask=out_ok)


def params() -> dict[str, int]:
    """The CUDA twin's tile parameters (cuda/matmul_config.h), and the launch they imply."""
    return tiles.v1_5_thread_tiling()


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B in float32, with the tile of params()."""
    return _matmul(a, b)


def _matmul(a: torch.Tensor, b: torch.Tensor, *, tile: dict | None = None) -> torch.Tensor:
    """matmul with a tile forced, so that tests cross every tile edge on small shapes (the
    product takes params()): ``tile`` overrides params()."""
    p = tile or params()
    side = p["T"] * p["V"]
    return _common.ladder_matmul(
        NAME, matmul_v1_5_thread_tiling_kernel, a, b,
        lambda M, N: ((triton.cdiv(N, side), triton.cdiv(M, side)), f"M = {M}"),
        V=p["V"], T=p["T"], num_warps=p.get("num_warps", 4))


def _op_impl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a, b)


def op():
    """torch.ops.cvt_triton.matmul_v1_5_thread_tiling (registered on first call)."""
    return _common.register_op("matmul_v1_5_thread_tiling", _op_impl, derivative="matmul")
