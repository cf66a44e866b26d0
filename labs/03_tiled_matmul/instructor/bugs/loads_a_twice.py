"""Planted bug: loads the tile of A twice per step: the right product, but more loads than the tiling needs."""
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
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :],
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :],
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        a2 = tl.load(a_ptr + rows[:, None] * K + ks[None, :],
                     mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        acc += tl.dot((a + a2) * 0.5, b, input_precision="ieee")
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
