"""The FFMA rungs past the lecture on the GPU: both paths at tile edges through the torch ops
(misaligned views force the scalar path). (CPU tier: tests/cpu/test_ffma_rungs.py;
compute-sanitizer on both paths: tests/gpu/test_sanitizer.py.)"""
from __future__ import annotations

import pytest

from bench import registry

RUNGS = {"v4": "v4_vectorized", "v5": "v5_warptiling", "v6": "v6_pipelined",
         "v7": "v7_lean_fetch", "v8": "v8_split_k"}
KERNELS = {v: f"cuda_{op}" for v, op in RUNGS.items()}


def _kernel(version: str):
    return registry.get(KERNELS[version])


# K and N multiples of 4: the 128-bit path with masks at every edge of the tile
VECTOR_SHAPES = [(1, 4, 4), (131, 132, 36), (257, 260, 40), (4, 8, 16384), (1000, 1000, 1000)]


@pytest.mark.parametrize("version", RUNGS)
@pytest.mark.parametrize("shape", VECTOR_SHAPES, ids=str)
@pytest.mark.parametrize("misaligned", [False, True], ids=["aligned", "misaligned"])
def test_both_paths_at_tile_edges(version, shape, misaligned):
    """The same shapes on the 128-bit path (fresh tensors) and on the scalar path (views one
    float into their storage: contiguous, but not 16-byte aligned)."""
    import torch

    from tests.support.checks import assert_matches_float64, poisoned_runner

    M, N, K = shape
    g = torch.Generator().manual_seed(M + N + K)

    def matrix(rows, cols):
        off = 1 if misaligned else 0
        flat = torch.randn(rows * cols + off, generator=g).cuda()
        return flat[off:].view(rows, cols)

    a, b = matrix(M, K), matrix(K, N)
    assert (a.data_ptr() % 16 != 0) == misaligned
    out = poisoned_runner(_kernel(version), "fp32")(a, b)
    assert_matches_float64("matmul", out, (a, b), "fp32")
