"""GPU tier: the memory-bound CUDA kernels, their Triton twins and the PyTorch references.

Every dtype and mode through the harness's check (float64 references, poisoned outputs),
odd lengths and misaligned pointers (the scalar paths), non-contiguous inputs, bad input,
dropout bit for bit between the twins and the Philox reference plus its statistics, softmax
edge rows and rows of any length, the test image, torch.compile and opcheck; slow: 64-bit
offsets and the standalone driver's own check (cuda/driver/memory_driver.cu).
(compute-sanitizer: tests/gpu/test_sanitizer.py.)
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bench import check, problems, registry
from bench.families.memory import problems as pm
from tests.support.checks import assert_matches_float64, output_nbytes, poisoned
from tests.support.drivers import memory_driver_command
from tests.support.gpu_memory import GROUP, inputs_or_skip

ROOT = Path(__file__).resolve().parents[2]
MINE = [k for k in registry.select("cuda_*,triton_*,torch_*") if pm.is_memory_op(k.op)]
FLOATS = ("float32", "float16", "bfloat16")


@pytest.fixture(scope="module")
def ops():
    import bindings
    from bindings import _fake_memory

    cvt = bindings.ops()
    _fake_memory.register()  # no-op once bindings/_fake.py registers it
    return cvt


@pytest.fixture(scope="module")
def tops():
    """The Triton twins' ops (torch.ops.cvt_triton.*)."""
    from triton_impl import copy, relu_dropout, rgb_to_grey, softmax, softmax_split, vector_add

    return dict(vector_add=vector_add.op(), copy=copy.op(), relu_dropout=relu_dropout.op(),
                softmax_row_sram=softmax.op("row_sram"), softmax_online=softmax.op("online"),
                softmax_split=softmax_split.op(), rgb_to_grey=rgb_to_grey.op())


def both(ops, tops, name):
    """The CUDA op and its Triton twin, each poisoning its output's allocator block before
    every call: the twins run one after the other on the same inputs, and without it the
    second could be handed the first one's answer and pass while writing nothing."""
    op = "softmax" if name.startswith("softmax") else name
    return [poisoned(getattr(ops, name), output_nbytes(op)),
            poisoned(tops[name], output_nbytes(op))]


def dtype(name):
    import torch

    return getattr(torch, name)


# --------------------------------------------------------------------------- the harness

@pytest.mark.parametrize("kernel", MINE, ids=lambda k: k.name)
def test_check_every_dtype_and_mode(kernel):
    results = check.run([kernel], exact=True, nonfinite=True, device="cuda")
    assert [r for r in results if r.status == "ok"], results
    failed = [r for r in results if r.failed]
    assert not failed, failed


COMPILE_SHAPES = {"vector_add": "1000003", "copy": "4099", "relu_dropout": "1000x1000",
                  "softmax": "1000x1000,1000x1000:dim=0", "rgb_to_grey": "3x150x225"}


@pytest.mark.parametrize("op", list(COMPILE_SHAPES))
def test_torch_compile_references(op):
    kernel = registry.get(f"compile_{op}")
    results = check.run([kernel], shapes=COMPILE_SHAPES[op], precisions=[kernel.precisions[0]],
                        device="cuda")
    assert results and not [r for r in results if r.failed], results


# --------------------------------------------------------------------------- odd lengths

LENGTHS = [1, 2, 3, 5, 7, 31, 97, 4093, 4097, 65537, 1000003]


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "misaligned"])
def test_elementwise_any_length(ops, tops, name, offset):
    import torch

    dt = dtype(name)
    for n in LENGTHS:
        base = torch.randn(n + offset, device="cuda").to(dt)
        x = base[offset:]                       # offset 1: not 16-byte aligned (scalar path)
        y = torch.randn(n, device="cuda").to(dt)
        for add in both(ops, tops, "vector_add"):
            assert torch.equal(add(x, y), (x.float() + y.float()).to(dt)), (n, offset)
        for copy in both(ops, tops, "copy"):
            assert torch.equal(copy(x), x), (n, offset)
        expected = pm.relu_dropout_expected(x, 0.25, 77)
        for drop in both(ops, tops, "relu_dropout"):
            assert torch.equal(drop(x, 0.25, 77), expected), (n, offset)


