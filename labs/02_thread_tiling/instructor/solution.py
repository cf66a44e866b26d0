"""Lab 2, the reference solution: every test passes (tests/cpu/test_labs.py checks it)."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
import triton                                       # noqa: E402
import triton.language as tl                        # noqa: E402

V = 4            # outputs per program, along a row of C
BLOCK_K = 32     # values of k per step


@triton.jit
def matmul_strip_kernel(a_ptr, b_ptr, c_ptr, M, N, K, V: tl.constexpr, BLOCK_K: tl.constexpr):
    row = tl.program_id(1)
    cols = tl.program_id(0) * V + tl.arange(0, V)
    acc = tl.zeros((V,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + row * K + ks, mask=ks < K, other=0.0)     # once for V outputs
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :],
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.sum(a[:, None] * b, 0)
    tl.store(c_ptr + row * N + cols, acc, mask=cols < N)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    if M and N:
        matmul_strip_kernel[(triton.cdiv(N, V), M)](a, b, c, M, N, K, V=V, BLOCK_K=BLOCK_K)
    return c
