"""CPU tier: the memory-bound Triton twins under TRITON_INTERPRET=1 on small, odd shapes.

Everything the GPU tier checks that the interpreter can run: correctness through the
harness (all modes), the two wrong copies FAILING (the harness catches them), dropout bit for
bit against the Philox reference and its statistics, softmax edge rows, the test image, bad
input. bfloat16 is left to the GPU: the interpreter rounds float32 -> bfloat16 toward zero.
"""
from __future__ import annotations

import math

import pytest
import torch

from bench import check, problems, registry
from bench.families.memory import problems as pm

# The interpreter's numpy warns about what masked-off lanes compute (a padded column of -inf
# gives -inf - -inf, its sum 1 / 0); those lanes are never stored.
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning")]

TRITON = [k for k in registry.select("triton_*") if pm.is_memory_op(k.op)]
BUGS = registry.select("*_copy_bug_*")


@pytest.mark.parametrize("kernel", TRITON, ids=lambda k: k.name)
def test_harness_check_passes_on_the_cpu_shapes(kernel):
    results = check.run([kernel], exact=True, nonfinite=True, device="cpu")
    ran = [r for r in results if r.status != "skip"]
    assert ran, results
    assert not [r for r in results if r.failed], [r for r in results if r.failed]


@pytest.mark.parametrize("kernel", BUGS, ids=lambda k: k.name)
def test_harness_catches_the_wrong_copies(kernel):
    """The guide's two wrong copies must FAIL the default check: n > BLOCK exposes them."""
    results = check.run([kernel], precisions=["fp32", "fp16"], device="cpu")
    failed = [r for r in results if r.status == "FAIL"]
    assert failed, results
    for r in failed:
        assert r.error == 1.0  # the guide's zeros_like output: unwritten elements read 0
    # and only where n exceeds one program's block (the guide needed BLOCK = 2 to see them)
    from triton_impl.copy import BUG_BLOCK

    assert all(int(r.shape) > BUG_BLOCK for r in failed)


