"""Triton twin of GPU matmul v1, naive: one (compiler) thread per element of C.

  idea      the lecture's first kernel: C[x][y] = dot(row x of A, column y of B), walked
            one k at a time. Nothing is reused: every product loads both of its factors.
  mapping   lecture (CUDA)                      this file (Triton)
            block of BLOCK x BLOCK threads      one program: a BLOCK x BLOCK tile of C
            thread (x, y)                       element [i, j] of the program's tensors;
                                                num_warps = BLOCK*BLOCK/32, so the compiler
                                                gives each of its threads exactly one element
            result (a register)                 acc[i, j]
            A[x][k], B[k][y] (one load each)    a[i, j], b[i, j]: [BLOCK, BLOCK] loads whose
                                                pointers repeat along a row (A) or column (B)
            blockIdx.x -> row block             tl.program_id(0) -> row block (same launch order)
  traffic   the program loads, per k, one A value and one B value for every in-range
            element, exactly as the threads do (masked elements request nothing):
              global loads  = 2 * M * N * K elements   (lecture: 2N^3; CUDA twin: the same)
              global stores = M * N
              FMAs          = ceil(M/B)*ceil(N/B) * B*B * K (masked elements multiply zeros,
                              where the CUDA threads outside C return early)
            Where the compiler may depart: a [BLOCK, BLOCK] pointer tensor that repeats
            along a row is still one load per element (the mask is 2-D, so the load cannot
            be hoisted to a [BLOCK, 1] load); duplicates are merged in L1, as in CUDA.
  v1 coalesced has no Triton twin, and cannot have one. In CUDA the programmer chooses
            which thread owns which element, so v1 naive (threadIdx.x -> row) can be
            written and is slow. In Triton the compiler chooses the thread <-> element
            layout: its coalescing pass orders each load's layout by the pointers'
            contiguity, so neighbouring threads always get neighbouring columns of B and C.
            Writing the tile transposed ([cols, rows]) changes nothing: the pass reads the
            addresses, not the tensor's shape. So this twin runs with the *coalesced*
            mapping; compare it with cuda_v1_coalesced for the language, and with
            cuda_v1_naive for what Triton's layout choice saves.
  precond.  float32 (precision "fp32": fp32 FFMA, no tensor cores); any M, N, K >= 0;
            any strides (made row-major by the wrapper, as the CUDA op does);
            N <= 65535 * BLOCK (grid axis 1; the CUDA launcher folds past it).
  params    BLOCK = CVT_V1_BLOCK from cuda/matmul_config.h (read, never copied).
  run       python -m bench check --kernels triton_v1_naive --shapes 1000x999x37
            TRITON_INTERPRET=1 python -m bench check --kernels triton_v1_naive --shapes 17x13x7
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles

NAME = "triton_v1_naive"


@triton.jit
def matmul_v1_naive_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (M x K), B (K x N), C (M x N)
    M, N, K,                                  # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # strides, in elements
    BLOCK: tl.constexpr,                      # the CUDA block is BLOCK x BLOCK threads
):
    # int64 before any multiplication: row * stride_am passes 2^31 for large matrices.
    pid_m = tl.program_id(0).to(tl.int64)     # like blockIdx.x in the CUDA twin: a row block
    pid_n = tl.program_id(1).to(tl.int64)
    rows = pid_m * BLOCK + tl.arange(0, BLOCK)
    cols = pid_n * BLOCK + tl.arange(0, BLOCK)

    # One "thread" per element: every element of these [BLOCK, BLOCK] tensors holds its own
    # pointer, as every CUDA thread computes its own address. Pointers into A repeat along
    # a row, pointers into B repeat down a column, but each element still loads.
    valid = (rows[:, None] < M) & (cols[None, :] < N)
    a_ptrs = tl.broadcast_to(a_ptr + rows[:, None] * stride_am, (BLOCK, BLOCK))
    b_ptrs = tl.broadcast_to(b_ptr + cols[None, :] * stride_bn, (BLOCK, BLOCK))

    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)    # "float result = 0" in every thread
    for k in range(0, K):                                # the CUDA loop, one k at a time
        a = tl.load(a_ptrs, mask=valid, other=0.0)       # A[x][k], once per element
        b = tl.load(b_ptrs, mask=valid, other=0.0)       # B[k][y], once per element
        acc = tl.fma(a, b, acc)                          # result += a * b: one FFMA
        a_ptrs += stride_ak                              # pointer steps stay 64-bit
        b_ptrs += stride_bk

    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=valid)


def params() -> dict[str, int]:
    """The CUDA twin's tile parameters (cuda/matmul_config.h), and the launch they imply."""
    return tiles.v1_naive()


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B in float32, with the tile of params()."""
    return _matmul(a, b)


def _matmul(a: torch.Tensor, b: torch.Tensor, *, tile: dict | None = None) -> torch.Tensor:
    """matmul with a tile forced, so that tests cross every tile edge on small shapes (the
    product takes params()): ``tile`` overrides params()."""
    p = tile or params()
    blk = p["BLOCK"]
    return _common.ladder_matmul(
        NAME, matmul_v1_naive_kernel, a, b,
        lambda M, N: ((triton.cdiv(M, blk), triton.cdiv(N, blk)), f"N = {N}"),
        BLOCK=blk, num_warps=p.get("num_warps", 4))


def _op_impl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a, b)


def op():
    """torch.ops.cvt_triton.matmul_v1_naive (registered on first call)."""
    return _common.register_op("matmul_v1_naive", _op_impl, derivative="matmul")
