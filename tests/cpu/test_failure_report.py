"""CPU tier: the note of a failed check, on error maps made by hand.

Where it fails (bench/check.py: where_wrong, diagnose, tile_candidates); the error maps of
the memory ops (their maximum is error()); the text of reads past the inputs
(bench/out_of_bounds.py). The same notes from real wrong kernels:
tests/interpreter/test_failure_report.py."""
from __future__ import annotations

import math

import torch

from bench import check, out_of_bounds, problems
from bench.families.memory import problems as pm

OWN = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, num_warps=4, precision="fp32")


def _where(shape, wrong, tiles=None, layout=None, nan=False, **kw):
    """where_wrong of an error map that is 1 (or inf and the output NaN) at `wrong`."""
    err, out = torch.zeros(shape, dtype=torch.float64), torch.zeros(shape)
    err[wrong] = math.inf if nan else 1.0
    if nan:
        out[wrong] = math.nan
    return check.where_wrong(err, 1e-6, out, tiles, layout, **kw)


def test_tile_candidates_take_the_kernels_own_names_first():
    assert check.tile_candidates(OWN, check.ROW_TILES) == [("BLOCK_M = 32", 32)]
    assert check.tile_candidates(dict(T=16, V=4), check.COLUMN_TILES) == [("T*V = 64", 64),
                                                                         ("V = 4", 4)]
    # booleans, sizes of 1 and repeated sizes are no tiles
    assert check.tile_candidates(dict(BLOCK=1, L=True, BM=64, BN=64), check.ROW_TILES) == \
        [("BM = 64", 64)]
    assert check.tile_candidates({}, check.ELEMENT_TILES) == []


def test_an_l_along_the_bottom_and_right_edges_is_named_with_the_kernels_tiles():
    wrong = torch.zeros(67, 69, dtype=torch.bool)
    wrong[64:, :] = wrong[:, 64:] = True
    text = _where((67, 69), wrong, OWN, nan=True)
    assert text.startswith("527 of 4623 elements wrong (11.4%), first at [0, 64]; all NaN: "
                           "never written, or computed from reads past the inputs; ")
    assert text.endswith("the last 3 rows and the last 5 columns (an L along the bottom and "
                         "right edges: partial tiles past row 64 and column 64, multiples of "
                         "BLOCK_M = 32 and BLOCK_N = 32)")
    # without tiles of its own the edges are still named, without a multiple
    assert _where((67, 69), wrong).endswith("partial tiles past row 64 and column 64)")
    corner = torch.zeros(67, 69, dtype=torch.bool)
    corner[64:, 64:] = True
    assert "the bottom-right corner, rows 64-66 x columns 64-68 (the tile past row 64 and " \
           "column 64, multiples of T*V = 64)" in _where((67, 69), corner, dict(T=16, V=4))


def test_a_tail_of_columns_names_the_kernels_tile_before_the_generic_sizes():
    text = _where((100, 70), (slice(None), slice(64, None)), OWN)
    assert "whole columns: the last 6 columns (64-69): they start at 64, a multiple of " \
           "BLOCK_N = 32, where a partial tile begins" in text
    assert "a multiple of 64, where" in _where((100, 70), (slice(None), slice(64, None)))
    assert "the last column (64): a partial tile of BLOCK_N = 32 begins there" in \
        _where((100, 65), (slice(None), -1), OWN)
    assert "every column with index % 32 == 31: a tile edge inside (BLOCK_N = 32)" in \
        _where((100, 256), (slice(None), slice(31, None, 32)), OWN)


