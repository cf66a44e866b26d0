"""Lab 3: tiled matmul, C = A @ B in float32, graded on its global loads.

A program computes a BLOCK_M x BLOCK_N tile of C. It walks k in steps of BLOCK_K: it loads a
BLOCK_M x BLOCK_K tile of A and a BLOCK_K x BLOCK_N tile of B, once each, and multiplies
them with tl.dot. Every element of A is then loaded ceil(N / BLOCK_N) times in all, every
element of B ceil(M / BLOCK_M) times: 2 N^3 / L loads for N x N x N and L x L tiles, where
the lecture's v1 loads 2 N^3.

Fill in the TODOs, then grade it:

    cvt-bench grade 3 starter.py

Read first: the lecture notes on v2 and v3 (register and shared-memory tiling), and this
suite's twin of v3, triton_impl/matmul_v3_smem_tiling.py (do not call it here).
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
import triton                                       # noqa: E402
import triton.language as tl                        # noqa: E402

BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 16      # an L x L tile of C, k in steps of S


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # TODO 1: walk k in steps of BLOCK_K: for k0 in range(0, K, BLOCK_K):
    # TODO 2:   the BLOCK_M x BLOCK_K tile of A and the BLOCK_K x BLOCK_N tile of B, masked
    #           at every edge (other=0.0), each loaded once per step
    # TODO 3:   acc += tl.dot(a, b, input_precision="ieee")   (float32 FFMA, not TF32)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    if M and N:
        grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(M, BLOCK_M))
        matmul_kernel[grid](a, b, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                            BLOCK_K=BLOCK_K)
    return c
