"""triton_batched's autotuned default (the tf32 candidates include the operand swap) under
the interpreter, on small, awkward stacks: broadcast batch dimensions, a column-major B, tile
edges, a k tail; and the autotuned result equal to the fixed tile it runs. (Its 16-bit TMA
path: test_matmul_batched_tma16.py.)"""
from __future__ import annotations

import pytest
import torch

from tests.support.stacks import stack_error


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16"])
def test_batched_default_broadcasts_and_takes_any_strides(precision):
    """(2, 1, 33, 19) @ (3, 19, 17) with a column-major B: broadcast batch dimensions, edge
    tiles in M and N, a k tail; tf32 and fp16 are autotuned (tf32's first interpreter
    candidate is the operand swap), fp32 runs the fixed tiles."""
    from triton_impl import matmul_batched

    dtype = torch.float16 if precision == "fp16" else torch.float32
    g = torch.Generator().manual_seed(1)
    a = torch.randn(2, 1, 33, 19, generator=g).to(dtype)
    b = torch.randn(3, 19, 17, generator=g).to(dtype).mT.contiguous().mT
    c = matmul_batched.matmul(a, b, precision)
    assert c.shape == (2, 3, 33, 17) and c.dtype == dtype
    assert stack_error(c, a, b, precision) <= 1
    if precision in matmul_batched.AUTOTUNED:
        assert matmul_batched.best_config(precision) is not None


def test_batched_autotuned_equals_the_fixed_tile_it_runs():
    """Under the interpreter the autotuner has one candidate: the result is that candidate's,
    launched through _matmul's tile, bit for bit (autotuning changes tiles, not arithmetic)."""
    from triton_impl import matmul_batched, tiles

    g = torch.Generator().manual_seed(2)
    a = torch.randn(3, 40, 24, generator=g).half()
    b = torch.randn(3, 24, 36, generator=g).half()
    tile = dict(tiles.INTERPRETER_CONFIG["fp16"])
    assert torch.equal(matmul_batched._matmul(a, b, "fp16", tma=False),
                       matmul_batched._matmul(a, b, "fp16", tile=tile))
