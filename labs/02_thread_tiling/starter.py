"""Lab 2: thread tiling. C = A @ B in float32, each program computing V outputs of a row.

The lecture's v1 gives each thread one output: it walks k, loading A[row, k] and B[k, col]
for every product, 2 M N K loads in all. v1.5 gives a thread V outputs of a row: it loads
A[row, k] once and uses it for all V of them, so A's loads drop to M N K / V (B's stay M N K).
Here a program plays that thread: it owns V consecutive columns of one row of C.

Fill in the TODOs, then grade it:

    cvt-bench grade 2 starter.py

Read first: the lecture notes on v1, v1 coalesced and v1.5 (thread tiling), and this
suite's triton_impl/matmul_v1_5_thread_tiling.py (do not call it here).
"""
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
    # TODO 1: walk k in steps of BLOCK_K: for k0 in range(0, K, BLOCK_K):
    # TODO 2:   load BLOCK_K values of row `row` of A, once for all V outputs (masked at K)
    # TODO 3:   load the BLOCK_K x V piece of B under this program's columns (masked)
    # TODO 4:   acc += tl.sum(a[:, None] * b, 0)
    tl.store(c_ptr + row * N + cols, acc, mask=cols < N)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    if M and N:
        matmul_strip_kernel[(triton.cdiv(N, V), M)](a, b, c, M, N, K, V=V, BLOCK_K=BLOCK_K)
    return c