def test_a_flat_output_names_its_tail_and_its_blocks():
    block = dict(BLOCK=1024)
    text = _where((4099,), slice(4096, None), block, nan=True, nan_cause=check.NAN_UNWRITTEN)
    assert text == ("3 of 4099 elements wrong (0.0732%), first at 4096; all NaN: never "
                    "written (a rerun that checked every load found none out of bounds); "
                    "elements 4096-4098, the tail past the last full block of 1024 (BLOCK)")
    assert _where((4099,), slice(1024, None), block).endswith(
        "elements 1024-4098, everything past the first block of 1024 (BLOCK)")
    assert _where((4099,), slice(1024, None)).endswith(
        "elements 1024-4098: they start at 1024, a multiple of 256, where a partial block begins")
    two = torch.zeros(4099, dtype=torch.bool)
    two[1024:2048] = two[3072:4096] = True
    assert _where((4099,), two, block).endswith(
        "whole blocks of 1024 (BLOCK): blocks 1, 3 (elements 1024-2047, 3072-4095)")
    tail = torch.zeros(3, 5, 7, dtype=torch.bool)
    tail.view(-1)[96:] = True
    assert _where((3, 5, 7), tail, dict(BLOCK=32)).endswith(
        "elements 96-104 of the flattened output, the tail past the last full block of 32 "
        "(BLOCK)")
    assert _where((10,), [2, 5]).endswith("elements 2, 5")
    # an element-wise op over 2-D: the flat pattern first, else its rows (no normalisation)
    assert _where((1000, 1000), 1, block, "elements").endswith("; row 1 (every element)")
    assert _where((1000, 1000), (slice(None), slice(998, None)), block, "elements").endswith(
        "; the last 2 columns (998-999) of every row")
    # an aligned range is whole blocks only of the kernel's own size, never of a generic one
    assert "blocks" not in _where((4099,), slice(1000, 2000), block)


def test_rows_say_which_rows_and_which_columns_within_them():
    err, out = torch.zeros(3, 5, dtype=torch.float64), torch.zeros(3, 5)
    err[1] = 0.25                                # one factor off in the whole row
    assert check.where_wrong(err, 1e-6, out, layout="rows").endswith(
        "row 1 (every element): the row's normalisation (each element off by one factor "
        "per row)")
    err[:] = 0.25
    assert check.where_wrong(err, 1e-6, out, layout="rows").endswith(
        "every element: the row's normalisation (each element off by one factor per row)")
    err[:] = torch.rand(3, 5) + 1               # whole rows, no common factor
    assert check.where_wrong(err, 1e-6, out, layout="rows").endswith("every element")
    assert _where((3, 5), (slice(None), 4), layout="rows").endswith(
        "the last column (4) of every row")
    assert _where((4, 1027), ([1, 3], slice(1024, None)), dict(BLOCK=1024), "rows").endswith(
        "the last 3 columns (1024-1026) of rows 1, 3 (the same in each): they start at 1024, "
        "a multiple of BLOCK = 1024, where a partial tile begins")
    assert _where((3, 5), ([0, 2], [1, 3]), layout="rows").endswith("in rows 0, 2; in columns 1, 3")


def test_the_notes_existing_patterns_keep_their_words():
    """The generic patterns read as before (docs/plugins.md shows them)."""
    assert "whole rows: the last 44 rows (256-299): they start at 256, a multiple of 256, " \
           "where a partial tile begins" in _where((300, 200), slice(256, None))
    assert "in rows 5, 100; in columns 3, 7" in _where((300, 200), ([5, 100], [7, 3]))
    assert _where((4, 4), []) == ""


def _softmax_case(shape="3x5"):
    problem = problems.get("softmax")
    inputs = problem.inputs(problem.parse_shape(shape), "fp32", seed=0)
    return problem, inputs, torch.softmax(inputs[0].double(), inputs[1]).float()


