"""The split softmax (triton_impl/softmax_split.py, a row over several programs)
under the interpreter gives the reference's answer on small, awkward shapes. The interpreter runs
its two-launch form when a row takes more than one program, and the one-launch exchange when
it takes one; _softmax_split's shorter segments give small rows several. bfloat16 is left to
the GPU (the interpreter rounds float32 -> bfloat16 toward zero)."""
from __future__ import annotations

import math

import pytest
import torch

from tests.support.checks import softmax_error, softmax_rows

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning")]


@pytest.mark.parametrize("shape,block", [((3, 100), None), ((5, 1000), 256), ((2, 4096), 1024),
                                         ((4, 37), 16), ((3, 1), None), ((2, 2049), 512)])
def test_split_softmax_folds_the_segments(shape, block):
    """Rows of 1 to 16 segments, a last segment with one element (2049 = 4 x 512 + 1)."""
    from triton_impl import softmax_split

    x = softmax_rows(shape)
    y = softmax_split._softmax_split(x, block=block)
    err, bound = softmax_error(y, x, "fp32")
    assert err <= bound, (shape, block, err)


def test_split_softmax_one_launch_exchange_when_a_row_is_one_segment():
    """A row of one segment runs the GPU path (PHASE 0: publish, count, poll, fold) even
    under the interpreter: its own arrival completes the count."""
    from triton_impl import softmax_split

    x = softmax_rows((6, 200))
    y = softmax_split.softmax_split(x)                  # block 256 >= 200: one segment
    assert softmax_split.config(4, 200)[2] == 1
    err, bound = softmax_error(y, x, "fp32")
    assert err <= bound


def test_split_softmax_two_launches_equal_one_launch():
    from triton_impl import softmax_split

    x = softmax_rows((5, 300))
    assert torch.equal(softmax_split._softmax_split(x, block=512),
                       softmax_split._softmax_split(x, block=512, two_launches=True))


def test_split_softmax_two_launches_keep_the_pairs_of_one_segment_rows(monkeypatch):
    """A row of one segment exchanges nothing in one launch (one unused workspace element),
    but the two launches pass its pair from the first to the second: their workspace holds
    every row's (a one-element workspace there was written past its end)."""
    from triton_impl import softmax_split

    made = []
    workspace = softmax_split._workspace

    def recorded(rows, segments, device, two_launches=False):
        pairs, count = workspace(rows, segments, device, two_launches)
        made.append((two_launches, pairs.numel()))
        return pairs, count

    monkeypatch.setattr(softmax_split, "_workspace", recorded)
    x = softmax_rows((5, 300))
    softmax_split._softmax_split(x, block=512, two_launches=True)
    softmax_split._softmax_split(x, block=512)
    assert made == [(True, 5 * 1 * 2), (False, 2)]


def test_split_softmax_non_finite_rows_as_torch():
    """A NaN, a +inf, half the row -inf (the first segments all -inf), all -inf: as
    torch.softmax (NaN rows where torch gives NaN, the rest within the bound)."""
    from triton_impl import softmax_split

    x = softmax_rows((4, 300))
    x[0, 5] = math.nan
    x[1, 299] = math.inf
    x[2, :150] = -math.inf
    x[3, :] = -math.inf
    y = softmax_split._softmax_split(x, block=64)
    err, bound = softmax_error(y, x, "fp32")
    assert err <= bound
    assert torch.isnan(y[[0, 1, 3]]).all() and not torch.isnan(y[2]).any()


def test_split_softmax_float16_unaligned_rows():
    """n * 2 bytes not a multiple of 16: the element-wise path (VEC = 1)."""
    from triton_impl import softmax_split

    x = softmax_rows((3, 1001), torch.float16)
    y = softmax_split._softmax_split(x, block=256)
    assert y.dtype == torch.float16
    err, bound = softmax_error(y, x, "fp16")
    assert err <= bound


def test_split_softmax_refuses_other_dims_and_checks_inputs():
    from triton_impl import softmax_split

    with pytest.raises(ValueError, match="last dimension only"):
        softmax_split.softmax_split(softmax_rows((3, 4)), 0)
    with pytest.raises(TypeError, match="float32, float16 or bfloat16"):
        softmax_split.softmax_split(torch.ones(3, 4, dtype=torch.int64))


def test_split_softmax_rows_over_groups():
    """A row of one segment runs the one-launch kernel under the interpreter: 10 rows over the
    interpreter's groups of programs (fewer than the rows: each group loops), within the
    bound."""
    from triton_impl import _common, softmax_split

    x = softmax_rows((10, 200))
    assert softmax_split.config(4, 200)[2] == 1 and _common.INTERPRETER_SM_COUNT < 10
    y = softmax_split.softmax_split(x)
    err, bound = softmax_error(y, x, "fp32")
    assert err <= bound


