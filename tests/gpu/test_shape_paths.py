"""GPU tier: the paths for shapes that are not one big GEMM (docs/performance/shapes.md).

The TMA rungs staged into padded buffers where unaligned and compute-bound (t2 to t5 and
cuda_split_k: their own kernel runs, bit for bit what it gives on inputs padded by hand);
cuda_skinny (M or N <= 16) at both of its cases, vector and scalar loads, one split and
many; its Triton twin triton_skinny likewise, with forced splits; cuda_split_k where it
splits, repeatable bit for bit; triton_split_k with forced splits; and cuda_auto and
triton_auto at every shape of the shape suite and every precision, against float64: five small shapes in the fast tier (one skinny at each of
1 and 16 rows, 128 tokens, few tiles, a square), all 47 in the slow one.
"""
from __future__ import annotations

import pytest
import torch

from bench import problems, registry
from bench.catalog.matmul_shape_paths import skinny_record, triton_skinny_record
from bench.check import check_one
from bench.families.matmul import suite
from bench.families.matmul.models import MatmulShape, tma_shape
from bindings import precision as prec
from tests.support.checks import assert_matches_float64, poisoned, poisoned_runner
from tests.support.gpu_memory import GROUP

TMA_RUNGS = [k for k in registry.kernels()        # cuda_split_k: t2's loads, staged alike
             if k.backend == "cuda" and k.version in ("t2", "t3", "t4", "t5", "split-k")]
TMA_CASES = [(k, p) for k in TMA_RUNGS for p in k.precisions]
TMA_IDS = [f"{k.name}-{p}" for k, p in TMA_CASES]


def _check(kernel, precision, shape, mode="random"):
    return check_one(kernel, problems.get("matmul"), shape, precision, mode,
                     seed=shape.M + shape.N + shape.K, device="cuda")


def _matrix(rows, cols, dtype, g, misaligned=False):
    flat = torch.randn(rows * cols + misaligned, generator=g).to(dtype).cuda()
    return flat[int(misaligned):].view(rows, cols)


# Unaligned and compute-bound (above 64 FLOP per compulsory byte): staged.
STAGED = [MatmulShape(1000, 1001, 1003), MatmulShape(777, 1032, 1030),
          MatmulShape(1024, 1030, 1024), MatmulShape(513, 515, 4097)]


@pytest.mark.parametrize("kernel,precision", TMA_CASES, ids=TMA_IDS)
@pytest.mark.parametrize("shape", STAGED, ids=str)
def test_unaligned_and_compute_bound_is_staged(kernel, precision, shape):
    """The op's answer is its own kernel's on the same values padded by hand with zeros
    (K and N rounded up to 16 bytes), bit for bit, and it passes the float64 check."""
    per_16 = 4 if precision == "tf32" else 8
    padded = tma_shape(shape, per_16, prec.element_bytes(precision))
    assert padded is not None and padded != shape
    assert _check(kernel, precision, shape).status == "ok"
    g = torch.Generator().manual_seed(11)
    dtype = prec.torch_dtype(precision)
    run = poisoned_runner(kernel, precision)
    a = _matrix(shape.M, shape.K, dtype, g)
    b = _matrix(shape.K, shape.N, dtype, g)
    ap = torch.zeros(shape.M, padded.K, dtype=dtype, device="cuda")
    bp = torch.zeros(padded.K, padded.N, dtype=dtype, device="cuda")
    ap[:, :shape.K] = a
    bp[:shape.K, :shape.N] = b
    assert torch.equal(run(a, b), run(ap, bp)[:, :shape.N])


@pytest.mark.parametrize("kernel,precision", TMA_CASES, ids=TMA_IDS)
def test_a_misaligned_pointer_is_staged_too(kernel, precision):
    g = torch.Generator().manual_seed(12)
    dtype = prec.torch_dtype(precision)
    a = _matrix(1024, 1024, dtype, g, misaligned=True)
    b = _matrix(1024, 1024, dtype, g)
    assert a.data_ptr() % 16 != 0
    out = poisoned_runner(kernel, precision)(a, b)
    assert_matches_float64("matmul", out, (a, b), precision)
    assert torch.equal(out, poisoned_runner(kernel, precision)(a.clone(), b))


# triton_auto's padding for matmul_autotuned (N and K up to 16), reached at small products
# with the compute-bound threshold lowered: N odd, N 16-byte aligned but not 16 values, K odd.
PADDED = [MatmulShape(67, 131, 45), MatmulShape(129, 4100, 35), MatmulShape(300, 257, 1031)]


