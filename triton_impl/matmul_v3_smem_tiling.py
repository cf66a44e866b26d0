"""Triton twin of GPU matmul v3, shared-memory + register tiling.

  idea      two levels of tiling. A program computes an L x L tile of C. It walks k in
            steps of S: it loads an L x S tile of A and an S x L tile of B, and multiplies
            them with tl.dot. The CUDA twin's cooperative fetch into shared memory, the
            barriers, and every thread's V x V outer products out of shared memory are
            what the compiler generates for that one line.
  change    from v2: the program loads 2-D tiles (a block of k at once) instead of one
            column of A and one row of B, and hands them to tl.dot instead of doing the
            outer products itself. input_precision="ieee" keeps it on FFMA like the CUDA
            twin (Triton's default for float32 is TF32 on tensor cores).
  mapping   lecture (CUDA)                      this file (Triton)
            block of (L/V)^2 threads            one program, num_warps = (L/V)^2 / 32
            sA[S][L], sB[S][L] + cooperative    a = tl.load(L x S tile), b = tl.load(S x L);
              fetch + 2 __syncthreads             tl.dot converts them to its operand layout
                                                  through shared memory, with the barriers
            thread's V x V from shared memory   the FMA dot: each thread owns
                                                  L*L/(32*num_warps) = V*V accumulators
                                                  (shape and smem layout are the compiler's)
            L, S, V                             BLOCK_M = BLOCK_N = L, BLOCK_K = S (see below)
            blockIdx.x -> column block          tl.program_id(0) -> column block (same order)
            no pipelining                       num_stages=1 (the pipelined rung comes later)
  S < 16    tl.dot on NVIDIA GPUs needs K >= 16 (the backend's min_dot_size), so the twin
            stages max(S, 16) columns per step: with S = 8 one Triton step is two CUDA
            steps under one pair of barriers. The global-load count does not depend on S;
            only the zero-padded tail (k_padded) and the number of barriers change.
  traffic   global loads (what the program's loads request; masked elements request
            nothing):
              A: each of the ceil(N/L) program columns reads all of A   = M*K*ceil(N/L)
              B: each of the ceil(M/L) program rows reads all of B      = N*K*ceil(M/L)
              total                                   (lecture: 2N^3/L; CUDA twin: same)
            shared loads, if the compiler's per-thread tile is V x V like the CUDA one:
              ceil(M/L)*ceil(N/L) * (L/V)^2 * 2V * S*ceil(K/S)   (lecture: 2N^3/V)
            global stores = M * N;  FMAs = ceil(M/L)*ceil(N/L) * L*L * S*ceil(K/S)
            Where the compiler departs: it picks the per-thread tile's shape and the
            shared-memory layout (swizzled, no padding), and may vectorize the tile loads.
  precond.  float32 (precision "fp32": fp32 FFMA, no tensor cores); any M, N, K >= 0;
            any strides (made row-major by the wrapper, as the CUDA op does);
            M <= 65535 * L (grid axis 1; the CUDA launcher folds past it).
  params    L = CVT_V3_L, S = CVT_V3_S, V = CVT_V3_V (cuda/matmul_config.h).
  run       python -m bench check --kernels 'triton_v3*' --shapes 1000x999x37
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles

NAME = "triton_v3_smem_tiling"


@triton.jit
def matmul_v3_smem_tiling_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (M x K), B (K x N), C (M x N)
    M, N, K,                                  # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # strides, in elements
    L: tl.constexpr,                          # the program's tile of C is L x L
    S: tl.constexpr,                          # k step: tiles of A are L x S, of B S x L
    K_WIDE: tl.constexpr,                     # near_int32_limit(K): an int64 k loop
):
    pid_n = tl.program_id(0).to(tl.int64)     # blockIdx.x: column block (as the CUDA twin)
    pid_m = tl.program_id(1).to(tl.int64)     # blockIdx.y: row block
    rows = pid_m * L + tl.arange(0, L)
    cols = pid_n * L + tl.arange(0, L)
    ks = tl.arange(0, S)
    row_ok = rows < M
    col_ok = cols < N

    # Offsets in int64: ks * stride_bk and S * stride_bk pass 2^31 for a wide B (N > 2^27).
    k64 = ks.to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + k64[None, :] * stride_ak   # A[rows, 0:S]
    b_ptrs = b_ptr + k64[:, None] * stride_bk + cols[None, :] * stride_bn   # B[0:S, cols]
    a_step = S * tl.cast(stride_ak, tl.int64)    # tl.cast: a stride of 1 arrives as a constexpr
    b_step = S * tl.cast(stride_bk, tl.int64)
    acc = tl.zeros((L, L), dtype=tl.float32)
    stop = K
    if K_WIDE:                                # K within a tile of 2^31: an int64 bound
        stop = tl.cast(K, tl.int64)           # gives the loop an int64 counter
    for k0 in range(0, stop, S):              # i32 ok: K + S < 2^31 unless K_WIDE
        k_ok = (k0 + ks) < K
        # The fetch: zero outside the matrix, as the CUDA twin fills its shared tiles.
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        # Everything between the two __syncthreads of the CUDA twin, and the outer products:
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += a_step
        b_ptrs += b_step

    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=row_ok[:, None] & col_ok[None, :])


def params() -> dict[str, int]:
    """The CUDA twin's tile parameters, S raised to tl.dot's minimum (see the header)."""
    return tiles.v3_smem_tiling()


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B in float32, with the tile of params()."""
    return _matmul(a, b)


def _matmul(a: torch.Tensor, b: torch.Tensor, *, tile: dict | None = None) -> torch.Tensor:
    """matmul with a tile forced, so that tests cross every tile edge on small shapes (the
    product takes params()): ``tile`` overrides params()."""
    p = tile or params()
    return _common.ladder_matmul(
        NAME, matmul_v3_smem_tiling_kernel, a, b,
        lambda M, N: ((triton.cdiv(N, p["L"]), triton.cdiv(M, p["L"])), f"M = {M}"),
        L=p["L"], S=p["S"], k_steps=True, num_warps=p.get("num_warps", 4))


def _op_impl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a, b)


def op():
    """torch.ops.cvt_triton.matmul_v3_smem_tiling (registered on first call)."""
    return _common.register_op("matmul_v3_smem_tiling", _op_impl, derivative="matmul")