def test_resident_programs_counts_the_tightest_resource(monkeypatch):
    """Per SM: threads, registers (per warp, in units of 256) and shared memory; times SMs."""
    from triton_impl import _common, softmax_split

    class Props:  # an H100's numbers
        max_threads_per_multi_processor = 2048
        regs_per_multiprocessor = 65536
        shared_memory_per_multiprocessor = 233472
        multi_processor_count = 132

    monkeypatch.setattr(_common, "interpreting", lambda: False)
    monkeypatch.setattr(_common, "cuda_properties", lambda device: Props)
    cuda = torch.device("cuda", 0)
    # 8 warps x 80 registers: 2560 per warp -> 25 warps -> 3 programs per SM
    assert softmax_split.resident_programs(80, 0, 8, cuda) == 3 * 132
    # 16 warps x 64 registers: 2048 per warp -> 32 warps -> 2 programs (threads allow 4)
    assert softmax_split.resident_programs(64, 0, 16, cuda) == 2 * 132
    # 4 warps x 56 registers: 1792 per warp -> 36 warps -> 9 programs (threads allow 16,
    # 20 KiB of shared memory each 10)
    assert softmax_split.resident_programs(56, 20 * 1024, 4, cuda) == 9 * 132
    # 8 warps x 32 registers and 20 KiB: threads and registers allow 8, shared memory 10
    assert softmax_split.resident_programs(32, 20 * 1024, 8, cuda) == 8 * 132


@pytest.mark.parametrize("dtype,precision", [(torch.float32, "fp32"), (torch.float16, "fp16")])
@pytest.mark.parametrize("shape,block", [((5, 300), None), ((3, 1000), 128), ((2, 4099), 1024),
                                         ((4, 1), None)])
def test_split_softmax_kept_exps_are_the_softmax(shape, block, dtype, precision):
    """The kernel keeps the exps of the segment's sum and multiplies them by exp(m - M) / S
    (16-bit outputs: exps raised by 2^8, the scale lowered by as much; tl.exp2 under the
    interpreter): one segment per row runs the one-launch exchange, several the two launches,
    whose second launch takes the same arithmetic."""
    from triton_impl import softmax_split

    x = softmax_rows(shape, dtype)
    y = softmax_split._softmax_split(x, block=block)
    err, bound = softmax_error(y, x, precision)
    assert err <= bound, (err, bound)


def test_split_softmax_tiny_outputs():
    """Outputs far below the row's maximum (x - M from -80 to -105: float32 subnormals, a
    segment's scale exp(m - M) itself subnormal) stay within the bound, which counts errors
    below the smallest normal number in its units."""
    from triton_impl import softmax_split

    tiny = torch.zeros(2, 256)
    tiny[:, 1:] = -80.0 - torch.arange(255) * 0.1
    for block in (64, 256):
        y = softmax_split._softmax_split(tiny, block=block)
        err, bound = softmax_error(y, tiny, "fp32")
        assert err <= bound and (y[:, 1:] > 0).any()



@pytest.mark.parametrize("shape", [(5, 256), (3, 1000), (4, 8192)])
def test_split_softmax_packed_is_the_softmax(shape, monkeypatch):
    """The packed path (the default for 16-bit rows) runs a float16 row of one segment as
    int32 pairs under the interpreter (unpacked with integer ops and bit casts, both exps by
    tl.exp2): the same answer as the unpacked kernel, within the bound; rows it does not
    take (odd lengths, several segments under the interpreter) go to that kernel."""
    from triton_impl import softmax_split

    taken = []
    packed = softmax_split._packed_split
    monkeypatch.setattr(softmax_split, "_packed_split",
                        lambda *a, **k: taken.append(packed(*a, **k)) or taken[-1])
    x = softmax_rows(shape, torch.float16)
    x[1, :100] = -math.inf
    y = softmax_split.softmax_split(x)
    assert taken[-1] is not None
    err, bound = softmax_error(y, x, "fp16")
    assert err <= bound
    taken.clear()
    z = softmax_rows((3, 1001), torch.float16)        # 2002-byte rows: not asked
    softmax_split.softmax_split(z)
    assert taken == []
    z = softmax_rows((3, 20000), torch.float16)       # 3 segments under the interpreter: None
    err, bound = softmax_error(softmax_split.softmax_split(z), z, "fp16")
    assert taken == [None] and err <= bound


def test_split_softmax_packed_non_finite_rows():
    from triton_impl import softmax_split

    x = softmax_rows((4, 1000), torch.float16)
    x[0, 5] = math.nan
    x[1, 999] = math.inf
    x[2, :500] = -math.inf
    x[3, :] = -math.inf
    y = softmax_split.softmax_split(x)
    err, bound = softmax_error(y, x, "fp16")
    assert err <= bound
    assert torch.isnan(y[[0, 1, 3]]).all() and not torch.isnan(y[2]).any()
