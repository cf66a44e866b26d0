"""triton_batched at fp16 and bf16 on the H100: matmul_persistent's TMA kernel with a batch
axis (triton_impl/matmul_batched.py, header "TMA"; the kernel is triton_persistent's).

Which inputs take it (matmul_batched.tma_plan) and which fall back to the pointer kernel,
and for the ones that take it: one product and many, broadcast batches (stride 0, one and
several batch dimensions), row- and column-major B, odd M/N/K in 16-byte aligned rows (the
padding NaN: a kernel that reads past a row shows it), K = 0 and empty stacks, a k-tail
that must not read the next product's B, exact small integers, run-to-run bits, the 2-D
product equal to triton_persistent's bit for bit, and (slow) a stack whose C passes 2^31
elements. The plan's views are checked on the CPU (tests/cpu/test_batched_tma_plan.py), the
kernel under the interpreter (tests/interpreter/test_matmul_batched_tma16.py).
"""
from __future__ import annotations

import pytest
import torch

from bench.families.matmul.problems import matmul_error
from tests.support.checks import poisoned
from tests.support.gpu_memory import GROUP, inputs_or_skip
from tests.support.stacks import STACK_CASES, UNREADABLE, aligned, moved, stack_error

NEEDS_KERNEL = "triton_persistent"      # Hopper (wgmma, TMA), as this file's kernel
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


@poisoned
def _run(a, b, precision):
    """The stack's product, its output's block poisoned before the call."""
    from triton_impl import matmul_batched as mb

    return mb.matmul(a, b, precision)


def _takes_tma(a, b, precision) -> bool:
    from triton_impl import matmul_batched as mb

    return mb.tma_plan(a, b, precision) is not None


@pytest.mark.parametrize("precision", list(DTYPES))
@pytest.mark.parametrize("col_b", [False, True], ids=["row-B", "col-B"])
@pytest.mark.parametrize("sa,sb", STACK_CASES, ids=str)
def test_batched_tma_matches_fp64(sa, sb, col_b, precision):
    g = torch.Generator().manual_seed(sa[-1] + sb[-1])
    dtype = DTYPES[precision]
    a = aligned(*sa, dtype=dtype, gen=g)
    if col_b:       # each matrix of B column-major: B^T's rows (K long) contiguous
        b = aligned(*sb[:-2], sb[-1], sb[-2], dtype=dtype, gen=g).mT
    else:
        b = aligned(*sb, dtype=dtype, gen=g)
    assert _takes_tma(a, b, precision)
    assert stack_error(_run(a, b, precision), a, b, precision) <= 1


@pytest.mark.parametrize("m", [1, 17, 127, 128, 129, 255, 257, 1000])
@pytest.mark.parametrize("n,k", [(8, 8), (24, 40), (256, 64), (248, 72), (264, 136),
                                 (1000, 8)], ids=str)
def test_odd_shapes_in_aligned_rows(m, n, k):
    """The tile edges of the candidates (128 x 256 x 64, 256 x 128, 128 x 128) in M, N and
    K, three products, rows padded to 16 bytes with NaN. N and K are multiples of 8 (16-bit
    rows of 16-byte multiples: what TMA takes; C's rows too)."""
    g = torch.Generator().manual_seed(m * 7 + n + k)
    a = aligned(3, m, k, dtype=torch.float16, gen=g)
    b = aligned(3, k, n, dtype=torch.float16, gen=g)
    assert _takes_tma(a, b, "fp16")
    assert stack_error(_run(a, b, "fp16"), a, b, "fp16") <= 1


@pytest.mark.parametrize("precision", list(DTYPES))
@pytest.mark.parametrize("sa,sb", [((3, 129, 200), (3, 200, 136)), ((2, 64, 4096), (4096, 64))],
                         ids=str)
def test_exact_with_small_integers(sa, sb, precision):
    """Integer inputs from -3 to 3: every product and partial sum is exact in the float32
    accumulator (|sum| <= 9 K < 2^24), so C is the exact sum rounded once to the output
    type (above 256 bfloat16 and above 2048 float16 round): equal to float64's, rounded."""
    g = torch.Generator().manual_seed(2)
    a = aligned(*sa, dtype=DTYPES[precision], gen=g, exact=True)
    b = aligned(*sb, dtype=DTYPES[precision], gen=g, exact=True)
    assert _takes_tma(a, b, precision)
    out = _run(a, b, precision)
    assert torch.equal(out, (a.double() @ b.double()).to(out.dtype))


@pytest.mark.parametrize("col_b", [False, True], ids=["row-B", "col-B"])
def test_k_tail_never_reads_the_next_product(col_b):
    """K = 40: product 0's only k-tile (64 deep) covers rows 40..63 of B, past its last row.
    The descriptor's zero fill is per dimension, so it reads zeros; a 2-D (batch * K, N)
    view would read product 1's rows (here +inf) times A's zero-filled columns: NaN."""
    g = torch.Generator().manual_seed(3)
    a = aligned(2, 70, 40, dtype=torch.float16, gen=g)
    b = aligned(2, 40, 128, dtype=torch.float16, gen=g)
    b[1] = float("inf")
    if col_b:
        b = b.mT.contiguous().mT
    assert _takes_tma(a, b, "fp16")
    out = _run(a, b, "fp16")
    assert torch.isfinite(out[0]).all()
    assert stack_error(out[:1], a[:1], b[:1], "fp16") <= 1


