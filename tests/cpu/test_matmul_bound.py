"""The matmul bound (bench/families/matmul/problems.py) is tight: stand-in kernels that lose one
K tile or one output in a hundred fail at the sizes where the bound of 4 u_in + 4 sqrt(K) u_acc +
u_out, relative to sum |a b|, let them pass; right stand-ins pass there, rounding the way the
suite's kernels round. CPU only: torch on the CPU plays the kernel (float32 sums of products
that are exact in float32, as on the tensor cores and in FFMA)."""
from __future__ import annotations

import pytest
import torch

from bench import check, problems
from bench.families.matmul.problems import BOUND_C, matmul_error, tf32_rounded
from bench.registry import Kernel

MM = problems.get("matmul")


def _kernel(fn):
    return Kernel(name="stand_in", op="matmul", backend="torch", version="test", summary="",
                  source="tests", precisions=("fp32", "tf32", "fp16", "bf16"),
                  loader=lambda p: fn, runs_on_cpu=True)


def _sum(a, b, precision):
    """What a right kernel computes: products exact in float32 (tf32: A truncated, B to
    nearest, as t4 and triton_batched do), float32 sums, one rounding to the output type."""
    if precision == "tf32":
        a, b = tf32_rounded(a, "truncated"), tf32_rounded(b, "nearest")
    return a.float() @ b.float()


def right(precision):
    return lambda a, b: _sum(a, b, precision).to(a.dtype)


def dropping_k(precision, start, width):
    """A kernel that loses the K tile [start, start + width) (start < 0: from the end)."""
    def fn(a, b):
        K = a.shape[1]
        lo = start % K if start < 0 else start
        keep = torch.ones(K, dtype=torch.bool)
        keep[lo:lo + width] = False
        return _sum(a[:, keep], b[keep], precision).to(a.dtype)
    return fn


def zeroing_1_in_100(precision):
    """The first output of every hundred set to zero (one of 32 outputs at 4 x 8)."""
    def fn(a, b):
        c = _sum(a, b, precision)
        c.view(-1)[::100] = 0
        return c.to(a.dtype)
    return fn


def _check(fn, shape, precision):
    return check.check_one(_kernel(fn), MM, MM.parse_shape(shape), precision, device="cpu")


# The cases that passed the old bound (measured through check_one with stand-ins like these).
LOST_TILES = [("4x8x16385", "fp16", -64, 64), ("4x8x16385", "tf32", -64, 64),
              ("64x264x65536", "fp16", -64, 64), ("37x41x2000", "bf16", -64, 64),
              ("256x256x8192", "bf16", 4096, 128)]


@pytest.mark.parametrize("shape,precision,start,width", LOST_TILES,
                         ids=[f"{s}-{p}-{w}@{st}" for s, p, st, w in LOST_TILES])
def test_a_lost_k_tile_fails(shape, precision, start, width):
    r = _check(dropping_k(precision, start, width), shape, precision)
    assert r.status == "FAIL" and r.error > 2, r
    ok = _check(right(precision), shape, precision)
    assert ok.status == "ok", ok


@pytest.mark.parametrize("shape", ["4x8x16385", "64x264x65536"])
def test_one_output_in_a_hundred_zeroed_fails(shape):
    r = _check(zeroing_1_in_100("bf16"), shape, "bf16")
    assert r.status == "FAIL" and r.error > 2, r


def test_tf32_is_judged_against_the_inputs_as_cut():
    """Either rounding of either operand, or none (the interpreter), passes; an fp32 bound on
    a tf32 product fails (the rounding of the inputs is not in the bound: it is in the
    reference)."""
    a, b = MM.inputs(MM.parse_shape("33x47x515"), "tf32")
    for ha in ("kept", "nearest", "truncated"):
        for hb in ("kept", "nearest", "truncated"):
            out = tf32_rounded(a, ha) @ tf32_rounded(b, hb)
            assert matmul_error(out, a, b, "tf32") <= 1, (ha, hb)
    assert matmul_error(_sum(a, b, "tf32"), a, b, "fp32") > 1
    # an input cut to bfloat16 precision is not one of the nine references
    cut16 = (a.bfloat16().float() @ b)
    assert matmul_error(cut16, a, b, "tf32") > 1


def test_the_margin_of_c():
    """c = BOUND_C leaves a margin over the float32 sums of right kernels: at most a quarter
    of the bound in these runs (docs/harness.md, "The matmul bound")."""
    assert BOUND_C == 4
    for shape in ("64x64x64", "16x16x4097", "8x8x65536", "2x3x2", "40x40x7"):
        a, b = MM.inputs(MM.parse_shape(shape), "fp32")
        assert matmul_error(right("fp32")(a, b), a, b, "fp32") <= 0.25, shape


def test_the_references_cut_tf32_as_the_independent_reference_does():
    """tf32_rounded (bit arithmetic, any device) gives tests/support/checks.py's float64
    reference rounding to nearest, bit for bit, on every branch (ties, overflow, subnormals,
    NaN payloads), and truncation keeps the top 19 bits."""
    from tests.support.checks import assert_tf32_rounded, tf32_rounding_inputs

    x = tf32_rounding_inputs()
    assert_tf32_rounded(tf32_rounded(x, "nearest"), x)
    cut = tf32_rounded(x, "truncated")
    finite = torch.isfinite(x)
    assert torch.equal(cut[finite].view(torch.int32), x[finite].view(torch.int32) & -8192)


@pytest.mark.parametrize("precision,mode", [("fp32", "random"), ("tf32", "random"),
                                            ("bf16", "random"), ("fp16", "exact")])
def test_the_check_judges_c_a_block_of_rows_at_a_time(monkeypatch, precision, mode):
    """The float64 check goes through C in blocks of rows (row_blocks), so that its
    temporaries stay small at any shape: blocks of a few rows give the error of one block,
    and a wrong element in the last row, or a last row left out, is found all the same."""
    from bench.families.matmul import problems as mp

    g = torch.Generator().manual_seed(3)
    M, N, K = 37, 11, 300
    dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
             "fp16": torch.float16}[precision]
    if mode == "exact":
        a = torch.randint(-3, 4, (M, K), generator=g).to(dtype)
        b = torch.randint(-3, 4, (K, N), generator=g).to(dtype)
    else:
        a, b = torch.randn(M, K, generator=g).to(dtype), torch.randn(K, N, generator=g).to(dtype)
    out = right(precision)(a, b)
    whole = matmul_error(out, a, b, precision, mode)
    wrong = out.clone()
    wrong[-1, -1] += 1
    monkeypatch.setattr(mp, "BLOCK_ELEMENTS", 2 * N)     # two rows a block, the last one alone
    assert len(mp.row_blocks(M, N)) == 19 and mp.row_blocks(M, N)[-1] == slice(36, 37)
    assert mp.row_blocks(0, N) == [slice(0, 0)] and mp.row_blocks(5, 0) == [slice(0, 5)]
    assert matmul_error(out, a, b, precision, mode) == whole <= 1
    assert matmul_error(wrong, a, b, precision, mode) > 1
    assert matmul_error(out[:-1], a, b, precision, mode) == float("inf")   # a row short
    assert mp.matmul_error_map(out, a, b, precision, mode).shape == (M, N)
