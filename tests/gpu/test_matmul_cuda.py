"""GPU tier: the CUDA matmul ladder through its torch ops.

Every version at every precision it takes (fp32 for the FFMA ladder, fp16 and bf16 for the
tensor-core rungs) against a float64 reference on the shape sweep, in exact small-integer
mode, with poisoned outputs, non-contiguous and empty inputs, bad inputs, torch.compile,
opcheck, grids of more rows of blocks than CUDA's grid y holds; slow: 64-bit offsets and
the standalone driver's own check of every version. (compute-sanitizer:
tests/gpu/test_sanitizer.py, over every kernel of the registry.)
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import problems, registry
from bench.check import check_one
from bench.families.matmul.problems import matmul_error
from bindings import precision as prec
from tests.support.checks import assert_matches_float64, poisoned, poisoned_runner
from tests.support.gpu_memory import GROUP, inputs_or_skip
from tests.support.grid_rows import shape_with_rows
from tests.support.shapes import EMPTY_SHAPES, EXACT_SHAPES, GPU_SWEEP
from tests.support.tiers import kernel_precision_params, one_fast_per_kind

ROOT = Path(__file__).resolve().parents[2]

CUDA_KERNELS = [k for k in registry.select("*", op="matmul") if k.backend == "cuda"]
KERNEL_IDS = [k.name for k in CUDA_KERNELS]
CASES = [(k, p) for k in CUDA_KERNELS for p in k.precisions]
PARAMS = kernel_precision_params(CASES)   # cuda_auto, triton_auto: slow
# the FFMA ladder: float32 ops, every one in the standalone driver
FFMA_KERNELS = [k for k in CUDA_KERNELS if k.precisions == ("fp32",)]


@pytest.fixture(scope="module")
def ops():
    import bindings

    return bindings.ops()


def fn(kernel, precision=None):
    """The kernel's runner, its output's block poisoned before every call."""
    return poisoned_runner(kernel, precision or kernel.precisions[0])


def dtype_of(kernel):
    return prec.torch_dtype(kernel.precisions[0])


@pytest.mark.parametrize("kernel,precision", PARAMS)
@pytest.mark.parametrize("shape", GPU_SWEEP, ids=str)
def test_matches_fp64_reference(kernel, precision, shape):
    result = check_one(kernel, problems.get("matmul"), shape, precision,
                       seed=shape.M + shape.N, device="cuda")
    assert result.status == "ok", result


# every partial sum of small integers is exact in float32 up to K = 2^24 / 9, at every
# precision (bench/families/matmul/problems.py): the output is the product rounded once
EXACT_CASES = [param for s in EXACT_SHAPES
               for param in kernel_precision_params([(k, p, s) for k, p in CASES], f"{s}-")]


@pytest.mark.parametrize("kernel,precision,shape", EXACT_CASES)
def test_exact_with_small_integers(kernel, precision, shape):
    result = check_one(kernel, problems.get("matmul"), shape, precision, "exact", device="cuda")
    assert result.status == "ok" and result.error == 0.0, result


def test_poisoning_reaches_the_next_output(ops):
    """The check relies on this: an output allocated after poisoning starts as NaN."""
    import torch

    from bench.device import poison_output_memory

    poison_output_memory(300 * 200 * 4, "cuda")
    fresh = torch.empty(300, 200, device="cuda")
    assert torch.isnan(fresh).all()


@pytest.mark.parametrize("kernel,precision", PARAMS)
def test_non_contiguous_inputs(kernel, precision):
    import torch

    g = torch.Generator().manual_seed(1)
    dtype = prec.torch_dtype(precision)
    a_big = torch.randn(90, 140, generator=g).to(dtype).cuda()
    b_big = torch.randn(70, 130, generator=g).to(dtype).cuda()
    cases = [
        (a_big[:, ::2], b_big.T[:70, :33]),        # strided columns; transposed view
        (a_big.T[:33, :70], b_big[:, 1::2]),       # transposed view; offset + stride
    ]
    for a, b in cases:
        assert not a.is_contiguous() or not b.is_contiguous()
        out = fn(kernel, precision)(a, b)
        assert matmul_error(out, a, b, precision) <= 1


@pytest.mark.parametrize("kernel,precision", PARAMS)
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_empty_dimensions(kernel, precision, shape):
    import torch

    dtype = prec.torch_dtype(precision)
    a = torch.randn(shape.M, shape.K, device="cuda", dtype=dtype)
    b = torch.randn(shape.K, shape.N, device="cuda", dtype=dtype)
    out = fn(kernel, precision)(a, b)
    assert out.shape == (shape.M, shape.N) and out.dtype == dtype
    assert torch.equal(out, torch.zeros_like(out))  # K = 0: zeros, not garbage


def _bad_inputs(dtype):
    import torch

    f32 = dict(device="cuda", dtype=dtype)
    if dtype == torch.float32:
        wrong = [("float32, got Half", torch.randn(4, 4, device="cuda").half(), torch.randn(4, 4, **f32)),
                 ("float32, got Float and Double", torch.randn(4, 4, **f32),
                  torch.randn(4, 4, device="cuda").double())]
    else:
        wrong = [("both be float16 or both bfloat16, got Float and Float", torch.randn(4, 4, device="cuda"),
                  torch.randn(4, 4, device="cuda")),
                 ("both be float16 or both bfloat16, got Half and BFloat16",
                  torch.randn(4, 4, device="cuda").half(), torch.randn(4, 4, device="cuda").bfloat16())]
    return wrong + [
        ("must be CUDA tensors, got cpu", torch.randn(4, 4, dtype=dtype), torch.randn(4, 4, dtype=dtype)),
        ("must be CUDA tensors", torch.randn(4, 4, dtype=dtype), torch.randn(4, 4, **f32)),
        ("2-D matrices, got 3-D", torch.randn(2, 4, 4, **f32), torch.randn(4, 4, **f32)),
        ("2-D matrices, got 2-D and 1-D", torch.randn(4, 4, **f32), torch.randn(4, **f32)),
        ("inner dimensions must agree", torch.randn(4, 5, **f32), torch.randn(4, 5, **f32)),
    ]


@pytest.mark.parametrize("kernel", CUDA_KERNELS, ids=KERNEL_IDS)
def test_bad_inputs_raise_clear_errors(kernel):
    op_name = Path(kernel.source).stem
    for expected, a, b in _bad_inputs(dtype_of(kernel)):
        with pytest.raises(RuntimeError) as info:
            kernel.runner(kernel.precisions[0])(a, b)
        message = str(info.value)
        assert op_name in message, repr(message)
        assert expected in message, f"{message!r} lacks {expected!r}"


LADDER = [k for k in registry.select("@ladder") if k.backend == "cuda"]


@pytest.mark.parametrize("kernel", LADDER, ids=[k.name for k in LADDER])
def test_rows_of_blocks_past_65535_fold_every_row_into_place(kernel):
    """65537 rows of blocks, more than CUDA's grid y holds (65535), which the launcher folds
    into y and z (cuda/common.cuh), with one row of blocks past C: C = A @ B with K = 1 and
    B = 1 (v1 naive, whose rows of blocks run along N: A = 1), so every element of C must be
    its row's (column's) index, exactly (below 2^24: exact in float32). A row computed in
    another's place, twice or not at all shows. Tens of MB; every element of such a C against
    float64, at K = 64: tests/gpu/test_grid_fold.py (slow)."""
    import torch

    M, N = shape_with_rows(kernel, 65537, 1)
    index = torch.arange(max(M, N), device="cuda", dtype=torch.float32)
    one = torch.ones(1, 1, device="cuda")
    a, b = (index.reshape(M, 1), one) if M > N else (one, index.reshape(1, N))
    out = fn(kernel)(a, b)
    assert torch.equal(out, index.reshape(M, N)), (
        f"{kernel.name}: {int((out != index.reshape(M, N)).sum())} of {M * N} elements of C "
        f"are not their index")


@pytest.mark.slow
@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("kernel", CUDA_KERNELS, ids=KERNEL_IDS)
def test_offsets_past_2_to_the_31(kernel):
    """A holds more than 2^31 elements: row * K overflows 32 bits unless offsets are 64-bit."""
    import torch

    M, K, N = 65537, 32769, 3          # M * K = 2,147,581,953 > 2^31
    dtype, precision = dtype_of(kernel), kernel.precisions[0]
    with inputs_or_skip(M * K * dtype.itemsize / 2**30 + 2):
        a = torch.empty(M, K, device="cuda", dtype=dtype)
        a[:-4].fill_(0.5)
        a[-4:] = torch.randn(4, K, device="cuda")  # the rows whose offsets pass 2^31
        b = torch.randn(K, N, device="cuda").to(dtype)
    out = fn(kernel)(a, b)
    tail = out[-4:]
    assert matmul_error(tail, a[-4:], b, precision) <= 1
    del a


# an Inductor compile each: one op per kind of op (FFMA, 16-bit, tf32) in the fast tier
@pytest.mark.parametrize("kernel", one_fast_per_kind(
    [k for k in CUDA_KERNELS if k.chooses is None], lambda k: k.precisions))   # ops, not cuda_auto
def test_torch_compile_fullgraph(kernel, ops):
    import torch

    op = getattr(ops, Path(kernel.source).stem)

    # one code object `f` for every kernel: without a reset, the ninth kernel compiled in
    # one process passes dynamo's recompile limit (8) and fails under fullgraph=True
    torch._dynamo.reset()

    @torch.compile(fullgraph=True)
    def f(a, b):
        c = op(a, b)
        return c, c.relu() + 1

    a = torch.randn(67, 45, device="cuda", dtype=dtype_of(kernel))
    b = torch.randn(45, 31, device="cuda", dtype=dtype_of(kernel))
    c, out = poisoned(f)(a, b)
    assert_matches_float64("matmul", c, (a, b), kernel.precisions[0])
    torch.testing.assert_close(out, op(a, b).relu() + 1)


OPS = [k for k in CUDA_KERNELS if k.chooses is None]   # cuda_auto runs the others' ops


@pytest.mark.parametrize("kernel", OPS, ids=[k.name for k in OPS])
def test_opcheck(kernel, ops):
    import torch

    op = getattr(ops, Path(kernel.source).stem)
    a = torch.randn(33, 17, device="cuda", dtype=dtype_of(kernel))
    b = torch.randn(17, 29, device="cuda", dtype=dtype_of(kernel))
    torch.library.opcheck(op.default, (a, b), test_utils=(
        "test_schema", "test_faketensor", "test_aot_dispatch_static"))


# --- the standalone driver ----------------------------------------------------------------

# `driver`: the CMake build's matmul driver, built once per run (tests/gpu/conftest.py)


@pytest.mark.slow      # the CMake build of every kernel again, for a second path to the same kernels
def test_driver_checks_every_version(driver):
    """`all`: the FFMA ladder and the tf32 rungs (CVT_TF32_OPS), which a GPU without their
    instructions skips and says so."""
    from bindings import config

    out = subprocess.run([str(driver), "all", "130", "129", "17", "--reps", "3"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count(" ok ") + out.stdout.count(" skipped: ") \
        == len(FFMA_KERNELS) + len(config.TF32_OPS), out.stdout


def test_extension_shares_torchs_cxx_runtime(ops):
    """The built extension depends on the shared libstdc++ (see bindings/_toolchain.py):
    a private static copy crashes the process on the first failed TORCH_CHECK."""
    import glob

    import bindings
    from bindings._toolchain import _needed_libraries

    libraries = glob.glob(str(bindings.BINDINGS_DIR / "_C*.so")) or glob.glob(
        str(ROOT / "build" / "jit" / "*.so"))
    assert libraries, "no built extension found"
    for library in libraries:
        assert "libstdc++" in _needed_libraries(Path(library)), library
