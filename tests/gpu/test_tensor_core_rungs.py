"""GPU tier: the tensor-core rungs (cuda/matmul_t1_mma_sync.cu ...), past what
tests/gpu/test_matmul_cuda.py asks of every CUDA matmul.

Both of a rung's paths at the edges of its own tiles: the 16-byte path (t2, t3, t4: the TMA
path; K and N multiples of 8, or of 4 for t4's floats, 16-byte aligned pointers) with the
block tile cut in M, N and K, and the scalar path from an odd K, an odd N, or a pointer one
element off 16 bytes (t2 and t3 run t1's kernel there, t4 runs v7's: the same bits). Then
NaN and inf, bit-for-bit repeatability, a long K, the persistent grids over many tiles per
cluster and a cluster half outside C, t4's rounding (B^T rounded to the nearest TF32, A
truncated), and, slow, offsets past 2^31 elements on the 16-byte path and the standalone
drivers' own checks. (compute-sanitizer: tests/gpu/test_sanitizer.py.)
"""
from __future__ import annotations

import subprocess

import pytest

from bench import problems, registry
from bench.check import check_one
from bench.families.matmul.models import MatmulShape, is_tensor_core
from bench.families.matmul.problems import matmul_error
from bindings import precision as prec
from tests.support.checks import assert_matches_float64, poisoned_runner
from tests.support.gpu_memory import GROUP, inputs_or_skip

RUNGS = [k for k in registry.kernels() if k.backend == "cuda" and is_tensor_core(k.version)]
CASES = [(k, p) for k in RUNGS for p in k.precisions]
CASE_IDS = [f"{k.name}-{p}" for k, p in CASES]


def edge_shapes(p) -> list[MatmulShape]:
    """Shapes around the rung's block tile whose K and N are multiples of 8 (the 16-byte
    path), each tile dimension one piece (8) short of and past the tile."""
    bm, bn, bk = p["BM"], p["BN"], p["BK"]
    return [MatmulShape(1, 8, 8), MatmulShape(bm - 8, bn + 8, bk + 8),
            MatmulShape(bm + 1, bn - 8, bk - 8), MatmulShape(2 * bm + 3, 2 * bn, 3 * bk + 8),
            MatmulShape(bm, bn, 8), MatmulShape(17, 3 * bn + 8, 5 * bk)]


def _check(kernel, precision, shape, mode="random"):
    return check_one(kernel, problems.get("matmul"), shape, precision, mode,
                     seed=shape.M + shape.N + shape.K, device="cuda")


@pytest.mark.parametrize("kernel,precision", CASES, ids=CASE_IDS)
def test_the_16_byte_path_at_the_tile_edges(kernel, precision):
    for shape in edge_shapes(kernel.params(precision)):
        result = _check(kernel, precision, shape)
        assert result.status == "ok", result