@pytest.mark.parametrize("shape", PADDED, ids=str)
def test_triton_auto_pads_the_autotuned_kernels_operands(monkeypatch, shape):
    """triton_auto at fp32 (matmul_autotuned on every GPU) through its padded copies:
    against float64, its output poisoned first, C contiguous and the caller's shape."""
    from triton_impl import matmul_auto

    monkeypatch.setattr(matmul_auto, "PAD_MIN_MACS", 0)
    assert matmul_auto.choose(shape.M, shape.N, shape.K, "fp32", 132, True) == "matmul_autotuned"
    assert matmul_auto.padded_sizes(shape.M, shape.N, shape.K, "matmul_autotuned") != (
        shape.N, shape.K)
    g = torch.Generator().manual_seed(13)
    a = _matrix(shape.M, shape.K, torch.float32, g)
    b = _matrix(shape.K, shape.N, torch.float32, g)
    out = poisoned_runner(registry.get("triton_auto"), "fp32")(a, b)
    assert out.shape == (shape.M, shape.N) and out.is_contiguous()
    assert_matches_float64("matmul", out, (a, b), "fp32")


SKINNY_SHAPES = [MatmulShape(m, n, k) for m, n, k in (
    (1, 4096, 4096), (3, 8192, 1000), (16, 1000, 777), (16, 16, 16), (1, 1, 1),
    (8192, 1, 4096), (4096, 3, 999), (1000, 16, 4100), (5, 7, 0), (2, 4099, 65537),
    (9, 300, 3), (16, 17, 100000))]


@pytest.mark.parametrize("precision", ("fp32", "tf32", "fp16", "bf16"))
@pytest.mark.parametrize("name", ("cuda_skinny", "triton_skinny", "triton_split_k"))
def test_skinny_paths(name, precision):
    kernel = {"cuda_skinny": skinny_record, "triton_skinny": triton_skinny_record}.get(
        name, lambda: registry.get(name))()
    for shape in SKINNY_SHAPES:
        assert _check(kernel, precision, shape).status == "ok", (name, shape)
        assert _check(kernel, precision, shape, mode="exact").status == "ok", (name, shape)


@pytest.mark.parametrize("precision", ("fp32", "bf16"))
@pytest.mark.parametrize("record", (skinny_record, triton_skinny_record))
def test_skinny_misaligned_and_strided(record, precision):
    """Pointers off 16 bytes (the scalar loads) and transposed operands (cuda_skinny makes them
    contiguous, triton_skinny reads them through their strides)."""
    g = torch.Generator().manual_seed(13)
    dtype = prec.torch_dtype(precision)
    run = poisoned_runner(record(), precision)
    for a, b in ((_matrix(3, 1000, dtype, g, True), _matrix(1000, 4096, dtype, g, True)),
                 (_matrix(4096, 1000, dtype, g, True), _matrix(1000, 5, dtype, g, True)),
                 (_matrix(7, 512, dtype, g), _matrix(2048, 512, dtype, g).t()),
                 (_matrix(1000, 4096, dtype, g).t(), _matrix(1000, 9, dtype, g))):
        assert_matches_float64("matmul", run(a, b), (a, b), precision)


def test_skinny_opcheck():
    """The skinny op's schema, fake kernel and autograd registration (its backward runs what
    cuda_auto picks), in both of its cases."""
    import bindings

    op = bindings.ops().matmul_skinny
    for m, n in ((3, 29), (33, 5)):
        a, b = torch.randn(m, 17, device="cuda"), torch.randn(17, n, device="cuda")
        torch.library.opcheck(op.default, (a, b), test_utils=(
            "test_schema", "test_faketensor", "test_aot_dispatch_static"))


def test_skinny_refuses_shapes_that_are_not():
    import bindings

    a = torch.zeros(17, 8, device="cuda")
    with pytest.raises(RuntimeError, match="matmul_skinny.*17"):
        bindings.ops().matmul_skinny(a, torch.zeros(8, 17, device="cuda"))