def test_non_contiguous_inputs(ops, tops):
    import torch

    t = torch.randn(300, 257, device="cuda").T           # transposed view
    s = torch.randn(1000, device="cuda")[::3]            # strided view
    for x in (t, s):
        for add in both(ops, tops, "vector_add"):
            out = add(x, x)
            assert_matches_float64("vector_add", out, (x, x), "fp32")
            assert torch.equal(out, x + x)
        for copy in both(ops, tops, "copy"):
            out = copy(x)
            assert torch.equal(out, x) and out.is_contiguous()
        for drop in both(ops, tops, "relu_dropout"):
            assert torch.equal(drop(x, 0.5, 3), pm.relu_dropout_expected(x.contiguous(), 0.5, 3))
    for name in ("softmax_row_sram", "softmax_online"):
        for f in both(ops, tops, name):
            for dim in (0, 1):
                y = f(t, dim)
                assert_matches_float64("softmax", y, (t, dim), "fp32")
                torch.testing.assert_close(y, torch.softmax(t, dim), rtol=1e-5, atol=1e-7)
    img = torch.randint(0, 256, (3, 40, 100), device="cuda", dtype=torch.uint8)[:, :, ::2]
    ref = registry.get("torch_rgb_to_grey").runner("u8")(img)
    for grey in both(ops, tops, "rgb_to_grey"):
        out = grey(img)
        assert_matches_float64("rgb_to_grey", out, (img,), "u8")
        assert (out.int() - ref.int()).abs().max() <= 1


def test_empty_inputs(ops, tops):
    import torch

    e = torch.empty(0, device="cuda")
    for f in both(ops, tops, "copy"):
        assert f(e).shape == (0,)
    for f in both(ops, tops, "softmax_online"):
        assert f(torch.empty(0, 5, device="cuda"), -1).shape == (0, 5)
    for f in both(ops, tops, "rgb_to_grey"):
        assert f(torch.empty(3, 0, 7, dtype=torch.uint8, device="cuda")).shape == (0, 7)


# --------------------------------------------------------------------------- bad input

def _cuda_bad_inputs():
    import torch

    f32 = dict(device="cuda")
    return [
        ("vector_add", (torch.ones(4, **f32), torch.ones(5, **f32)), "vector_add: x and y must have the same shape"),
        ("vector_add", (torch.ones(4, **f32), torch.ones(4, **f32).half()), "vector_add: x and y must have the same dtype"),
        ("vector_add", (torch.ones(4), torch.ones(4)), "vector_add: x and y must be CUDA tensors, got cpu and cpu"),
        ("copy", (torch.ones(4, dtype=torch.int32, **f32),), "copy: x must be float32, float16 or bfloat16, got Int"),
        ("copy", (torch.ones(4),), "copy: x must be a CUDA tensor, got cpu"),
        ("relu_dropout", (torch.ones(4, **f32), 1.0, 0), r"relu_dropout: p must be in [0, 1), got 1"),
        ("relu_dropout", (torch.ones(4, **f32), 0.5, -3), "relu_dropout: seed must be >= 0, got -3"),
        ("relu_dropout", (torch.ones(4), 0.5, 1), "relu_dropout: x must be a CUDA tensor, got cpu"),
        ("softmax_online", (torch.ones(3, 4, **f32), 2), "softmax_online: dim must be in [-2, 1] for a 2-D tensor, got 2"),
        ("softmax_online", (torch.tensor(1.0, **f32), 0), "softmax_online: x must have at least one dimension"),
        ("softmax_row_sram", (torch.ones(2, 32769, **f32), -1), "softmax_row_sram: a row of 32769 elements"),
        ("softmax_row_sram", (torch.ones(2, 3), 0), "softmax_row_sram: x must be a CUDA tensor, got cpu"),
        ("softmax_split", (torch.ones(3, 4, **f32), 0), "softmax_split: rows only: dim must be the last (1 or -1) for a 2-D tensor, got 0"),
        ("softmax_split", (torch.ones(3, 4, dtype=torch.float64, **f32), -1), "softmax_split: x must be float32, float16 or bfloat16"),
        ("softmax_split", (torch.ones(2, 3), -1), "softmax_split: x must be a CUDA tensor, got cpu"),
        ("rgb_to_grey", (torch.ones(3, 4, 4, **f32),), "rgb_to_grey: the image must be uint8, got Float"),
        ("rgb_to_grey", (torch.ones(4, 4, 4, dtype=torch.uint8, **f32),), "rgb_to_grey: the image must be 3 x H x W"),
        ("rgb_to_grey", (torch.ones(3, 4, 4, dtype=torch.uint8),), "rgb_to_grey: the image must be a CUDA tensor, got cpu"),
    ]