@pytest.mark.parametrize("kernel,precision", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("shape", [MatmulShape(130, 257, 40), MatmulShape(129, 264, 37),
                                   MatmulShape(1, 1, 1), MatmulShape(300, 7, 1000)], ids=str)
def test_the_scalar_path(kernel, precision, shape):
    """N or K not a multiple of 8: every value is copied alone."""
    result = _check(kernel, precision, shape)
    assert result.status == "ok", result


HOPPER_CASES = [(k, p) for k, p in CASES if k.min_capability == (9, 0)]


@pytest.mark.parametrize("kernel,precision", HOPPER_CASES,
                         ids=[f"{k.name}-{p}" for k, p in HOPPER_CASES])
def test_off_the_tma_path_the_hopper_rungs_run_their_fallback(kernel, precision):
    """Odd N, odd K, a pointer off 16 bytes: the op's result is t1's (t2, t3) or v7's (t4),
    bit for bit (the launcher runs that kernel, as the header and the registry say)."""
    import torch

    t1 = (poisoned_runner(registry.get("cuda_v7_lean_fetch"), "fp32") if precision == "tf32"
          else poisoned_runner(registry.get("cuda_t1_mma_sync"), precision))
    run = poisoned_runner(kernel, precision)
    dtype = prec.torch_dtype(precision)
    g = torch.Generator().manual_seed(3)

    def matrix(rows, cols, misaligned=False):
        flat = torch.randn(rows * cols + misaligned, generator=g).to(dtype).cuda()
        return flat[int(misaligned):].view(rows, cols)

    cases = [(matrix(130, 40), matrix(40, 257)), (matrix(129, 37), matrix(37, 264)),
             (matrix(200, 96, misaligned=True), matrix(96, 264))]
    for a, b in cases:
        out = run(a, b)
        assert_matches_float64("matmul", out, (a, b), precision)
        assert torch.equal(out, t1(a, b))


@pytest.mark.parametrize("kernel,precision", HOPPER_CASES,
                         ids=[f"{k.name}-{p}" for k, p in HOPPER_CASES])
@pytest.mark.parametrize("shape", [MatmulShape(2056, 4104, 520), MatmulShape(100, 264, 40),
                                   MatmulShape(4104, 136, 8), MatmulShape(8, 8, 4104),
                                   MatmulShape(5, 8, 0), MatmulShape(300, 132, 4),
                                   MatmulShape(520, 1028, 36)], ids=str)
def test_the_tma_path_over_many_tiles(kernel, precision, shape):
    """More tiles than clusters fit at once (t3 and t4 walk several per cluster, the ring's
    phases wrap across tiles), a cluster whose second block lies wholly outside C (below M
    for t3, right of N for t4: its TMA boxes are zero fill, its store writes nothing), one
    k tile of 8 or 4, a long thin K, K = 0 (zeros); N = 1028 and K = 36 are t4's path (multiples
    of 4) and t1's (not of 8)."""
    result = _check(kernel, precision, shape)
    assert result.status == "ok", result


@pytest.mark.parametrize("kernel,precision", CASES, ids=CASE_IDS)
def test_pointers_off_16_bytes_take_the_scalar_path(kernel, precision):
    """A and B one element past a 16-byte boundary (contiguous, so the op passes them as
    they are): the launcher must not take the 16-byte path."""
    import torch

    dtype = prec.torch_dtype(precision)
    M, N, K = 200, 264, 96
    g = torch.Generator().manual_seed(5)
    a_store = torch.randn(M * K + 1, generator=g).to(dtype).cuda()
    b_store = torch.randn(K * N + 1, generator=g).to(dtype).cuda()
    a, b = a_store[1:].view(M, K), b_store[1:].view(K, N)
    assert a.is_contiguous() and a.data_ptr() % 16 != 0
    out = poisoned_runner(kernel, precision)(a, b)
    assert matmul_error(out, a, b, precision) <= 1


@pytest.mark.parametrize("kernel,precision", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("shape", [MatmulShape(136, 264, 40), MatmulShape(67, 45, 31)], ids=str)
def test_nan_and_inf_propagate(kernel, precision, shape):
    result = _check(kernel, precision, shape, mode="nonfinite")
    assert result.status == "ok", result


@pytest.mark.parametrize("kernel,precision", CASES, ids=CASE_IDS)
def test_bit_for_bit_repeatable(kernel, precision):
    """No atomics, no split of k at this shape (t5's split tiles: test_t5_on_two_streams_at_once):
    the same inputs give the same bits."""
    import torch

    dtype = prec.torch_dtype(precision)
    a = torch.randn(1000, 1024, device="cuda").to(dtype)
    b = torch.randn(1024, 1032, device="cuda").to(dtype)
    run = poisoned_runner(kernel, precision)       # each repeat's block starts as NaN
    first = run(a, b)
    assert_matches_float64("matmul", first, (a, b), precision)
    for _ in range(3):
        assert torch.equal(run(a, b), first)


T5_CASES = [(k, p) for k, p in CASES if k.version == "t5"]


@pytest.mark.parametrize("kernel,precision", T5_CASES, ids=[f"{k.name}-{p}" for k, p in T5_CASES])
@pytest.mark.parametrize("shape", [MatmulShape(1024, 1024, 8192), MatmulShape(256, 256, 8192),
                                   MatmulShape(1000, 1032, 4104), MatmulShape(264, 264, 4104),
                                   MatmulShape(8192, 8192, 8192)], ids=str)
def test_t5_split_tiles(kernel, precision, shape):
    """Shapes whose tiles t5 splits along k on any GPU of 17 to 132 clusters (the H100 holds
    66): 16 tiles of 128 k tiles, one tile in four parts, 20 and 4 tiles of 65 k tiles in
    runs of 20 and 17 (runs crossing from one tile into the next, a part of one k tile
    cut by K's edge), and 8192^3 (on the H100 the last 34 tiles in runs of 66: helpers,
    owners, two or three parts each)."""
    result = _check(kernel, precision, shape)
    assert result.status == "ok", result


@pytest.mark.parametrize("kernel,precision", T5_CASES, ids=[f"{k.name}-{p}" for k, p in T5_CASES])
def test_t5_on_two_streams_at_once(kernel, precision):
    """Each launch takes its workspace (partials and flags) from a stream-ordered pool, so
    products running at the same time on two streams never share one: both give the bits
    they give alone, every time (the split tiles are summed in a fixed order)."""
    import torch

    dtype = prec.torch_dtype(precision)
    run = kernel.runner(precision)
    g = torch.Generator().manual_seed(11)
    pairs = [(torch.randn(512, 8192, generator=g).to(dtype).cuda(),     # 8 tiles, split
              torch.randn(8192, 1024, generator=g).to(dtype).cuda()) for _ in range(2)]
    alone = [poisoned_runner(kernel, precision)(a, b) for a, b in pairs]
    for out, inputs in zip(alone, pairs):
        assert_matches_float64("matmul", out, inputs, precision)
    # (the streams' outputs are not poisoned: that would synchronize them; each is a fresh
    # block, all kept alive, compared with the checked answers bit for bit)
    streams = [torch.cuda.Stream() for _ in pairs]
    torch.cuda.synchronize()
    outs = [[], []]
    for _ in range(20):
        for i, ((a, b), stream) in enumerate(zip(pairs, streams)):
            with torch.cuda.stream(stream):
                outs[i].append(run(a, b))
    torch.cuda.synchronize()
    for i in range(2):
        assert all(torch.equal(out, alone[i]) for out in outs[i])


@pytest.mark.parametrize("kernel,precision", CASES, ids=CASE_IDS)
def test_long_k(kernel, precision):
    result = _check(kernel, precision, MatmulShape(64, 264, 65536))
    assert result.status == "ok", result


@pytest.mark.slow
@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("kernel", RUNGS, ids=[k.name for k in RUNGS])
def test_offsets_past_2_to_the_31_on_the_16_byte_path(kernel):
    """M * K > 2^31 with K and N multiples of 8: the cp.async addresses of the last rows
    need 64-bit offsets (t2, t3: TMA's coordinates are rows and columns, its sizes 64-bit)."""
    import torch

    precision = kernel.precisions[-1]
    dtype = prec.torch_dtype(precision)
    M, K, N = 65544, 32768, 8          # M * K = 2,147,745,792 > 2^31
    with inputs_or_skip(M * K * dtype.itemsize / 2**30 + 2):
        a = torch.empty(M, K, device="cuda", dtype=dtype)
        a[:-8].fill_(0.5)
        a[-8:] = torch.randn(8, K, device="cuda")
        b = torch.randn(K, N, device="cuda").to(dtype)
    out = poisoned_runner(kernel, precision)(a, b)
    assert matmul_error(out[-8:], a[-8:], b, precision) <= 1
    del a


TF32_RUNGS = [k for k in RUNGS if k.precisions == ("tf32",)]


@pytest.mark.parametrize("kernel", TF32_RUNGS, ids=[k.name for k in TF32_RUNGS])
def test_tf32_rounding_of_b_and_truncation_of_a(kernel):
    """As the header says: B^T's values are rounded to the nearest TF32 (ties to even) in
    registers, A's are truncated by the tensor core. A @ I is A truncated, I @ B is B
    rounded: bit for bit, at sizes on the TMA path, with values whose dropped 13 bits are
    just under, at and over half (a tie to even both ways)."""
    import torch

    g = torch.Generator().manual_seed(11)
    n = 264
    x = torch.randn(n, n, generator=g)
    bits = x.view(torch.int32) & ~0x1FFF
    low = torch.tensor([0x0FFF, 0x1000, 0x1001, 0x0000, 0x1FFF], dtype=torch.int32)
    bits = bits | low[torch.arange(n * n) % 5].view(n, n)
    bits[0, 0] = 0x3F803000          # 1 + 3 * 2^-11 ... a tie, kept part odd: rounds up
    bits[0, 1] = 0x3F801000          # a tie, kept part even: stays
    xs = bits.view(torch.float32)
    eye = torch.eye(n)
    run = poisoned_runner(kernel, "tf32")
    truncated = (xs.view(torch.int32) & ~0x1FFF).view(torch.float32)
    assert torch.equal(run(xs.cuda(), eye.cuda()).cpu(), truncated)
    odd = (xs.view(torch.int32) >> 13) & 1
    rounded = ((xs.view(torch.int32) + 0xFFF + odd) & ~0x1FFF).view(torch.float32)
    assert torch.equal(run(eye.cuda(), xs.cuda()).cpu(), rounded)
    assert rounded[0, 0] != truncated[0, 0] and rounded[0, 1] == truncated[0, 1]


@pytest.mark.slow      # the CMake build of every kernel again, for a second path to the same kernels
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_standalone_driver_checks_every_rung(cmake_build, dtype):
    """cuda/driver/tensor_core_driver.cu (the CMake build): both paths, C poisoned, every
    element against float64."""
    driver = str(cmake_build / "tensor_core_driver")
    shapes = ["136", "264", "40", "130", "257", "37", "1", "8", "8"]
    rungs = [k for k in RUNGS if dtype in k.precisions]
    for extra in ([], ["--misalign"]):
        out = subprocess.run([driver, "all", dtype, *shapes, "--reps", "2", *extra],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.count(" ok ") == 3 * len(rungs), out.stdout


@pytest.mark.slow
def test_standalone_driver_checks_the_tf32_rungs(driver):
    """cuda/driver/matmul_driver.cu runs the tf32 rungs with TF32's bound: both paths (a
    misaligned run takes v7's), C poisoned, every element against float64."""
    for name in (k.source.split("matmul_")[-1].removesuffix(".cu") for k in TF32_RUNGS):
        for extra in ([], ["--misalign"]):
            out = subprocess.run([str(driver), name, "136", "264", "40", "520", "1028", "36",
                                  "1", "4", "4", "--reps", "2", *extra],
                                 capture_output=True, text=True)
            assert out.returncode == 0, out.stdout + out.stderr
            assert out.stdout.count(" ok ") == 3, out.stdout
