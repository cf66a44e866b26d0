"""GPU tier, slow: every CUDA and Triton kernel at a shape whose element offsets pass 2^31.

A 32-bit product used as a pointer offset (`h * w`, `k * stride_bk`, `BLOCK_K * N`) wraps
once the true offset passes 2^31 and the kernel reads or writes the wrong address, often an
illegal one. The CPU tier finds such products in the compiled Triton code
(tests/interpreter/test_offsets_static.py); here each kernel runs where they would wrap, on the H100's
80 GB, and its answer is compared with the float64 reference on the region past 2^31 (and
on the start, so a kernel that wrote only the end fails too).

The large-A matmul case, the element-wise ops and the long-row softmax at 2^31 + 7 elements
are in tests/gpu/test_matmul_cuda.py, tests/gpu/test_matmul_triton.py and tests/gpu/test_memory_ops.py;
this file adds the cases those miss: a wide B (the k-step of B's pointers is BLOCK_K * N),
M and K within a tile of 2^31 (tile counts and loop counters that wrap in 32 bits),
softmax along a column (k * inner), a single row longer than 2^31 - BLOCK, row_sram rows,
and the RGB planes (2 * h * w).

Every case computes and is checked, or is refused as this file expects: EXPECTED_REFUSALS
lists, per kernel and test, the message of a refusal by design (a documented precondition),
which the test asserts with pytest.raises. Any other refusal fails, a grid limit included:
a launcher covers any size its op takes (a CUDA kernel's rows of blocks fold into grid
y and z past CUDA's 65535). Too little free memory for a case's inputs is a
skip (tests/support/gpu_memory.py); running out of memory in the kernel call fails.
"""
from __future__ import annotations

import gc

import pytest

from bench import problems, registry
from bench.catalog.matmul_shape_paths import skinny_record, triton_skinny_record
from bench.families.matmul.problems import matmul_error
from tests.support.checks import float32_precision, poisoned_runner
from tests.support.gpu_memory import GROUP, inputs_or_skip

# tens of GB each: one worker runs them all, one after the other (Makefile: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP)]

# Refusals by design at this file's shapes: kernel name -> test name -> a regular expression
# the refusal's message must match. The CUDA launchers fold their rows of blocks into grid y
# and z and compute every case; the Triton twins of v1-v3 keep a 2-D grid whose axis 1
# holds at most 65535 programs (their documented precondition: docs/kernels.md, "The ladder"):
# v1 puts N's tiles there (a wide B), v1.5, v2 and v3 put M's (a tall A).
AXIS_1 = r"needs \d+ programs along grid axis 1, more than the 65535 CUDA allows"
EXPECTED_REFUSALS: dict[str, dict[str, str]] = {
    "triton_v1_naive": {"test_matmul_wide_b": AXIS_1},
    "triton_v1.5_thread_tiling": {"test_matmul_tall_a_near_2_to_the_31": AXIS_1},
    "triton_v2_register_tiling": {"test_matmul_tall_a_near_2_to_the_31": AXIS_1},
    "triton_v3_smem_tiling": {"test_matmul_tall_a_near_2_to_the_31": AXIS_1},
}


def _release() -> None:
    import torch

    gc.collect()
    torch.cuda.empty_cache()


def _run(request, kernel, precision, *args):
    """The kernel's poisoned runner on args; or, where EXPECTED_REFUSALS lists this kernel
    and test, the refusal asserted (None: the test has nothing more to check)."""
    expected = EXPECTED_REFUSALS.get(kernel.name, {}).get(request.node.originalname)
    if expected is None:
        return poisoned_runner(kernel, precision)(*args)
    with pytest.raises((RuntimeError, ValueError), match=expected):
        kernel.runner(precision)(*args)
    return None


def test_expected_refusals_name_kernels_and_tests():
    """Every entry of EXPECTED_REFUSALS names a kernel of the registry and a test of this
    file (a misspelt entry would expect nothing)."""
    tests = {name for name in globals() if name.startswith("test_")}
    for kernel, refusals in EXPECTED_REFUSALS.items():
        registry.get(kernel)
        assert set(refusals) <= tests, (kernel, sorted(set(refusals) - tests))


# with the two skinny kernels, which the registry leaves out (they take M or N <= 16 only):
# the wide B is their M-small case, the tall A their N-small case
MATMULS = ([k for k in registry.select("@matmul") if k.backend in ("cuda", "triton")]
           + [skinny_record(), triton_skinny_record()])