def test_cuda_ops_reject_bad_input_with_clear_errors(ops):
    for name, args, message in _cuda_bad_inputs():
        with pytest.raises(RuntimeError) as info:
            getattr(ops, name)(*args)
        assert message in str(info.value), (name, str(info.value))


def test_triton_ops_reject_bad_input_with_clear_errors(tops):
    import torch

    with pytest.raises(ValueError, match="triton_copy: x must be on a CUDA device"):
        tops["copy"](torch.ones(4))
    with pytest.raises(ValueError, match="does not fit in SRAM"):
        tops["softmax_row_sram"](torch.ones(2, 32769, device="cuda"), -1)
    with pytest.raises(TypeError, match="triton_rgb_to_grey: the image must be uint8"):
        tops["rgb_to_grey"](torch.ones(3, 4, 4, device="cuda"))
    with pytest.raises(ValueError, match="triton_softmax_split: softmax over the last dimension only"):
        tops["softmax_split"](torch.ones(3, 4, device="cuda"), 0)


# --------------------------------------------------------------------------- dropout

@pytest.mark.parametrize("name", FLOATS)
def test_dropout_twins_drop_the_same_elements(ops, tops, name):
    import torch

    x = torch.randn(1_000_003, device="cuda").to(dtype(name))
    for seed in (0, 13, 2**40 + 7):
        expected = pm.relu_dropout_expected(x, 0.3, seed)
        for drop in both(ops, tops, "relu_dropout"):
            assert torch.equal(drop(x, 0.3, seed), expected)