def test_cli_check_exits_1_on_the_wrong_copies(capsys):
    from bench import cli

    assert cli.main(["check", "--kernels", "*_bug_*", "--shapes", "4099"]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL") >= 2


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_harness_catches_the_softmax_that_flushes_small_outputs(precision):
    """Zeroing every output below 5e-4 of the row maximum (76% of them at 64 x 1000 in
    float16) must FAIL: the error is relative to each output, not to the row maximum."""
    from bench import problems, registry
    from triton_impl import softmax

    kernel = registry.get("triton_softmax_bug_flush_small")
    problem = problems.get("softmax")
    shape = problem.parse_shape("64x1000")
    r = check.check_one(kernel, problem, shape, precision, device="cpu")
    assert r.status == "FAIL" and r.error > 0.5, r
    x, _dim = problem.inputs(shape, precision)
    y = softmax.softmax_bug_flush_small(x)
    if precision == "fp16":
        assert float((y == 0).float().mean()) > 0.7              # the 76%
    good = registry.get("triton_softmax_online")
    assert check.check_one(good, problem, shape, precision, device="cpu").status == "ok"


def test_wrong_copies_write_only_the_first_block():
    from triton_impl import copy

    x = torch.randn(3 * copy.BUG_BLOCK + 5)
    for f in (copy.copy_bug_offsets_ignore_pid, copy.copy_bug_pid_times_n):
        z = f(x)
        assert torch.equal(z[: copy.BUG_BLOCK], x[: copy.BUG_BLOCK])
        assert bool((z[copy.BUG_BLOCK:] == 0).all())
    assert torch.equal(copy.copy(x), x)


# --------------------------------------------------------------------------- add, copy

@pytest.mark.parametrize("n", [1, 2, 7, 97, 4095, 4096, 4097, 8195])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_add_and_copy_any_length(n, dtype):
    from triton_impl import copy, vector_add

    x, y = torch.randn(n).to(dtype), torch.randn(n).to(dtype)
    assert torch.equal(vector_add.vector_add(x, y), (x.float() + y.float()).to(dtype))
    assert torch.equal(copy.copy(x), x)


def test_misaligned_and_non_contiguous_inputs():
    from triton_impl import copy, vector_add

    base = torch.randn(5001)
    x = base[1:]                                  # contiguous, 4 bytes past 16-byte alignment
    assert x.data_ptr() % 16 != 0
    y = torch.randn(5000)
    assert torch.equal(vector_add.vector_add(x, y), x + y)
    assert torch.equal(copy.copy(x), x)
    t = torch.randn(70, 90).T                     # a transposed view
    assert torch.equal(copy.copy(t), t) and copy.copy(t).is_contiguous()
    assert torch.equal(vector_add.vector_add(t, t), t + t)


def test_alignment_of_fake_tensors_comes_from_the_storage_offset():
    """Traced with fake tensors (torch.compile, opcheck), the wrappers never ask a fake
    tensor for its address: PyTorch warns that it is meaningless (some releases refuse)."""
    import warnings

    from torch._subclasses.fake_tensor import FakeTensorMode

    from triton_impl._memory import aligned16

    with FakeTensorMode(), warnings.catch_warnings():
        warnings.simplefilter("error")             # the data_ptr() warning would fail here
        base = torch.empty(40, 8)
        assert aligned16(base) and aligned16(base[2:])          # 64 bytes in
        assert not aligned16(base[:, 1]) and not aligned16(base.view(-1)[1:])   # 4 bytes in


@pytest.mark.parametrize("call, kind, message", [
    (lambda m: m.vector_add.vector_add(torch.ones(3, dtype=torch.int64), torch.ones(3)), TypeError,
     "triton_vector_add: x must be float32, float16 or bfloat16, got int64"),
    (lambda m: m.vector_add.vector_add(torch.ones(3), torch.ones(4)), ValueError,
     "triton_vector_add: x and y must have the same shape"),
    (lambda m: m.vector_add.vector_add(torch.ones(3), torch.ones(3).half()), TypeError,
     "triton_vector_add: x and y must have the same dtype, got float32 and float16"),
    (lambda m: m.copy.copy([1.0, 2.0]), TypeError, "triton_copy: x must be a torch.Tensor"),
    (lambda m: m.relu_dropout.relu_dropout(torch.ones(3), 1.0, 0), ValueError,
     r"triton_relu_dropout: p must be in \[0, 1\), got 1.0"),
    (lambda m: m.relu_dropout.relu_dropout(torch.ones(3), 0.5, -1), ValueError,
     "triton_relu_dropout: seed must be >= 0"),
    (lambda m: m.softmax.softmax_online(torch.ones(3, 4), 2), ValueError,
     r"triton_softmax_online: dim must be in \[-2, 1\] for a 2-D tensor, got 2"),
    (lambda m: m.softmax.softmax_online(torch.tensor(1.0), 0), ValueError,
     "at least one dimension"),
    (lambda m: m.softmax.softmax_row_sram(torch.ones(2, 40000), -1), ValueError,
     "triton_softmax_row_sram: a row of 40000 elements .* does not fit in SRAM: at most 32768"),
    (lambda m: m.rgb_to_grey.rgb_to_grey(torch.ones(3, 4, 4)), TypeError,
     "triton_rgb_to_grey: the image must be uint8, got float32"),
    (lambda m: m.rgb_to_grey.rgb_to_grey(torch.ones(4, 4, dtype=torch.uint8)), ValueError,
     r"triton_rgb_to_grey: the image must be 3 x H x W .*got shape \(4, 4\)"),
])
def test_bad_inputs_raise_clear_errors(call, kind, message):
    import triton_impl.copy
    import triton_impl.relu_dropout
    import triton_impl.rgb_to_grey
    import triton_impl.softmax
    import triton_impl.vector_add

    with pytest.raises(kind, match=message):
        call(triton_impl)


# --------------------------------------------------------------------------- dropout

@pytest.mark.parametrize("n", [1, 3, 4, 5, 4099, 12289])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("seed", [0, 13, 2**40 + 7])
def test_dropout_is_the_philox_reference_bit_for_bit(n, dtype, seed):
    from triton_impl.relu_dropout import relu_dropout

    x = torch.randn(n).to(dtype)
    assert torch.equal(relu_dropout(x, 0.3, seed), pm.relu_dropout_expected(x, 0.3, seed))


def test_dropout_p_zero_is_relu_exactly_and_keeps_nan():
    from triton_impl.relu_dropout import relu_dropout

    x = torch.randn(10007)
    x[5] = math.nan
    out = relu_dropout(x, 0.0, 99)
    assert torch.allclose(out, torch.relu(x), rtol=0, atol=0, equal_nan=True)   # bit for bit
    assert math.isnan(out[5])


def test_dropout_is_deterministic_for_a_seed():
    from triton_impl.relu_dropout import relu_dropout

    x = torch.randn(5000)
    a, b = relu_dropout(x, 0.5, 1234), relu_dropout(x, 0.5, 1234)
    assert torch.equal(a, b)
    assert not torch.equal(a, relu_dropout(x, 0.5, 1235))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_keep_rate_and_scaling(p):
    """Among positive inputs the kept fraction is within 5 sigma of Binomial(n, 1 - p), and a
    kept element is exactly x / (1 - p) rounded (a bound that fails for a wrong p or scale)."""
    from triton_impl.relu_dropout import relu_dropout

    x = torch.rand(1 << 16) + 0.5               # all positive
    out = relu_dropout(x, p, 2024)
    kept = out != 0
    assert pm.keep_rate_z(int(kept.sum()), x.numel(), p) <= pm.KEEP_RATE_SIGMAS
    scale = torch.tensor(1.0 / (1.0 - p), dtype=torch.float32)
    assert torch.equal(out[kept], x[kept] * scale)
    assert abs(float(out.mean()) - float(x.mean())) < 0.02 * float(x.mean()) + 5 * float(
        x.std()) / math.sqrt(x.numel()) / (1 - p)


# --------------------------------------------------------------------------- softmax

@pytest.mark.parametrize("version", ["row_sram", "online", "online_chunked"])
def test_softmax_rows_of_length_one_and_minus_inf(version, monkeypatch):
    from triton_impl import softmax

    if version == "online_chunked":      # rows of several 16-element chunks: the online loops
        monkeypatch.setattr(softmax, "ONLINE_CONFIG", {4: (16, 1), 2: (16, 1)})
        monkeypatch.setattr(softmax, "ONE_CHUNK_MAX_N", 0)
    f = softmax.softmax_row_sram if version == "row_sram" else softmax.softmax_online
    assert torch.equal(f(torch.randn(5, 1), -1), torch.ones(5, 1))
    x = torch.randn(4, 37)
    x[0] = -math.inf                    # all -inf: NaN, as torch.softmax
    x[1, :20] = -math.inf               # some -inf: zeros there
    y = f(x, -1)
    ref = torch.softmax(x, -1)
    assert torch.isnan(y[0]).all() and torch.isnan(ref[0]).all()
    assert bool((y[1, :20] == 0).all())
    torch.testing.assert_close(y[1:], ref[1:], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("version", ["row_sram", "online"])
@pytest.mark.parametrize("shape, dim", [((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), 2),
                                        ((2, 300), 0), ((7, 1), 0)])
def test_softmax_over_any_dim(version, shape, dim):
    from triton_impl import softmax

    x = torch.randn(shape) * 4
    y = softmax.softmax(x, dim, version)
    torch.testing.assert_close(y, torch.softmax(x, dim), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("keep", [False, True])
def test_online_softmax_chunked_rows_both_cache_policies(keep, monkeypatch):
    from triton_impl import softmax

    monkeypatch.setattr(softmax, "ONLINE_CONFIG", {4: (32, 1), 2: (32, 1)})
    monkeypatch.setattr(softmax, "ONE_CHUNK_MAX_N", 0)   # rows of up to 32768 are one chunk
    monkeypatch.setattr(softmax, "ONLINE_KEEP", keep)
    x = torch.randn(5, 101) * 3          # 4 chunks, the last one ragged; max in any chunk
    x[2, 70] = 40.0
    torch.testing.assert_close(softmax.softmax_online(x, -1), torch.softmax(x, -1), rtol=1e-5,
                               atol=1e-7)


def test_online_softmax_takes_rows_longer_than_sram():
    from triton_impl import softmax

    x = torch.randn(2, 40000) * 2
    y = softmax.softmax_online(x, -1)
    torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-5, atol=1e-9)
    xt = torch.randn(33000, 3)
    torch.testing.assert_close(softmax.softmax_online(xt, 0), torch.softmax(xt, 0), rtol=1e-5,
                               atol=1e-9)


def test_softmax_fp16_within_the_bound():
    from triton_impl import softmax

    p = problems.get("softmax")
    s = p.parse_shape("16x300")
    x, dim = p.inputs(s, "fp16", seed=3)
    for version in ("row_sram", "online"):
        assert p.error(softmax.softmax(x, dim, version), (x, dim)) <= p.tolerance(s, "fp16")


# --------------------------------------------------------------------------- rgb -> grey

def test_rgb_to_grey_on_the_test_image():
    from bench import images
    from triton_impl.rgb_to_grey import rgb_to_grey

    img = images.test_image()
    grey = rgb_to_grey(img)
    for name, (r, c, level) in images.landmarks().items():
        assert int(grey[r, c]) == level, name
    p = problems.get("rgb_to_grey")
    assert p.error(grey, (img,)) <= p.tolerance(p.parse_shape("3x150x225"), "u8")


def test_online_softmax_64_bit_paths():
    """The WIDE variants (64-bit offsets and an int64 loop counter, chosen by the wrapper for
    rows or columns near 2^31) compute the same softmax; forced here on small tensors."""
    from triton_impl import _common
    from triton_impl import softmax as s

    x = torch.randn(3, 300)
    y = torch.empty_like(x)
    _common.launch(s.softmax_row_online_kernel, (3,), x, y, 300, BLOCK=64, VEC=1,
                   ONE_CHUNK=False, KEEP=False, WIDE=True, num_warps=1)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    y = torch.empty_like(x)
    _common.launch(s.softmax_cols_online_kernel, (300,), x, y, 3, 300, 300, BLOCK_N=2,
                   BLOCK_I=1, WIDE=True, num_warps=1)
    torch.testing.assert_close(y, torch.softmax(x, 0))
