"""The note of a failed check points at the bug of a deliberately wrong Triton kernel.

Small kernels with the mistakes students make go through bench.check.check_one under the
interpreter: a read past an input is named with its tensor and index, the rows of a softmax,
an L of partial tiles, the tail of a flat output; the same note on every run. The notes'
patterns on hand-made error maps: tests/cpu/test_failure_report.py."""
from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from bench import check, problems, registry

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning")]


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,              # pointers | sizes
                   s_am, s_ak, s_bk, s_bn, s_cm, s_cn,         # strides
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   K_MASK_IGNORES_K0: tl.constexpr, FULL_TILES_ONLY: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = ks < K if K_MASK_IGNORES_K0 else k0 + ks < K    # BUG 1: ks < K
        a = tl.load(a_ptr + rows[:, None] * s_am + (k0 + ks)[None, :] * s_ak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * s_bk + cols[None, :] * s_bn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    if FULL_TILES_ONLY:                                        # BUG 2: no partial tiles
        keep = (rows[:, None] < M // BLOCK_M * BLOCK_M) & (cols[None, :] < N // BLOCK_N * BLOCK_N)
    else:
        keep = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * s_cm + cols[None, :] * s_cn, acc, mask=keep)


TILES = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)


def _matmul(k_mask_ignores_k0=False, full_tiles_only=False):
    def run(a, b):
        (M, K), N = a.shape, b.shape[1]
        c = torch.empty((M, N), dtype=a.dtype)
        grid = (triton.cdiv(M, TILES["BLOCK_M"]), triton.cdiv(N, TILES["BLOCK_N"]))
        _matmul_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), **TILES,
                             K_MASK_IGNORES_K0=k_mask_ignores_k0,
                             FULL_TILES_ONLY=full_tiles_only)
        return c
    return run


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_rows, n, BLOCK: tl.constexpr, PAD_WITH_ZERO: tl.constexpr,
                    SKIP_LAST_ROW: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    pad = 0.0 if PAD_WITH_ZERO else -float("inf")             # BUG 3: pads with 0
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=pad)
    e = tl.exp(x - tl.max(x, axis=0))
    keep = (cols < n) & ((row < n_rows - 1) if SKIP_LAST_ROW else True)   # BUG 4
    tl.store(y_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=keep)


def _softmax(pad_with_zero=False, skip_last_row=False):
    def run(x, dim):
        assert dim in (-1, 1) and x.dim() == 2 and x.is_contiguous()
        y = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[0], x.shape[1],
                                       BLOCK=triton.next_power_of_2(x.shape[1]),
                                       PAD_WITH_ZERO=pad_with_zero, SKIP_LAST_ROW=skip_last_row)
        return y
    return run


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n // BLOCK * BLOCK                       # BUG 5: the tail is left out
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask)
             + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def _vector_add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out


def _kernel(name, op, fn, params):
    return registry.Kernel(name=name, op=op, backend="triton", version="bug",
                           summary="DELIBERATELY WRONG", source=__file__, precisions=("fp32",),
                           loader=lambda precision: fn, params=lambda precision=None: params,
                           runs_on_cpu=True)


def _notes(kernel, shape, runs=2):
    """check_one's note, run `runs` times: a failure every time, the same note each time."""
    problem = problems.get(kernel.op)
    results = [check.check_one(kernel, problem, problem.parse_shape(shape), "fp32")
               for _ in range(runs)]
    assert all(r.status == "FAIL" for r in results), results
    notes = {r.note for r in results}
    assert len(notes) == 1, notes
    return notes.pop()


def test_a_k_mask_without_the_k_offset_is_a_read_past_the_inputs():
    """mask ks < K instead of k0 + ks < K: the last partial k step reads rows K.. of b (past
    its end) and, for the last row of a, elements past a's end. Those reads got NaN or
    whatever lay in memory, so the first run's output changes from run to run and looked
    'never written'; the note names the reads and describes the repeatable rerun."""
    kernel = _kernel("kmask", "matmul", _matmul(k_mask_ignores_k0=True), TILES)
    assert _notes(kernel, "33x31x19") == (          # docs/plugins.md shows it
        "reads past the inputs: b[19, 0], 1 past the end of b (19x31): b_ptr of "
        "_matmul_kernel, first in program (0, 0, 0), 806 element reads in all; a[33, 0], 1 "
        "past the end of a (33x19): a_ptr of _matmul_kernel, first in program (1, 0, 0), 13 "
        "element reads in all; a rerun that checked every load (such reads gave 4096 there): "
        "1023 of 1023 elements wrong (100%), first at [0, 0]; every element")


def test_partial_tiles_left_out_are_an_l_of_the_kernels_tiles():
    kernel = _kernel("full_tiles", "matmul", _matmul(full_tiles_only=True), TILES)
    assert _notes(kernel, "67x69x8") == (
        "527 of 4623 elements wrong (11.4%), first at [0, 64]; all NaN: never written (a "
        "rerun that checked every load found none out of bounds); the last 3 rows and the "
        "last 5 columns (an L along the bottom and right edges: partial tiles past row 64 "
        "and column 64, multiples of BLOCK_M = 32 and BLOCK_N = 32)")


def test_a_softmax_padded_with_zero_is_a_wrong_normalisation_of_every_row():
    """Masked lanes loaded as 0 instead of -inf enter the max and the sum of every row
    whose length is not a power of two."""
    kernel = _kernel("zero_pad", "softmax", _softmax(pad_with_zero=True), {})
    assert _notes(kernel, "3x5") == (
        "15 of 15 elements wrong (100%), first at [0, 0]; every element: the row's "
        "normalisation (each element off by one factor per row)")


def test_a_softmax_row_never_written_is_named():
    kernel = _kernel("last_row", "softmax", _softmax(skip_last_row=True), {})
    assert _notes(kernel, "3x5", runs=1).endswith("all NaN: never written (a rerun that "
                                                  "checked every load found none out of "
                                                  "bounds); row 2 (every element)")


def test_a_flat_tail_is_named_past_the_kernels_block():
    kernel = _kernel("no_tail", "vector_add", _vector_add, dict(BLOCK=1024))
    assert _notes(kernel, "4099", runs=1).endswith(
        "; elements 4096-4098, the tail past the last full block of 1024 (BLOCK)")
