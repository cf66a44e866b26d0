"""A matmul of your own, in Triton, checked, modelled and timed by the harness beside the
built-in kernels (docs/plugins.md walks through it):

    python -m bench check --plugin docs/examples/my_triton_matmul.py --kernels 'my_*'
    python -m bench model --plugin docs/examples/my_triton_matmul.py --kernels 'my_*,triton_v3*'
    python -m bench time  --plugin docs/examples/my_triton_matmul.py --kernels 'my_*,@ladder'

Two kernels: `my_blocked_matmul`, a blocked tl.dot matmul with masks at every edge, and
`my_matmul_without_edge_masks`, the same with the masks of the last tile column left out
(the most common mistake of a first matmul): the check fails it and says where.
"""
import torch
import triton
import triton.language as tl

from bench.families.matmul import models_triton
from bench.plugins import kernel

BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 16


@triton.jit
def _blocked_matmul_kernel(
    a_ptr, b_ptr, c_ptr,                                  # pointers
    M, N, K,                                              # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,   # strides
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    MASK_N: tl.constexpr,                                 # False: the deliberate bug
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & ((k0 + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=((k0 + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    col_ok = cols[None, :] < N if MASK_N else cols[None, :] < (N // BLOCK_N) * BLOCK_N
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & col_ok)


def _launch(a, b, mask_n: bool):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _blocked_matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                 b.stride(1), c.stride(0), c.stride(1), BLOCK_M=BLOCK_M,
                                 BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, MASK_N=mask_n)
    return c


TILES = dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)


@kernel(op="matmul", backend="triton", precisions=("fp32",), twin="triton_v3_smem_tiling",
        summary="a blocked tl.dot matmul (32 x 32 tiles, k-steps of 16), masks at every edge",
        model=models_triton.matmul_blocked,
        params=TILES, formula="N³/BLOCK_N + N³/BLOCK_M")
def my_blocked_matmul(a, b):
    return _launch(a, b, mask_n=True)


@kernel(op="matmul", backend="triton", precisions=("fp32",), params=TILES,
        summary="DELIBERATELY WRONG: my_blocked_matmul without the mask of the last tile "
                "column (columns past the last multiple of 32 are never written)")
def my_matmul_without_edge_masks(a, b):
    return _launch(a, b, mask_n=False)
