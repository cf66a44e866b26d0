"""GPU tier: the split softmax's shared-memory kernel (triton_impl/softmax_split_smem.py,
Gluon + TMA, Hopper only) against float64.

Every plan shape the kernel takes: lines of 256, 128 and 64 elements, rows of one segment and
of many (small segments force many: the exchange), a partial last chunk (masked lines), rows
that are not a multiple of the segment, one and two buffers, 4 and 8 warps, a persistent
grid of one group (every row through one program per segment: the buffers' phases), rows of
-inf, NaN and +inf; that it really ran (launch returns True) and that rows it does not take
fall back to the register kernels. Rows past 2^31 elements: tests/gpu/test_large_offsets.py.
"""
from __future__ import annotations

import math

import pytest

from bench import problems
from tests.support.checks import poisoned, same_nbytes

PRECISION = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


@pytest.fixture(scope="module", autouse=True)
def hopper():
    import torch

    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the shared-memory split needs TMA on compute capability 9.x")


def _run(x, tile=None, groups=None):
    """softmax of x's rows by the shared-memory kernel (asserting that it ran)."""
    import torch

    from triton_impl import softmax_split, softmax_split_smem

    n = x.shape[-1]
    p = softmax_split_smem.plan(x.element_size(), n, *(tile or ()))
    assert p is not None, n
    y = torch.full_like(x, float("nan"))          # poisoned: every element must be written
    ran = softmax_split._smem_split(x, y, x.numel() // n, n, True, tile, groups)
    assert ran, (tuple(x.shape), p)
    return y, p


def _error(y, x):
    return problems.get("softmax").error(y, (x, -1))


def _tolerance(x):
    p = problems.get("softmax")
    return p.tolerance(p.parse_shape("x".join(map(str, x.shape))), PRECISION[str(x.dtype)[6:]])


# (rows, n, tile): tile = (segment bytes, buffers, warps), None: tiles.SOFTMAX_SPLIT_SMEM's
CASES = [
    (3, 64, None),                 # one line of 64, a chunk of mostly masked lines
    (5, 64 * 7, None),             # W = 64, 7 lines: a partial chunk
    (300, 128 * 3, (4096, 1, 4)),  # W = 128, rows > the grid: each program loops
    (33, 4096, (4096, 2, 4)),      # two buffers, one box a segment
    (17, 32768, None),             # one segment a row (16-bit), two (float32)
    (9, 32768, (8192, 2, 8)),      # many segments, two buffers
    (4, 393216, None),             # the target's rows: 8 (16-bit) or 16 (float32) segments
    (6, 65536 + 64, (16384, 1, 8)),  # W = 64, segments not a multiple of the chunk
    (2, 1_000_064, (32768, 2, 4)),  # W = 128, 31-62 segments a row
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("rows, n, tile", CASES, ids=[f"{r}x{n}-{t}" for r, n, t in CASES])
def test_against_float64(dtype, rows, n, tile):
    import torch

    torch.manual_seed(rows + n)
    x = (torch.randn(rows, n, device="cuda") * 4).to(getattr(torch, dtype))
    y, p = _run(x, tile)
    assert _error(y, x) <= _tolerance(x), p


@pytest.mark.parametrize("buffers", [1, 2])
def test_one_group_takes_every_row(buffers):
    """groups=1: one program per segment walks all 40 rows, each buffer's mbarrier through
    20 or 40 phases."""
    import torch

    x = torch.randn(40, 8192, device="cuda", dtype=torch.bfloat16)
    y, _ = _run(x, (4096, buffers, 4), groups=1)
    assert _error(y, x) <= _tolerance(x)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rows_of_minus_inf_nan_and_inf(dtype):
    """A row of -inf: NaN (as softmax); -inf on part of a row (a whole segment of it): 0
    there; a NaN or +inf anywhere in a row: NaN over the row; the other rows unharmed."""
    import torch

    x = torch.randn(6, 65536, device="cuda").to(getattr(torch, dtype))
    x[0] = -math.inf
    x[1, :40000] = -math.inf
    x[2, 12345] = math.nan
    x[3, 65535] = math.inf
    y, _ = _run(x, (16384, 1, 8))
    assert torch.isnan(y[0]).all() and torch.isnan(y[2]).all() and torch.isnan(y[3]).all()
    assert bool((y[1, :40000] == 0).all())
    assert _error(y[[1, 4, 5]], x[[1, 4, 5]]) <= _tolerance(x)


def test_the_default_and_its_fallbacks():
    """softmax_split takes the shared-memory kernel by default for rows as long as
    tiles.SOFTMAX_SPLIT_SMEM says, and where asked; rows it cannot take (not a multiple of
    64, a misaligned start) run the register kernels, correctly."""
    import torch

    from triton_impl import softmax_split

    run = poisoned(softmax_split._softmax_split, same_nbytes)
    for shape in ((7, 393216), (5, 1000), (3, 64 * 1001)):
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.randn(*shape, device="cuda").to(dtype)
            for smem in (None, True, False):
                y = run(x, smem=smem)
                assert _error(y, x) <= _tolerance(x), (shape, dtype, smem)
    base = torch.randn(3 * 4096 + 1, device="cuda", dtype=torch.float16)
    x = base[1:].view(3, 4096)                    # 2 bytes past 16: no TMA
    y = run(x, smem=True)
    assert _error(y, x) <= _tolerance(x)



@pytest.mark.parametrize("smem", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rows_of_one_segment_take_one_launch(smem, dtype):
    """A row of one segment (the source documents' small softmaxes) exchanges nothing: one
    kernel, no second launch to zero arrival counters."""
    import torch

    from triton_impl import softmax_split

    from bench.device import poison_free_memory

    x = torch.randn(1000, 1024, device="cuda").to(getattr(torch, dtype))
    softmax_split._softmax_split(x, smem=smem)                 # compiled before profiling
    poison_free_memory()        # that answer's block, free again, and every other: NaN
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        y = softmax_split._softmax_split(x, smem=smem)
        torch.cuda.synchronize()
    kernels = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert len(kernels) == 1, kernels
    assert _error(y, x) <= _tolerance(x)
