"""Closed-form traffic models of the Triton matmuls (triton_impl/), in bench.models' terms.

Counted like the CUDA models so that a CUDA header and its Triton twin's header read side by
side: ELEMENTS that the program's loads request from global memory (a masked element
requests nothing), stores, shared-memory reads, multiply-adds. Where the algorithm is the
CUDA one, the CUDA function is reused and only what differs is replaced. Nothing here runs
work.

What the counts cannot know, because the Triton compiler decides it (each kernel header
says which applies):
  - which of its threads holds which elements: a 1-D load that several threads need (v2's
    column of A) is issued once per thread holding it, so executed load instructions can
    exceed the program-level count; identical addresses held by one thread may be merged;
  - tl.dot stages its operands through shared memory in a layout of its choosing, and an
    MMA warp layout may read a staged tile more than once (shared counts are lower bounds);
  - Triton computes the whole program tile: masked-off elements multiply zeros, so FMAs
    are counted per program tile (the CUDA threads outside C return early instead).
"""
from __future__ import annotations

from dataclasses import replace
from math import ceil

from bench.families.matmul import models
from bench.families.matmul.models import MatmulShape, Traffic, matmul_traffic

def _tiles(s: MatmulShape, bm: int, bn: int) -> int:
    return ceil(s.M / bm) * ceil(s.N / bn)


def matmul_v1(s: MatmulShape, p) -> Traffic:
    """v1 twin: every in-range element loads its A and B values per k (2MNK, as CUDA);
    FMAs over whole BLOCK x BLOCK programs."""
    B = p["BLOCK"]
    return replace(models.matmul_v1(s, p), fma=_tiles(s, B, B) * B * B * s.K)


def matmul_v1_5(s: MatmulShape, p) -> Traffic:
    """v1.5 twin: the CUDA thread-level count (M*K*ceil(N/V) + MNK); FMAs per program tile."""
    side = p["T"] * p["V"]
    return replace(models.matmul_v1_5(s, p), fma=_tiles(s, side, side) * side * side * s.K)


def matmul_v2(s: MatmulShape, p) -> Traffic:
    """v2 twin: per k a program requests one column of A (TV values) and one row of B.
    Lecture form 2N^3/(T*V), where the CUDA threads issue 2N^3/V (see the kernel header)."""
    M, N, K = s.M, s.N, s.K
    side = p["T"] * p["V"]
    return matmul_traffic(s, p, loads=M * K * ceil(N / side) + N * K * ceil(M / side), shared=0,
                          fma=_tiles(s, side, side) * side * side * K)


def matmul_v3(s: MatmulShape, p) -> Traffic:
    """v3 twin: the CUDA model with S = the twin's k step (tl.dot needs S >= 16)."""
    return models.matmul_v3(s, p)


def matmul_blocked(s: MatmulShape, p) -> Traffic:
    """tl.dot blocked kernels (grouped, batched): each program requests its BM rows of A and
    BN columns of B over all of K (masked edges request nothing); shared: each staged tile
    read once per k-step (lower bound). p: BLOCK_M, BLOCK_N, BLOCK_K, precision."""
    M, N, K = s.M, s.N, s.K
    bm, bn, bk = p["BLOCK_M"], p["BLOCK_N"], p["BLOCK_K"]
    tiles = _tiles(s, bm, bn)
    k_padded = bk * ceil(K / bk)
    return matmul_traffic(s, p, loads=M * K * ceil(N / bn) + N * K * ceil(M / bm),
                          shared=tiles * (bm + bn) * k_padded, fma=tiles * bm * bn * k_padded)


def matmul_wrapped(s: MatmulShape, p) -> Traffic:
    """The autotuned kernel: edge tiles load wrapped rows/columns (rows % M) instead of
    masking them, so every program requests full BM x K and K x BN strips."""
    bm, bn = p["BLOCK_M"], p["BLOCK_N"]
    tiles = _tiles(s, bm, bn)
    return replace(matmul_blocked(s, p), global_loads=tiles * (bm + bn) * s.K)


def matmul_split_k(s: MatmulShape, p) -> Traffic:
    """triton_split_k: the blocked count with the tile it takes at this shape (its 16-row
    skinny tile where M or N <= 16, run as C^T = B^T A^T where N is the small one; its
    few-tile tile otherwise: tiles.SPLIT_K); the splits share out each tile's k loop, so
    the loads are the same for any number of them. Not counted: the float32 partial tiles
    (S*M*N written and read once by the sum, S > 1 only)."""
    from triton_impl import tiles

    precision = p["precision"]
    if s.N <= tiles.SPLIT_K_SKINNY < s.M:        # C^T = B^T A^T: the same loads, mirrored
        s = MatmulShape(s.N, s.M, s.K)
    tile = tiles.split_k(precision, s.M, s.N)
    return matmul_blocked(s, {**tile, "precision": precision})


def matmul_persistent(s: MatmulShape, p) -> Traffic:
    """The persistent TMA kernel: the blocked count (TMA fetches nothing outside the
    tensor, as masked loads request nothing); every tile of the grid is computed once,
    whichever program computes it. The tf32 "transpose" path adds one read and one write
    of B, not counted here (it is a separate kernel, transpose_kernel)."""
    return matmul_blocked(s, p)