@pytest.mark.parametrize("kernel", MATMULS, ids=[k.name for k in MATMULS])
def test_matmul_wide_b(request, kernel):
    """B is K x N with K = 17, N = 2^27 + 2^20 + 3: row 16 of B starts at 16 N > 2^31, reached
    by the first k-step (BLOCK_K = 16) or by k * stride_bk inside the first tile (BLOCK_K >=
    32). 9.2 GB of float32; the tensor-core rungs (no 32-bit inputs) take fp16, 4.6 GB. A
    TMA kernel stages A and B in 16-byte rows (17 elements are not): room for B twice."""
    import torch

    M, K, N = 3, 17, 2**27 + 2**20 + 3
    torch.manual_seed(0)
    sixteen = not set(kernel.precisions) & {"fp32", "tf32"}
    precision = "fp16" if sixteen else float32_precision(kernel)
    dtype = torch.float16 if sixteen else torch.float32
    with inputs_or_skip(22):
        a = torch.randn(M, K, device="cuda").to(dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
    out = _run(request, kernel, precision, a, b)
    if out is not None:
        for cols in (slice(N - 4099, N), slice(0, 4099)):
            err = matmul_error(out[:, cols], a, b[:, cols], precision)
            assert err <= 1, f"{kernel.name}: error {err:.3g} bounds at columns {cols}"
    del a, b, out
    _release()


@pytest.mark.parametrize("kernel", MATMULS, ids=[k.name for k in MATMULS])
def test_matmul_tall_a_near_2_to_the_31(request, kernel):
    """M = 2^31 - 1: a tile count computed as tl.cdiv(M, BLOCK_M) = (M + BLOCK_M - 1) //
    BLOCK_M wraps negative in 32 bits, and rows computed as off_m + arange pass 2^31 in the
    last tile. fp16 where the kernel has it (K = N = 1: 8.6 GB), else fp32 (17 GB). The
    persistent kernel's TMA needs 16-byte rows (K = N = 8 would take 69 GB), so its long
    side is N = 2^31 - 8 instead, with M = 1 and K = 8 (39 GB): the same wrap, in columns."""
    import torch

    precision = "fp16" if "fp16" in kernel.precisions else float32_precision(kernel)
    dtype = torch.float16 if precision == "fp16" else torch.float32
    M, K, N = (1, 8, 2**31 - 8) if kernel.name == "triton_persistent" else (2**31 - 1, 1, 1)
    with inputs_or_skip((M * K + K * N + M * N) * torch.finfo(dtype).bits / 8 / 2**30 + 2):
        torch.manual_seed(5)
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
    out = _run(request, kernel, precision, a, b)
    if out is not None:
        long = max(M, N)
        for part in (slice(long - 4099, long), slice(0, 4099)):
            err = (matmul_error(out[part], a[part], b, precision) if M > 1 else
                   matmul_error(out[:, part], a, b[:, part], precision))
            assert err <= 1, f"{kernel.name}: error {err:.3g} bounds at {part}"
    del a, b, out
    _release()


GROUPED = [k for k in MATMULS if k.name == "triton_grouped"]


@pytest.mark.timeout(600)   # one program walks 2^31 / BLOCK_K tiles: about a minute
@pytest.mark.parametrize("kernel", GROUPED, ids=[k.name for k in GROUPED])
def test_matmul_k_near_2_to_the_31(request, kernel):
    """K = 2^31 - 1 (fp16, 1 x K times K x 1: 8.6 GB): a loop `for k0 in range(0, K,
    BLOCK_K)` steps its 32-bit counter past 2^31 after the last tile and never ends (the
    timeout ends the test then). The kernels count in int64 there (K_WIDE,
    _common.near_int32_limit). One program walks all 2^31 / BLOCK_K tiles (a minute), so
    this runs one kernel: the CPU tier's scan (tests/interpreter/test_offsets_static.py)
    compiles every kernel's K_WIDE path and finds any 32-bit counter that steps towards a
    size."""
    import torch

    K = 2**31 - 1
    with inputs_or_skip(10):
        a = torch.ones(1, K, device="cuda", dtype=torch.float16)
        b = torch.zeros(K, 1, device="cuda", dtype=torch.float16)
    b[0, 0], b[K // 2, 0], b[K - 1, 0] = 1, 2, 4     # the first, a middle and the last tile
    out = _run(request, kernel, "fp16", a, b)
    if out is not None:
        assert float(out[0, 0]) == 7.0, (f"{kernel.name}: A (ones) @ B (1, 2, 4 at k = 0, "
                                         f"K/2, K-1) gave {float(out[0, 0])}, expected 7 "
                                         f"exactly")
    del a, b, out
    _release()


SOFTMAX = [k for k in registry.select("*", op="softmax") if k.backend in ("cuda", "triton")]
COLUMNS = "32768x65540:dim=0"        # n * inner = 2,147,614,720 > 2^31
# the split softmax takes rows only (Kernel.refuses): not a case of the column test
SOFTMAX_COLUMNS = [k for k in SOFTMAX
                   if not k.refusal(problems.get("softmax").parse_shape(COLUMNS))]


@pytest.mark.parametrize("kernel", SOFTMAX_COLUMNS, ids=[k.name for k in SOFTMAX_COLUMNS])
def test_softmax_along_columns(request, kernel):
    """dim=0 of a 32768 x 65540 float16 tensor (4.3 GB): k * inner passes 2^31 in the column
    kernels (n = 32768 fits row_sram's limit)."""
    import torch

    n, inner = 32768, 65540
    problem = problems.get("softmax")
    with inputs_or_skip(12):
        torch.manual_seed(1)
        x = torch.randn(n, inner, device="cuda", dtype=torch.float16)
    y = _run(request, kernel, "fp16", x, 0)
    if y is not None:
        tol = problem.tolerance(problem.parse_shape(COLUMNS), "fp16")
        for cols in (slice(inner - 8, inner), slice(0, 8)):
            err = problem.error(y[:, cols].contiguous(), (x[:, cols].contiguous(), 0))
            assert err <= tol, f"{kernel.name}: error {err:.3g} > {tol:.3g} at columns {cols}"
    del x, y
    _release()


@pytest.mark.parametrize("kernel", SOFTMAX, ids=[k.name for k in SOFTMAX])
def test_softmax_rows_past_2_to_the_31(request, kernel):
    """65540 rows of 32768 float16 (4.3 GB): the last rows start past 2^31."""
    import torch

    with inputs_or_skip(12):
        torch.manual_seed(2)
        x = torch.randn(65540, 32768, device="cuda", dtype=torch.float16)
    y = _run(request, kernel, "fp16", x, -1)
    if y is not None:
        problem = problems.get("softmax")
        tol = problem.tolerance(problem.parse_shape("65540x32768"), "fp16")
        for rows in (slice(-3, None), slice(0, 3)):
            err = problem.error(y[rows].contiguous(), (x[rows].contiguous(), -1))
            assert err <= tol, f"{kernel.name}: error {err:.3g} > {tol:.3g} at rows {rows}"
    del x, y
    _release()


def test_softmax_split_smem_rows_past_2_to_the_31():
    """The split's shared-memory kernel (Hopper): 8200 rows of 262144 bfloat16 (4.3 GB),
    the last rows past 2^31 elements in the TMA coordinates' row and the output's offsets."""
    import torch

    from triton_impl import softmax_split, softmax_split_smem

    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the shared-memory split needs TMA on compute capability 9.x")
    rows, n = 8200, 262144
    with inputs_or_skip(12):
        torch.manual_seed(5)
        x = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
        y = torch.full_like(x, float("nan"))          # poisoned: every element must be written
    assert softmax_split_smem.plan(2, n)["SEGMENTS"] > 1
    assert softmax_split._smem_split(x, y, rows, n, True, None, None)
    problem = problems.get("softmax")
    tol = problem.tolerance(problem.parse_shape(f"{rows}x{n}"), "bf16")
    for part in (slice(-3, None), slice(0, 3)):
        err = problem.error(y[part].contiguous(), (x[part].contiguous(), -1))
        assert err <= tol, f"error {err:.3g} > {tol:.3g} at rows {part}"
    del x, y
    _release()


ONLINE = [k for k in SOFTMAX if k.version == "online"]


@pytest.mark.parametrize("kernel", ONLINE, ids=[k.name for k in ONLINE])
def test_softmax_one_row_near_2_to_the_31(request, kernel):
    """One float32 row of 2^31 - 100 elements (8.6 GB): a chunk's start + lane passes 2^31
    in the last chunk unless the offsets are 64-bit. float32, because the probabilities of
    a row that long (~5e-10) are below float16's range. The reference is computed in chunks."""
    import torch

    n = 2**31 - 100
    step = 2**28
    with inputs_or_skip(24):
        torch.manual_seed(3)
        x = torch.empty(1, n, device="cuda", dtype=torch.float32)
        for s in range(0, n, step):              # randn of 2^31 elements at once needs 8 GB more
            x[0, s:s + step] = torch.randn(min(step, n - s), device="cuda")
    y = _run(request, kernel, "fp32", x, -1)
    if y is not None:
        row = x[0]
        top = float(row.max())
        total = sum(float(torch.exp(row[s:s + step].double() - top).sum())
                    for s in range(0, n, step))
        for part in (slice(n - 5000, n), slice(0, 5000)):
            ref = torch.exp(row[part].double() - top) / total
            got = y[0, part].double()
            err = float(((got - ref).abs() / ref.abs().clamp_min(1e-30)).max())
            assert err <= 2e-3, f"{kernel.name}: relative error {err:.3g} at {part}"
    del x, y
    _release()


GREY = [k for k in registry.select("*", op="rgb_to_grey") if k.backend in ("cuda", "triton")]


@pytest.mark.parametrize("kernel", GREY, ids=[k.name for k in GREY])
def test_rgb_to_grey_past_2_to_the_31(request, kernel):
    """A 3 x 32768 x 32768 uint8 image (3.2 GB): the blue plane starts at 2 h w = 2^31."""
    import torch

    h = w = 32768
    with inputs_or_skip(8):
        torch.manual_seed(4)
        img = torch.randint(0, 256, (3, h, w), device="cuda", dtype=torch.uint8)
    grey = _run(request, kernel, "u8", img)
    if grey is not None:
        problem = problems.get("rgb_to_grey")
        tol = problem.tolerance(problem.parse_shape(f"3x{h}x{w}"), "u8")
        for rows in (slice(h - 16, h), slice(0, 16)):
            err = problem.error(grey[rows].contiguous(), (img[:, rows].contiguous(),))
            assert err <= tol, f"{kernel.name}: error {err:.3g} > {tol:.3g} at rows {rows}"
    del img, grey
    _release()


GREY_CUDA = [k for k in GREY if k.backend == "cuda"]


@pytest.mark.parametrize("kernel", GREY_CUDA, ids=[k.name for k in GREY_CUDA])
@pytest.mark.parametrize("w", [65535 * 512 + 1, 65536 * 512 + 16])
def test_rgb_to_grey_wider_than_65535_column_blocks(kernel, w):
    """A 1 x W image (100 MB) of more column blocks of 512 than CUDA's grid y holds (65535):
    the launcher folds them into y and z (cuda/common.cuh), and every pixel must come out
    right, the last one included. W = 65535 * 512 + 1: 65536 blocks (32768 along y by 2
    along z), byte loads; W = 65536 * 512 + 16: 65537 blocks (32769 by 2: a row of blocks
    past the image, which returns), 16-byte loads."""
    import torch

    torch.manual_seed(6)
    img = torch.randint(0, 256, (3, 1, w), device="cuda", dtype=torch.uint8)
    grey = poisoned_runner(kernel, "u8")(img)
    problem = problems.get("rgb_to_grey")
    tol = problem.tolerance(problem.parse_shape(f"3x1x{w}"), "u8")
    err = problem.error(grey, (img,))
    assert err <= tol, f"{kernel.name}: error {err:.3g} > {tol:.3g} on a 1 x {w} image"
    del img, grey
    _release()


@pytest.mark.parametrize("kernel", GREY, ids=[k.name for k in GREY])
def test_rgb_to_grey_grid_limit_is_named(kernel):
    """Past the largest image a kernel's grid holds, a clear error naming the size, the
    blocks it needs and the limit. The Triton twin: 65535 column blocks of 512 along grid
    axis 1 (a 1 x (65535 * 512 + 1) image, 100 MB). The CUDA kernel: 65535 x 65535 column
    blocks along grid y and z, and 2^31 - 1 blocks of 8 rows along x: images no GPU holds,
    given as expanded views of one pixel, which the op measures before it copies them."""
    import torch

    if kernel.backend == "cuda":
        wide, tall = 65535**2 * 512 + 1, (2**31 - 1) * 8 + 1
        pixel = torch.zeros(3, 1, 1, device="cuda", dtype=torch.uint8)
        refusals = [(pixel.expand(3, 1, wide), rf"rgb_to_grey: a 1 x {wide} image needs "
                     rf"{65535**2 + 1} blocks along grid y and z \(one per 512 columns\), more "
                     rf"than the 65535 x 65535 CUDA allows: W must be <= {wide - 1}"),
                    (pixel.expand(3, tall, 1), rf"rgb_to_grey: a {tall} x 1 image needs {2**31} "
                     rf"blocks along grid x \(one per 8 rows\), more than the {2**31 - 1} CUDA "
                     rf"allows: H must be <= {tall - 1}")]
    else:
        w = 65535 * 512 + 1
        refusals = [(torch.zeros(3, 1, w, device="cuda", dtype=torch.uint8),
                     rf"rgb_to_grey: a 1 x {w} image needs 65536 .*65535")]
    for img, message in refusals:
        with pytest.raises((RuntimeError, ValueError), match=message):
            kernel.runner("u8")(img)
