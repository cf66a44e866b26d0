"""Fake (meta) kernels: shapes and dtypes of each op's output, for torch.compile tracing.

They check what the real op checks that shapes alone can tell (rank, inner dimensions),
so a traced program fails early with the same message as an eager one.
"""
from __future__ import annotations

import torch

from . import MATMUL_OPS, NAMESPACE

_registered = False


def _matmul_fake(op: str):
    def fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        torch._check(a.dim() == 2 and b.dim() == 2,
                     lambda: f"{op}: A and B must be 2-D matrices, got {a.dim()}-D and {b.dim()}-D tensors")
        torch._check(a.shape[1] == b.shape[0],
                     lambda: f"{op}: inner dimensions must agree, got A {tuple(a.shape)} and B {tuple(b.shape)}")
        return a.new_empty((a.shape[0], b.shape[1]))

    return fake


def register() -> None:
    global _registered
    if _registered:
        return
    for op in MATMUL_OPS:
        torch.library.register_fake(f"{NAMESPACE}::{op}")(_matmul_fake(op))
    from . import _fake_memory  # the memory-bound ops of bindings/memory_ops.cpp

    _fake_memory.register()
    _registered = True