def test_empty_stacks_and_k_zero():
    h = dict(device="cuda", dtype=torch.float16)
    out = _run(torch.randn(3, 64, 0, **h), torch.randn(3, 0, 32, **h), "fp16")
    assert out.shape == (3, 64, 32) and torch.equal(out, torch.zeros_like(out))
    out = _run(torch.randn(0, 64, 32, **h), torch.randn(0, 32, 16, **h), "fp16")
    assert out.shape == (0, 64, 16)
    out = _run(torch.randn(2, 0, 32, **h), torch.randn(2, 32, 16, **h), "fp16")
    assert out.shape == (2, 0, 16)


@pytest.mark.parametrize("precision", list(DTYPES))
def test_repeats_bit_for_bit_and_equals_the_2d_path(precision):
    """A stack is tuned once (its own key: BATCH), then repeats bit for bit; each product
    equals triton_persistent's 2-D product run with the same tile (a stack of one through
    the same kernel, the same k order)."""
    from triton_impl import matmul_persistent as mp

    g = torch.Generator().manual_seed(9)
    dtype = DTYPES[precision]
    a = aligned(4, 1024, 1024, dtype=dtype, gen=g)
    b = aligned(4, 1024, 1024, dtype=dtype, gen=g)
    first = _run(a, b, precision)
    assert stack_error(first, a, b, precision) <= 1
    for _ in range(4):
        assert torch.equal(_run(a, b, precision), first)
    cfg = mp.best_config(mp.candidates_key(precision, stack=True))
    assert cfg is not None
    fixed = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    for i in (0, 3):
        assert torch.equal(poisoned(mp._matmul)(a[i].contiguous(), b[i].contiguous(), precision,
                                                config=fixed), first[i])


@pytest.mark.slow       # every candidate compiled: the tuned one runs in the other tests
@pytest.mark.parametrize("precision", list(DTYPES))
def test_every_stack_candidate(precision):
    """Each candidate of the stack list (tiles_hopper.PERSISTENT_CONFIGS[p + "-stack"]) on
    three products at tile edges, row- and column-major B; a warp-specialised config for a
    stack is refused by name (Triton 3.6's pass fails on 3-D descriptors)."""
    from triton_impl import matmul_persistent as mp

    g = torch.Generator().manual_seed(6)
    dtype = DTYPES[precision]
    a = aligned(3, 130, 136, dtype=dtype, gen=g)
    b = aligned(3, 136, 264, dtype=dtype, gen=g)
    launch = poisoned(lambda a, b, cfg, col: _launched(mp, a, b, precision, cfg, col))
    for cfg in mp.CONFIGS[precision + "-stack"]:
        for col in (False, True):
            out = launch(a, b, cfg, col)
            assert stack_error(out, a, b, precision) <= 1, (cfg, col)
    ws = next(c for c in mp.CONFIGS[precision] if c["WARP_SPECIALIZE"])
    with pytest.raises(ValueError, match="warp specialisation does not compile for a stack"):
        _launched(mp, a, b, precision, ws, False)


def _launched(mp, a, b, precision, cfg, col):
    c = torch.empty(a.shape[0], a.shape[1], b.shape[2], dtype=a.dtype, device="cuda")
    if col:
        mp.launch(a, b.mT.contiguous(), c, precision, b_k_major=True, config=cfg)
    else:
        mp.launch(a, b.contiguous(), c, precision, config=cfg)
    return c


def test_the_pointer_kernel_still_runs_with_tma_false():
    from triton_impl import matmul_batched as mb

    g = torch.Generator().manual_seed(5)
    a = aligned(3, 200, 72, dtype=torch.float16, gen=g)
    b = aligned(3, 72, 136, dtype=torch.float16, gen=g)
    out = poisoned(mb._matmul)(a, b, "fp16", tma=False)
    assert stack_error(out, a, b, "fp16") <= 1


FALLBACKS = dict(UNREADABLE, **{   # and a C that TMA stores cannot write
    "column-major B, C rows of 72 bytes": lambda: (torch.randn(2, 64, 32),
                                                   torch.randn(2, 36, 32).mT)})


@pytest.mark.parametrize("precision", list(DTYPES))
@pytest.mark.parametrize("name", list(FALLBACKS), ids=str)
def test_unaligned_inputs_fall_back_and_stay_correct(name, precision):
    a, b = moved(FALLBACKS[name](), DTYPES[precision])
    assert not _takes_tma(a, b, precision)
    assert stack_error(_run(a, b, precision), a, b, precision) <= 1


@pytest.mark.slow
@pytest.mark.xdist_group(GROUP)
def test_a_stack_past_2_31_elements_of_c():
    """Three products of 32768 x 32768 (C: 3 x 2^30 elements, 6 GiB): the descriptors' batch
    coordinate and the stores' int64 batch offset reach past 2^31 elements and 2^32 bytes.
    Checked against float64 on corners of the first and last products."""
    with inputs_or_skip(8):
        g = torch.Generator(device="cuda").manual_seed(11)
        a = torch.randn(3, 32768, 16, device="cuda", generator=g).half()
        b = torch.randn(3, 16, 32768, device="cuda", generator=g).half()
    assert _takes_tma(a, b, "fp16")
    c = _run(a, b, "fp16")
    for i in (0, 2):
        for rows, cols in ((slice(0, 200), slice(0, 300)), (slice(-200, None), slice(-300, None))):
            err = matmul_error(c[i, rows, cols], a[i, rows], b[i, :, cols], "fp16")
            assert err <= 1, (i, err)