@pytest.mark.parametrize("precision", ("fp32", "tf32", "fp16", "bf16"))
@pytest.mark.parametrize("splits", (2, 7, 64))
def test_split_k_forced_splits(precision, splits):
    from triton_impl import matmul_split_k

    g = torch.Generator().manual_seed(splits)
    dtype = prec.torch_dtype(precision)
    run = poisoned(lambda a, b: matmul_split_k._matmul(a, b, precision, splits=splits))
    for m, n, k in ((128, 128, 8192), (300, 257, 5000), (16, 4096, 3000), (4096, 9, 2000)):
        a, b = _matrix(m, k, dtype, g), _matrix(k, n, dtype, g)
        assert_matches_float64("matmul", run(a, b), (a, b), precision)


@pytest.mark.parametrize("precision", ("fp32", "tf32", "bf16"))
@pytest.mark.parametrize("splits", (1, 2, 7, 64))
def test_triton_skinny_forced_splits_repeat_bit_for_bit(precision, splits):
    """triton_skinny on both of its sides with the k loop forced into `splits` (the sum over
    splits in split order): against float64, and the same bits on a second run."""
    from triton_impl import matmul_skinny

    g = torch.Generator().manual_seed(splits)
    dtype = prec.torch_dtype(precision)
    run = poisoned(lambda a, b: matmul_skinny._matmul(a, b, precision, splits=splits))
    for m, n, k in ((16, 4096, 3000), (4096, 9, 2000), (1, 5000, 4099), (8192, 1, 777),
                    (3, 3, 1000)):
        a, b = _matrix(m, k, dtype, g), _matrix(k, n, dtype, g)
        out = run(a, b)
        assert_matches_float64("matmul", out, (a, b), precision)
        assert torch.equal(out, run(a, b)), (m, n, k)


# cuda_split_k where it splits (bindings/auto.splits): one tile in 128 runs of 16 k tiles,
# edge tiles with a partial last k tile (K staged to 4104), 8 rows of one tile, 2 splits;
# M = 64 and 65 on either side of cuda_split_k's 64-row tile (CVT_SPLIT_K_SHORT_BM).
SPLIT_SHAPES = [MatmulShape(128, 128, 131072), MatmulShape(264, 264, 4100),
                MatmulShape(8, 200, 65536), MatmulShape(1000, 1000, 4099),
                MatmulShape(136, 520, 20000), MatmulShape(64, 264, 8200),
                MatmulShape(65, 136, 16384)]


@pytest.mark.parametrize("name,precision", [("cuda_split_k", "fp16"), ("cuda_split_k", "bf16"),
                                            ("cuda_split_k_tf32", "tf32"),
                                            ("cuda_split_k_fp32", "fp32")])
def test_cuda_split_k_shares_the_k_loop(name, precision):
    """cuda_split_k, cuda_split_k_tf32 and cuda_split_k_fp32 where they split: the float64
    check (random and exact), and the same bits on a second call (the partials are summed in
    split order)."""
    from bindings import auto

    kernel = registry.get(name)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    g = torch.Generator().manual_seed(14)
    dtype = prec.torch_dtype(precision)
    run = poisoned_runner(kernel, precision)
    for shape in SPLIT_SHAPES:
        assert auto.splits(shape.M, shape.N, shape.K, sms, precision) > 1, shape
        assert _check(kernel, precision, shape).status == "ok", shape
        assert _check(kernel, precision, shape, mode="exact").status == "ok", shape
        a, b = _matrix(shape.M, shape.K, dtype, g), _matrix(shape.K, shape.N, dtype, g)
        assert torch.equal(run(a, b), run(a, b)), shape


FAST_SUITE_SHAPES = ("attn-1", "attn-16", "attn-128", "few-1000", "square-1024")


def _suite_params():
    out = []
    for name, category, text in suite.SUITE:
        s = MatmulShape.parse(text)
        marks = [] if name in FAST_SUITE_SHAPES else [pytest.mark.slow]
        if max(s.M * s.K, s.K * s.N, s.M * s.N) >= 2 ** 26:
            # its float64 references take gigabytes (tf32: several at once): one at a time
            marks.append(pytest.mark.xdist_group(GROUP))
        out.append(pytest.param(s, id=f"{name}-{text}", marks=marks))
    return out


@pytest.mark.parametrize("precision", ("fp32", "tf32", "fp16", "bf16"))
@pytest.mark.parametrize("shape", _suite_params())
def test_auto_at_every_suite_shape(shape, precision):
    for name in ("cuda_auto", "triton_auto"):
        result = _check(registry.get(name), precision, shape)
        assert result.status == "ok", (name, result)
