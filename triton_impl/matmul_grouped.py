"""Blocked tl.dot matmul with L2-grouped program order (the kernel of Triton's
matrix-multiplication tutorial).

  idea      the tutorial's blocked algorithm: program (i, j) computes the BLOCK_M x BLOCK_N
            tile C[i, j] = sum over k-steps of A[i, k] @ B[k, j] with tl.dot; the compiler
            stages the tiles through shared memory, pipelines the loads (num_stages) and
            picks FMA or tensor-core instructions by dtype and input_precision.
  change    from the v3 twin: (1) the ORDER in which tiles are handed out. Programs run
            roughly in launch order; the row-major order (pid -> (pid // n, pid % n)) walks
            one row of C tiles, which needs one row strip of A but EVERY column strip of
            B. Grouped order walks GROUP_M rows of tiles column by column: the programs
            running at the same time then share A strips and B strips, so more of their
            loads hit L2. tl.swizzle2d(i, j, size_i, size_j, GROUP_M) maps the row-major
            (i, j) to the grouped one; `grouped_order` below writes the same map in plain
            Python, and `grouped_order_kernel` shows it on the GPU (the 5 x 4 example
            of "A Practitioner's Guide to Triton", with GROUP_M = 3):
                 row-major              grouped (entry = launch index of that tile)
                  0  1  2  3             0  3  6  9
                  4  5  6  7             1  4  7 10
                  8  9 10 11             2  5  8 11
                 12 13 14 15            12 14 16 18
                 16 17 18 19            13 15 17 19
            (2) every precision: fp32 (ieee: FFMA), tf32, fp16, bf16 (tensor cores), fp32
            accumulation, output in the input dtype. (3) real strides: A and B are used
            as they are (row- or column-major views, no copies).
            Traffic is what the order changes: the model below counts the loads the
            programs issue, the same in any order; L2 and DRAM bytes (ncu) are what drop.
  traffic   global loads (requested by the program's tiles; masked elements request
            nothing):   A: M*K*ceil(N/BLOCK_N)   B: N*K*ceil(M/BLOCK_M)
            shared: each staged tile read once per k-step by tl.dot (a lower bound: an MMA
            warp layout may read a tile more than once);  stores M*N.
  precond.  fp32/tf32: float32; fp16/bf16: float16/bfloat16 (output the same dtype);
            any M, N, K >= 0, any strides; tensors on the current CUDA device.
  run       python -m bench check --kernels triton_grouped --precision fp32,fp16
            python -c "from triton_impl.matmul_grouped import grouped_order as g; print(g(5, 4, 3))"
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles
from triton_impl._common import tile_count    # by name: torch.compile copies it

NAME = "triton_grouped"
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


@triton.jit
def matmul_grouped_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (M x K), B (K x N), C (M x N)
    M, N, K,                                  # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # strides, in elements
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  # the tile
    GROUP_M: tl.constexpr,                    # rows of tiles per group of the launch order
    INPUT_PRECISION: tl.constexpr,            # "ieee" (FFMA) or "tf32"; ignored for 16-bit
    K_WIDE: tl.constexpr,                     # near_int32_limit(K): an int64 k loop
):
    # A 1-D grid: the program id IS the launch order. Row-major (i, j) first, then grouped.
    pid = tl.program_id(0)
    num_pid_m = tile_count(M, BLOCK_M)
    num_pid_n = tile_count(N, BLOCK_N)
    pid_m, pid_n = tl.swizzle2d(pid // num_pid_n, pid % num_pid_n, num_pid_m, num_pid_n, GROUP_M)

    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)     # int64: rows*stride may
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)     # pass 2^31
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    col_ok = cols < N
    # Offsets in int64: ks * stride_bk and the k-step BLOCK_K * stride_bk pass 2^31 for a
    # wide B (N > 2^31 / BLOCK_K); tl.cast, because a stride of 1 arrives as a constexpr.
    k64 = ks.to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + k64[None, :] * stride_ak
    b_ptrs = b_ptr + k64[:, None] * stride_bk + cols[None, :] * stride_bn
    a_step = BLOCK_K * tl.cast(stride_ak, tl.int64)
    b_step = BLOCK_K * tl.cast(stride_bk, tl.int64)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)     # fp32 accumulation, any input
    stop = K
    if K_WIDE:                                # K within a tile of 2^31: an int64 bound
        stop = tl.cast(K, tl.int64)           # gives the loop an int64 counter
    for k0 in range(0, stop, BLOCK_K):        # i32 ok: K + BLOCK_K < 2^31 unless K_WIDE
        k_ok = (k0 + ks) < K
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += a_step
        b_ptrs += b_step

    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


@triton.jit
def grouped_order_kernel(order_ptr, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """order[i, j] = launch index of the program that computes tile (i, j)."""
    pid = tl.program_id(0)
    pid_m, pid_n = tl.swizzle2d(pid // num_pid_n, pid % num_pid_n, num_pid_m, num_pid_n, GROUP_M)
    tl.store(order_ptr + pid_m * num_pid_n + pid_n, pid)    # i32 ok: < programs < 2^31


def grouped_order(num_pid_m: int, num_pid_n: int, group_m: int) -> list[list[int]]:
    """The grouped launch order in plain Python (the tutorial's formula, which is what
    tl.swizzle2d computes): entry [i][j] is the launch index of tile (i, j)."""
    order = [[-1] * num_pid_n for _ in range(num_pid_m)]
    for pid in range(num_pid_m * num_pid_n):
        tiles_per_group = group_m * num_pid_n
        group = pid // tiles_per_group
        first_m = group * group_m
        rows_in_group = min(num_pid_m - first_m, group_m)   # the last group may be shorter
        i = first_m + (pid % tiles_per_group) % rows_in_group
        j = (pid % tiles_per_group) // rows_in_group
        order[i][j] = pid
    return order


def launch_order(num_pid_m: int, num_pid_n: int, group_m: int) -> torch.Tensor:
    """Runs grouped_order_kernel: the order as the GPU computes it."""
    return _launch_order(num_pid_m, num_pid_n, group_m)


def _launch_order(num_pid_m: int, num_pid_n: int, group_m: int, *,
                  device="cuda") -> torch.Tensor:
    """launch_order with the order on ``device``: tests run it under the interpreter on
    "cpu" (launch_order's is "cuda")."""
    order = torch.full((num_pid_m, num_pid_n), -1, dtype=torch.int32, device=device)
    grouped_order_kernel[(num_pid_m * num_pid_n,)](order, num_pid_m, num_pid_n, GROUP_M=group_m)
    return order


def params(precision: str = "fp32") -> dict[str, int]:
    """Default tiles per precision (tiles.GROUPED; not tuned: matmul_autotuned is)."""
    return dict(tiles.GROUPED[precision])


def matmul(a: torch.Tensor, b: torch.Tensor, precision: str = "fp32") -> torch.Tensor:
    """C = A @ B at the given precision, with the tile of params(precision); A and B used
    with their strides (no copies)."""
    return _matmul(a, b, precision)


def _matmul(a: torch.Tensor, b: torch.Tensor, precision: str, *,
            tile: dict | None = None) -> torch.Tensor:
    """matmul with a tile forced, so that tests cross every tile edge on small shapes (the
    product takes params(precision)): ``tile`` (tiles.GROUPED's keys) overrides it."""
    _common.check_precision(NAME, precision, PRECISIONS)
    M, N, K = _common.check_matmul_2d(NAME, a, b, precision)
    trivial = _common.trivial_result(a, M, N, K)
    if trivial is not None:
        return trivial
    p = tile or params(precision)
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, p["BLOCK_M"]) * triton.cdiv(N, p["BLOCK_N"]),)
    _common.launch(matmul_grouped_kernel, grid,
                   a, b, c, M, N, K,
                   a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                   BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"], BLOCK_K=p["BLOCK_K"],
                   GROUP_M=p["GROUP_M"],
                   INPUT_PRECISION=_common.DOT_INPUT_PRECISION[precision],
                   K_WIDE=_common.near_int32_limit(K),
                   num_warps=p.get("num_warps", 4), num_stages=p.get("num_stages", 3))
    return c


def _op_impl(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    return matmul(a, b, precision)


def op():
    """torch.ops.cvt_triton.matmul_grouped(a, b, precision) (registered on first call)."""
    return _common.register_op("matmul_grouped", _op_impl, derivative="matmul")
