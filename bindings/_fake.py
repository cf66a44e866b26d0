"""Fake (meta) kernels: shapes and dtypes of each op's output, for torch.compile tracing.

Each checks everything the real op checks (bindings/matmul_ops.cpp): rank, dtype, device,
inner dimensions, sizes below 2^31, and for the tensor-core rungs whether CUDA's grid can
cover the output with the kernel's tiles, with the same messages, so a traced program fails
at trace time with the message an eager call gives, not later when the compiled graph runs.
(The FFMA ladder's grids cover any size below 2^31: their rows of blocks fold into grid y and
z past CUDA's 65535, cuda/common.cuh.)
"""
from __future__ import annotations

import torch

from . import config
from .config import (MATMUL_OPS, MAX_DIM, MAX_GRID_X, NAMESPACE, SKINNY_OPS, TENSOR_CORE_OPS,
                     TF32_OPS)

_registered = False


def check_cuda_tensors(op: str, what: str, *tensors: torch.Tensor) -> None:
    devices = [t.device for t in tensors]
    torch._check(all(d.type == "cuda" for d in devices),
                 lambda: f"{op}: {what} must be CUDA tensors, got "
                         f"{' and '.join(str(d) for d in devices)}")
    torch._check(all(d == devices[0] for d in devices),
                 lambda: f"{op}: {what} must be on the same device, got "
                         f"{' and '.join(str(d) for d in devices)}")


def _matmul_checks(op: str, a: torch.Tensor, b: torch.Tensor, sixteen_bit: bool,
                   any_float: bool = False):
    """bindings/matmul_ops.cpp's check_matmul_inputs at trace time: rank, dtype (float32, or
    with `sixteen_bit` float16 or bfloat16, both the same; with `any_float` any of the three,
    both the same), device, inner dimensions, sizes below 2^31. Returns (M, K, N)."""
    torch._check(a.dim() == 2 and b.dim() == 2,
                 lambda: f"{op}: A and B must be 2-D matrices, got {a.dim()}-D and {b.dim()}-D tensors")
    if any_float:
        torch._check(a.dtype in (torch.float32, torch.float16, torch.bfloat16) and a.dtype == b.dtype,
                     lambda: f"{op}: A and B must both be float32, both float16 or both bfloat16, "
                             f"got {a.dtype} and {b.dtype}")
    elif sixteen_bit:
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
    """An FFMA rung, or a tf32 rung: float32 in and out, and a grid that covers any output (the
    tf32 rung's persistent grid, or v7's off the TMA path)."""
    def fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, _, N = _matmul_checks(op, a, b, sixteen_bit=False)
        return a.new_empty((M, N))

    return fake


def tensor_core_tile(op: str) -> tuple[int, int]:
    """The BM x BN block tile of a tensor-core rung or of the split_k path (one block per
    tile, on grid x)."""
    t = config.params()
    parts = op.removeprefix("matmul_").upper().split("_")
    # the shortest leading part of the name that has a tile: T1 (matmul_t1_mma_sync), SPLIT_K
    prefix = next(p for p in ("_".join(parts[:i]) for i in range(1, len(parts) + 1))
                  if f"{p}_BM" in t)
    return t[f"{prefix}_BM"], t[f"{prefix}_BN"]


def _tensor_core_fake(op: str):
    def fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, _, N = _matmul_checks(op, a, b, sixteen_bit=True)
        bm, bn = tensor_core_tile(op)
        torch._check(M == 0 or N == 0 or -(-M // bm) * -(-N // bn) <= MAX_GRID_X,
                     lambda: f"{op}: output of {M} x {N} needs more than 2^31 - 1 blocks of "
                             f"this kernel's tile")
        return a.new_empty((M, N))

    return fake


def _skinny_fake(op: str):
    """A path beside the ladder (bindings/matmul_ops.cpp's run_skinny_matmul): float32, float16
    or bfloat16 (A and B the same), M <= MAX_R or N <= MAX_R; the output has A's dtype."""
    max_r = config.params()["SKINNY_MAX_R"]

    def fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K, N = _matmul_checks(op, a, b, sixteen_bit=False, any_float=True)
        torch._check(M <= max_r or N <= max_r,
                     lambda: f"{op}: needs M <= {max_r} or N <= {max_r}, got M = {M} and N = {N}")
        return a.new_empty((M, N))

    return fake


def register() -> None:
    global _registered
    if _registered:
        return
    for op in (*MATMUL_OPS, *TF32_OPS):
        torch.library.register_fake(f"{NAMESPACE}::{op}")(_matmul_fake(op))
    for op in TENSOR_CORE_OPS:
        torch.library.register_fake(f"{NAMESPACE}::{op}")(_tensor_core_fake(op))
    for op in SKINNY_OPS:
        torch.library.register_fake(f"{NAMESPACE}::{op}")(_skinny_fake(op))
    from . import _fake_memory  # the memory-bound ops of bindings/memory_ops.cpp

    _fake_memory.register()
    _registered = True
