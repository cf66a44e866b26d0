"""Fake (meta) kernels: shapes and dtypes of each op's output, for torch.compile tracing.

Each checks everything the real op checks (bindings/matmul_ops.cpp): rank, dtype, device,
inner dimensions, sizes below 2^31, and whether CUDA's grid can cover the output with the
kernel's tile mapping, with the same messages, so a traced program fails at trace time with
the message an eager call gives, not later when the compiled graph runs.
"""
from __future__ import annotations

import torch

from . import config
from .config import (MATMUL_OPS, MAX_DIM, MAX_GRID_X, MAX_GRID_Y, NAMESPACE, TENSOR_CORE_OPS,
                     TF32_OPS)

_registered = False


def grid_y_dimension(op: str) -> tuple[str, int]:
    """Which dimension of C each ladder op puts on gridDim.y, and its rows or columns per
    block (the launchers in cuda/matmul_*.cu)."""
    t = config.params()
    return {
        "matmul_v1_naive": ("N", t["V1_BLOCK"]),
        "matmul_v1_coalesced": ("M", t["V1_BLOCK"]),
        "matmul_v1_5_thread_tiling": ("M", t["V15_T"] * t["V15_V"]),
        "matmul_v2_register_tiling": ("M", t["V2_T"] * t["V2_V"]),
        "matmul_v3_smem_tiling": ("M", t["V3_L"]),
        "matmul_v4_vectorized": ("M", t["V4_L"]),
        "matmul_v5_warptiling": ("M", t["V5_BM"]),
        "matmul_v6_pipelined": ("M", t["V6_BM"]),  # grouped order remaps, same grid
        "matmul_v7_lean_fetch": ("M", t["V7_BM"]),
        "matmul_v8_split_k": ("M", t["V8_BM"]),  # the splits go on gridDim.z (at most 8)
    }[op]


def check_cuda_tensors(op: str, what: str, *tensors: torch.Tensor) -> None:
    devices = [t.device for t in tensors]
    torch._check(all(d.type == "cuda" for d in devices),
                 lambda: f"{op}: {what} must be CUDA tensors, got "
                         f"{' and '.join(str(d) for d in devices)}")
    torch._check(all(d == devices[0] for d in devices),
                 lambda: f"{op}: {what} must be on the same device, got "
                         f"{' and '.join(str(d) for d in devices)}")


def _matmul_checks(op: str, a: torch.Tensor, b: torch.Tensor, sixteen_bit: bool):
    """bindings/matmul_ops.cpp's check_matmul_inputs at trace time: rank, dtype (float32, or
    with `sixteen_bit` float16 or bfloat16, both the same), device, inner dimensions, sizes
    below 2^31. Returns (M, K, N)."""
    torch._check(a.dim() == 2 and b.dim() == 2,
                 lambda: f"{op}: A and B must be 2-D matrices, got {a.dim()}-D and {b.dim()}-D tensors")
    if sixteen_bit:
        torch._check(a.dtype in (torch.float16, torch.bfloat16) and a.dtype == b.dtype,
                     lambda: f"{op}: A and B must both be float16 or both bfloat16, got "
                             f"{a.dtype} and {b.dtype}")
    else:
        torch._check(a.dtype == torch.float32 and b.dtype == torch.float32,
                     lambda: f"{op}: A and B must be float32, got {a.dtype} and {b.dtype}")
    check_cuda_tensors(op, "A and B", a, b)
    torch._check(a.shape[1] == b.shape[0],
                 lambda: f"{op}: inner dimensions must agree, got A {tuple(a.shape)} and B {tuple(b.shape)}")
    M, K, N = a.shape[0], a.shape[1], b.shape[1]
    torch._check(M <= MAX_DIM and K <= MAX_DIM and N <= MAX_DIM,
                 lambda: f"{op}: every dimension must be below 2^31, got M = {M}, K = {K}, N = {N}")
    return M, K, N


def _matmul_fake(op: str):
    def fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, _, N = _matmul_checks(op, a, b, sixteen_bit=False)
        dim, per_block = grid_y_dimension(op)
        blocks = -(-(M if dim == "M" else N) // per_block)
        torch._check(M == 0 or N == 0 or blocks <= MAX_GRID_Y,
                     lambda: f"{op}: output of {M} x {N} needs more blocks than CUDA's grid "
                             f"allows ({MAX_GRID_Y} along y); this kernel's tile mapping cannot cover it")
        return a.new_empty((M, N))

    return fake


def tensor_core_tile(op: str) -> tuple[int, int]:
    """The BM x BN block tile of a tensor-core rung (one block per tile, on a 1-D grid)."""
    t = config.params()
    rung = op.removeprefix("matmul_").split("_")[0].upper()     # matmul_t1_mma_sync -> T1
    return t[f"{rung}_BM"], t[f"{rung}_BN"]


def _tensor_core_fake(op: str):
    def fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, _, N = _matmul_checks(op, a, b, sixteen_bit=True)
        bm, bn = tensor_core_tile(op)
        torch._check(M == 0 or N == 0 or -(-M // bm) * -(-N // bn) <= MAX_GRID_X,
                     lambda: f"{op}: output of {M} x {N} needs more than 2^31 - 1 blocks of "
                             f"this kernel's tile")
        return a.new_empty((M, N))

    return fake


def _tf32_fake(op: str):
    """A tf32 rung: float32 checks; its persistent grid covers any output, and its fall-back
    (v7's kernel, when K or N is not a multiple of 4: the part of "off the TMA path" known at
    trace time) has v7's limit along y."""
    def fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K, N = _matmul_checks(op, a, b, sixteen_bit=False)
        if K % 4 or N % 4:
            per_block = grid_y_dimension("matmul_v7_lean_fetch")[1]
            torch._check(M == 0 or N == 0 or -(-M // per_block) <= MAX_GRID_Y,
                         lambda: f"{op}: output of {M} x {N} needs more blocks than CUDA's grid "
                                 f"allows ({MAX_GRID_Y} along y); this kernel's tile mapping "
                                 f"cannot cover it")
        return a.new_empty((M, N))

    return fake


def register() -> None:
    global _registered
    if _registered:
        return
    for op in MATMUL_OPS:
        torch.library.register_fake(f"{NAMESPACE}::{op}")(_matmul_fake(op))
    for op in TENSOR_CORE_OPS:
        torch.library.register_fake(f"{NAMESPACE}::{op}")(_tensor_core_fake(op))
    for op in TF32_OPS:
        torch.library.register_fake(f"{NAMESPACE}::{op}")(_tf32_fake(op))
    from . import _fake_memory  # the memory-bound ops of bindings/memory_ops.cpp

    _fake_memory.register()
    _registered = True