def test_dropout_p_zero_is_relu_exactly(ops, tops):
    import torch

    x = torch.randn(1 << 20, device="cuda")
    x[7] = math.nan
    for drop in both(ops, tops, "relu_dropout"):
        out = drop(x, 0.0, 5)
        assert_matches_float64("relu_dropout", out, (x, 0.0, 5), "fp32")
        assert torch.allclose(out, torch.relu(x), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_statistics(ops, tops, p):
    """Keep rate within 5 sigma of Binomial(n, 1 - p), kept values exactly x / (1 - p), for
    two seeds; different seeds give different masks, one seed the same mask."""
    import torch

    x = torch.rand(1 << 22, device="cuda") + 0.5
    scale = torch.tensor(1.0 / (1.0 - p), dtype=torch.float32, device="cuda")
    for drop in both(ops, tops, "relu_dropout"):
        a, b, c = drop(x, p, 11), drop(x, p, 11), drop(x, p, 12)
        assert torch.equal(a, b) and not torch.equal(a, c)
        for out in (a, c):
            kept = out != 0
            assert pm.keep_rate_z(int(kept.sum()), x.numel(), p) <= pm.KEEP_RATE_SIGMAS
            assert torch.equal(out[kept], x[kept] * scale)


# --------------------------------------------------------------------------- softmax

def _softmax_error(y, x, dim):
    p = problems.get("softmax")
    return p.error(y, (x, dim))


@pytest.mark.parametrize("shape, dim", [((8, 100_003), -1), ((1, 2_000_003), -1),
                                        ((100_003, 5), 0), ((3, 40_000, 2), 1)])
def test_online_softmax_any_length(ops, tops, shape, dim):
    import torch

    p = problems.get("softmax")
    x = torch.randn(shape, device="cuda") * 3
    for name in FLOATS:
        xd = x.to(dtype(name))
        s = p.parse_shape("x".join(map(str, shape)) + ("" if dim == -1 else f":dim={dim}"))
        for f in both(ops, tops, "softmax_online"):
            assert _softmax_error(f(xd, dim), xd, dim) <= p.tolerance(s, {"float32": "fp32",
                "float16": "fp16", "bfloat16": "bf16"}[name])


def test_sram_softmax_at_its_limit(ops, tops):
    import torch

    x = torch.randn(64, 32768, device="cuda")
    bound = problems.get("softmax").tolerance(problems.get("softmax").parse_shape("64x32768"), "fp32")
    for f in both(ops, tops, "softmax_row_sram"):
        assert _softmax_error(f(x, -1), x, -1) <= bound
        xt = torch.randn(20000, 3, device="cuda")      # a column of 20000: the spilling tile
        assert _softmax_error(f(xt, 0), xt, 0) <= bound


def test_16_bit_rows_take_the_packed_paths(ops, tops):
    """float16 / bfloat16 rows (dim = -1) run the CUDA kernels that keep them in their own
    type: row_sram's 64 KiB rows at 32768 (three blocks per SM), online's one-step rows of
    32768 and several steps beyond; aligned (16-byte vectors) and odd lengths (scalar)."""
    p = problems.get("softmax")
    for text in ("64x32768", "33x32767", "16x70000", "8x70001"):
        s = p.parse_shape(text)
        for prec in ("fp16", "bf16"):
            x, dim = p.inputs(s, prec, seed=4, device="cuda")
            names = ("softmax_online",) if s.dims[-1] > 32768 else ("softmax_row_sram",
                                                                    "softmax_online")
            for name in names:
                for f in both(ops, tops, name):
                    assert _softmax_error(f(x, dim), x, dim) <= p.tolerance(s, prec), (text, prec, name)


@pytest.mark.parametrize("version", ["softmax_row_sram", "softmax_online"])
def test_softmax_rows_of_length_one_and_of_minus_inf(ops, tops, version):
    import torch

    for f in both(ops, tops, version):
        assert torch.equal(f(torch.randn(9, 1, device="cuda"), -1), torch.ones(9, 1, device="cuda"))
        for dim in (-1, 0):
            x = torch.randn(50, 50, device="cuda")
            line = (slice(None), 3) if dim == 0 else (3, slice(None))
            part = (slice(0, 20), 4) if dim == 0 else (4, slice(0, 20))
            x[line] = -math.inf                           # a whole row (along dim) of -inf
            x[part] = -math.inf                           # part of another
            y, ref = f(x, dim), torch.softmax(x, dim)
            assert torch.isnan(y[line]).all() and torch.isnan(ref[line]).all()
            assert bool((y[part] == 0).all())
            assert _softmax_error(y, x, dim) < 1e-5


def test_softmax_fp16_and_bf16(ops, tops):
    p = problems.get("softmax")
    for text in ("4096x4096", "3000x3000:dim=0", "7x9x11:dim=1"):
        s = p.parse_shape(text)
        for prec in ("fp16", "bf16"):
            x, dim = p.inputs(s, prec, seed=2, device="cuda")
            for name in ("softmax_row_sram", "softmax_online"):
                for f in both(ops, tops, name):
                    assert _softmax_error(f(x, dim), x, dim) <= p.tolerance(s, prec), (text, prec, name)


# --------------------------------------------------------------------------- rgb -> grey

def test_rgb_to_grey_on_the_test_image(ops, tops):
    from bench import images

    for h, w in (images.GUIDE_SIZE, (1066, 1600)):
        img = images.test_image(h, w, "cuda")
        greys = [f(img) for f in both(ops, tops, "rgb_to_grey")]
        for grey in greys:
            assert_matches_float64("rgb_to_grey", grey, (img,), "u8")
            for name, (r, c, level) in images.landmarks(h, w).items():
                assert int(grey[r, c]) == level, name
        eager = registry.get("torch_rgb_to_grey").runner("u8")(img)
        for grey in greys:   # within one level: the order of the float32 multiply-adds differs
            assert int((grey.int() - eager.int()).abs().max()) <= 1


# --------------------------------------------------------------------------- torch.compile

def test_torch_compile_fullgraph_through_the_ops(ops, tops):
    """Bit-identical to eager, and every op's output (the compiled graph returns them all)
    within its bound of the float64 reference of its inputs. (Eager and compiled were not
    the same bits until triton_impl/relu_dropout.py cast p and scale to float32 in the
    kernel: Inductor passes Python floats as float64.)"""
    import torch

    from bench.device import poison_free_memory

    def pipeline(o):
        def f(x, y, img):
            s = o["vector_add"](x, y)
            z = o["softmax_online"](s, -1)
            c = o["copy"](z)
            w = o["softmax_row_sram"](c, 0)
            return s, z, c, w, o["relu_dropout"](w, 0.25, 9), o["rgb_to_grey"](img)
        return f

    cvt = {n: getattr(ops, n) for n in ("vector_add", "copy", "relu_dropout", "softmax_row_sram",
                                         "softmax_online", "rgb_to_grey")}
    x, y = torch.randn(67, 45, device="cuda"), torch.randn(67, 45, device="cuda")
    img = torch.randint(0, 256, (3, 33, 65), dtype=torch.uint8, device="cuda")
    for o in (cvt, tops):
        poison_free_memory()              # every output lands on NaN (tests/support/checks.py)
        eager = pipeline(o)(x, y, img)
        poison_free_memory()
        compiled = torch.compile(pipeline(o), fullgraph=True)(x, y, img)
        s, z, c, w, d, g = compiled
        for op, out, inputs in (("vector_add", s, (x, y)), ("softmax", z, (s, -1)),
                                ("copy", c, (z,)), ("softmax", w, (c, 0)),
                                ("relu_dropout", d, (w, 0.25, 9)), ("rgb_to_grey", g, (img,))):
            assert_matches_float64(op, out, inputs, "u8" if op == "rgb_to_grey" else "fp32")
        for i, (a, b) in enumerate(zip(eager, compiled)):
            diff = (a.double() - b.double()).abs()
            assert torch.equal(a, b), (
                f"output {i} ({'cvt' if o is cvt else 'cvt_triton'}): {int((diff > 0).sum())} "
                f"elements differ, largest by {float(diff.max()):.3g}; strides {a.stride()} vs "
                f"{b.stride()}")


def test_opcheck(ops):
    import torch

    x = torch.randn(33, 17, device="cuda")
    img = torch.randint(0, 256, (3, 9, 20), dtype=torch.uint8, device="cuda")
    cases = [(ops.vector_add, (x, x)), (ops.copy, (x,)), (ops.relu_dropout, (x, 0.3, 5)),
             (ops.softmax_row_sram, (x, 0)), (ops.softmax_online, (x, -1)), (ops.rgb_to_grey, (img,))]
    for op, args in cases:
        torch.library.opcheck(op.default, args, test_utils=(
            "test_schema", "test_faketensor", "test_aot_dispatch_static"))


# --------------------------------------------------------------------------- 64-bit offsets

@pytest.mark.slow
@pytest.mark.xdist_group(GROUP)
def test_offsets_past_2_to_the_31(ops, tops):
    """4 GiB tensors of float16: element offsets pass 2^31 (and 4 x 2^31 bytes). At most
    three of them at once: two inputs and an output."""
    import torch

    n = 2**31 + 7
    with inputs_or_skip(16):
        x = torch.empty(n, dtype=torch.float16, device="cuda")
        x[: n - 1000].fill_(1.0)
        x[n - 1000:] = torch.randn(1000, device="cuda").half()
        y = torch.ones_like(x)
    for copy in both(ops, tops, "copy"):
        out = copy(x)
        assert torch.equal(out[-1000:], x[-1000:]) and bool((out[:4096] == 1).all())
        del out
    start = (n - 1000) // 4 * 4                 # counters past 2^29 groups, elements past 2^31
    expected = pm.relu_dropout_expected(x[start:], 0.5, 1, start=start)
    for drop in both(ops, tops, "relu_dropout"):
        out = drop(x, 0.5, 1)
        assert torch.equal(out[start:], expected)
        del out
    for add in both(ops, tops, "vector_add"):
        out = add(x, y)
        assert torch.equal(out[start:], (x[start:].float() + 1).half())
        del out
    del x, y
    with inputs_or_skip(10):
        rows = torch.randn(65540, 32768, device="cuda", dtype=torch.float16)  # last rows past 2^31
    for f in both(ops, tops, "softmax_online") + both(ops, tops, "softmax_row_sram"):
        y = f(rows, -1)
        for part in (slice(-2, None), slice(0, 2)):
            assert_matches_float64("softmax", y[part].contiguous(), (rows[part].contiguous(), -1),
                                   "fp16")
        del y


# --------------------------------------------------------------------------- the standalone driver

@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.skip("nvcc not found")
    out = tmp_path_factory.mktemp("memory_driver") / "memory_driver"
    built = subprocess.run(memory_driver_command(nvcc, out), capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-4000:]
    return out


@pytest.mark.slow      # nvcc builds every kernel again, for a second path to the same kernels
def test_driver_checks_every_kernel(driver):
    run = subprocess.run([str(driver), "all"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "all ok: 0 failing case(s)" in run.stdout and "WRONG" not in run.stdout
