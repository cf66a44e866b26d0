"""Counting what a block-tiled matmul issues, tile by tile: the reference the closed-form
traffic models of the FFMA and the tensor-core rungs are checked against."""
from __future__ import annotations

from math import ceil


def count_tiles(M: int, N: int, K: int, BM: int, BN: int, BK: int,
                shared_per_k_tile: int) -> tuple[int, int, int]:
    """(global loads, shared loads, multiply-adds): block (bm, bn) fetches, for every BK-deep
    k tile, the elements of A rows bm*BM.. and B columns bn*BN.. that lie inside the
    matrices (a masked element issues nothing), reads `shared_per_k_tile` elements of shared
    memory, and multiplies its whole padded tile."""
    loads = shared = fma = 0
    for bm in range(ceil(M / BM)):
        rows = min(BM, M - bm * BM)
        for bn in range(ceil(N / BN)):
            cols = min(BN, N - bn * BN)
            for k0 in range(0, K, BK):
                depth = min(BK, K - k0)
                loads += rows * depth + depth * cols
                shared += shared_per_k_tile
                fma += BM * BN * BK
    return loads, shared, fma