def test_softmax_has_an_error_map_and_says_which_rows():
    problem, inputs, good = _softmax_case()
    wrong = good.clone()
    wrong[1] *= 0.9                               # row 1 normalised by the wrong sum
    tol = problem.tolerance(problem.parse_shape("3x5"), "fp32")
    assert check.diagnose(problem, wrong, inputs, "random", tol).endswith(
        "row 1 (every element): the row's normalisation (each element off by one factor "
        "per row)")
    problem, inputs, good = _softmax_case("4x3x5:dim=1")   # rows along dim 1: 4 x 5 of 3
    wrong = good.clone()
    wrong[2, :, 4] = math.nan
    note = check.diagnose(problem, wrong, inputs, "random", tol)
    assert "3 of 60 elements wrong" in note and "all NaN: never written, or computed" in note
    assert note.endswith("row 14 (every element)")          # [2, :, 4] is row 2 * 5 + 4


def test_error_maps_of_the_memory_ops_peak_at_their_error():
    """error() is the largest element of error_map(), for right and wrong outputs alike."""
    problem, inputs, good = _softmax_case("5x200:dim=0")
    for out in (good, good * 1.001, torch.where(good > 0.01, good, 0.0),
                good.index_put((torch.tensor([0]), torch.tensor([3])), torch.tensor(math.nan))):
        assert float(problem.error_map(out, inputs).max()) == problem.error(out, inputs)
    grey = problems.get("rgb_to_grey")
    img = grey.inputs(grey.parse_shape("3x7x5"), "u8", seed=0)
    out = torch.full((7, 5), 128, dtype=torch.uint8)
    assert float(grey.error_map(out, img).max()) == grey.error(out, img)
    assert grey.error_map(out[:6], img) is None and grey.error(out[:6], img) == math.inf


def test_dropout_maps_each_element_and_names_a_wrong_keep_rate():
    problem = problems.get("relu_dropout")
    inputs = problem.inputs(problem.parse_shape("1000"), "fp32", seed=0, mode="nonfinite")
    x, p, seed = inputs
    good = pm.relu_dropout_expected(x, p, seed)
    assert float(problem.error_map(good, inputs).max()) == problem.error(good, inputs) == 0.0
    off = good.clone()
    off[7] = good[7] * 1.5 if good[7] else 1.0
    assert float(problem.error_map(off, inputs).max()) == problem.error(off, inputs) > 0
    kept_all = pm.relu_dropout_expected(x, 0.0, seed) / (1 - p)   # nothing dropped
    assert problem.error(kept_all, inputs) == math.inf
    note = check.diagnose(problem, kept_all, inputs, "random", 1e-6)
    assert "standard deviations from 1 - p = 0.5" in note and note.startswith("keeps ")


def test_a_read_past_an_input_is_told_with_its_index_and_distance():
    b = torch.zeros(19, 13)
    guarded = out_of_bounds.guarded_copy(b)
    assert guarded.stride() == b.stride() and torch.equal(guarded, b)
    buf = guarded.untyped_storage()
    assert len(buf) // 4 >= b.numel() + 2 * out_of_bounds.MARGIN
    assert float(torch.tensor([], dtype=torch.float32).set_(buf)[0]) == out_of_bounds.GUARD
    odd = torch.zeros(40)[3:]                            # 12 bytes past a 64-byte line
    assert out_of_bounds.guarded_copy(odd).data_ptr() % 64 == odd.data_ptr() % 64
    read = out_of_bounds.OutOfBoundsRead("mm_kernel", "b_ptr", guarded, 247, (0, 1, 0), 338)
    before = out_of_bounds.OutOfBoundsRead("mm_kernel", "ws_ptr", torch.zeros(8), -2, (3, 0, 0))
    rerun = out_of_bounds.Rerun(out=torch.zeros(2), launches=1, reads=[read, before],
                                names={guarded.data_ptr(): "b"})
    assert rerun.describe() == (
        "reads out of bounds: b[19, 0], 1 past the end of b (19x13): b_ptr of mm_kernel, "
        "first in program (0, 1, 0), 338 element reads in all; ws_ptr[-2], 2 before the "
        "start of ws_ptr (8): mm_kernel, first in program (3, 0, 0); a rerun that checked "
        "every load (such reads gave 4096 there)")
