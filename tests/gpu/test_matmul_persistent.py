"""The Hopper-specific matmul (triton_impl/matmul_persistent.py, registered as
triton_persistent) on the H100: every tf32 path at odd and 4096^3 shapes, every
configuration of the candidate lists (each with the B layout it serves), clusters. The
registry-wide GPU tests (tests/gpu/test_matmul_triton.py: sweep, exact, NaN/inf, strided,
empty, bad inputs, torch.compile, opcheck) cover triton_persistent like every registered
Triton matmul; the interpreter runs it in tests/interpreter/test_matmul_persistent.py.
"""
from __future__ import annotations

import pytest
import torch

from bench.families.matmul.models import MatmulShape
from bench.families.matmul.problems import MatmulCase
from tests.support.checks import assert_correct, poisoned
from tests.support.shapes import shapes_at_tile_edges

NEEDS_KERNEL = "triton_persistent"      # Hopper only: skipped elsewhere (tests/conftest.py)


def _check(kernel, shape, precision, mode="random"):
    from bench import check, problems

    return check.check_one(kernel, problems.get("matmul"), shape, precision, mode,
                           seed=shape.M + shape.N, device="cuda")


@pytest.mark.parametrize("mode", ["gluon", "swap"])
@pytest.mark.parametrize("shape", [MatmulShape(1000, 1064, 1000), MatmulShape(999, 1001, 1003),
                                   MatmulShape(4096, 4096, 4096)], ids=str)
def test_gpu_tf32_paths(mode, shape):
    from triton_impl import matmul_persistent as mp

    a, b = MatmulCase(shape, "tf32", seed=5).inputs("cuda")
    assert_correct(poisoned(mp._matmul)(a, b, "tf32", tf32_row_major_b=mode), a, b, "tf32", False)


def test_gpu_gluon_is_the_default_and_covers_every_edge():
    """On the H100 a row-major B in tf32 runs matmul_swap_gluon: at every tile edge of its
    256 x 128 x 32 tile, K below, at and above one k-step (the peeled one) and unaligned
    rows (staged by plan), against the float64 reference."""
    from triton_impl import matmul_persistent as mp

    a, b = MatmulCase(MatmulShape(64, 64, 64), "tf32").inputs("cuda")
    assert mp.tf32_mode(a, b) == "gluon"
    for shape in shapes_at_tile_edges(32) + [MatmulShape(255, 129, 31), MatmulShape(257, 127, 32),
                                    MatmulShape(513, 385, 33), MatmulShape(256, 128, 4096)]:
        for exact in (False, True):
            a, b = MatmulCase(shape, "tf32", exact=exact, seed=shape.K).inputs("cuda")
            out = poisoned(mp.matmul)(a, b, "tf32")
            assert out.shape == (shape.M, shape.N) and out.is_contiguous()
            assert_correct(out, a, b, "tf32", exact)


@pytest.mark.parametrize("path", ["gluon", "swap 256x128", "swap 128x256"])
def test_gpu_register_operand_paths_repeat_bit_for_bit(path):
    """The race of Triton 3.6's swap (tests/cpu/test_wgmma_hazards.py) showed on the H100 as
    results that differ from run to run in 8-column groups. Every register-operand path now
    gives the same bits in every run."""
    from triton_impl import matmul_persistent as mp
    from triton_impl import tiles_hopper as th

    if path == "gluon":
        run = lambda a, b: mp._matmul(a, b, "tf32", tf32_row_major_b="gluon")  # noqa: E731
    else:
        bm, bn = map(int, path.split()[1].split("x"))
        cfg = th.persistent_cfg(bm, bn, 32, 8, 3, split=2, flatten=False)
        run = lambda a, b: mp._matmul(a, b, "tf32", config=cfg)  # noqa: E731
    run = poisoned(run)            # each repeat's output block starts as NaN
    a, b = MatmulCase(MatmulShape(2048, 2048, 2048), "tf32", seed=9).inputs("cuda")
    first = run(a, b)
    assert_correct(first, a, b, "tf32", False)
    for _ in range(8):
        assert torch.equal(run(a, b), first)


@pytest.mark.slow       # every candidate of every list compiled: the tuned one runs in the sweep
@pytest.mark.parametrize("precision", ["tf32", "fp16", "bf16"])
@pytest.mark.parametrize("shape", [MatmulShape(1024, 1024, 1024), MatmulShape(130, 258, 100)],
                         ids=str)
def test_gpu_every_persistent_candidate(precision, shape):
    from triton_impl import matmul_persistent as mp

    # each list with the B layout it serves: tf32 K-major (column-major B), tf32-swap
    # (row-major B), 16-bit both
    lists = ([("tf32", True), ("tf32-swap", False)] if precision == "tf32"
             else [(precision, False), (precision, True)])
    for key, col in lists:
        a, b = MatmulCase(shape, precision, seed=3, transposed=(False, col)).inputs("cuda")
        for config in mp.CONFIGS[key]:      # same inputs: the last answer's block is poisoned
            out = poisoned(mp._matmul)(a, b, precision, config=config)
            torch.cuda.synchronize()
            assert_correct(out, a, b, precision, False)


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_gpu_cluster_configs(precision):
    """num_ctas=2 through a triton.Config (the probe's cluster variants)."""
    from triton_impl import matmul_persistent as mp
    from triton_impl import tiles_hopper as th

    bk = 32 if precision == "tf32" else 64
    cfg = th.persistent_cfg(128, 256, bk, 8, 3, ctas=2)
    for shape in (MatmulShape(1024, 1024, 1024), MatmulShape(130, 258, 100)):
        a, b = MatmulCase(shape, precision, seed=4, transposed=(False, True)).inputs("cuda")
        assert_correct(poisoned(mp._matmul)(a, b, precision, config=cfg), a, b, precision, False)
