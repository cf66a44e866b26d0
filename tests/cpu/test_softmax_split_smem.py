"""CPU tier: the split softmax's shared-memory kernel (triton_impl/softmax_split_smem.py, Gluon)
without a GPU: its plans, and the kernel compiled for sm_90.

  - plan(): lines of 256, 128 or 64 elements, boxes within TMA's 256 lines, segments that
    cover the row with none empty, as equal as a box allows, within the segment bytes asked;
    rows that are not a multiple of 64 get None;
  - the compiled kernel: TMA loads (one per box; twice as many with two buffers, the
    prologue's), 16-byte shared-memory reads and 16-byte streaming stores, the exchange's
    release atomic and acquire polls, no spill, and few enough registers for its programs
    per SM;
  - rows of one segment exchange nothing and zero no counters.
(Under the interpreter, _softmax_split(smem=True) runs the register kernels:
tests/interpreter/test_softmax_split_smem.py.)
The compiles run in a subprocess: the CPU tier interprets Triton kernels (TRITON_INTERPRET=1),
and an interpreted kernel cannot be compiled.
"""
from __future__ import annotations

import pytest

from tests.support.compiled import json_from_subprocess


@pytest.mark.parametrize("element_size", [4, 2])
@pytest.mark.parametrize("n", [64, 64 * 7, 128 * 3, 4096, 32768, 65536 + 64, 393216,
                               1_000_064, 2**31 - 64])
@pytest.mark.parametrize("tile", [None, (4096, 2, 4), (98304, 1, 8), (16384, 1, 8)])
def test_plans_cover_the_row(element_size, n, tile):
    from triton_impl import softmax_split_smem as sm, tiles

    p = sm.plan(element_size, n, *(tile or ()))
    seg_bytes = (tile or tiles.SOFTMAX_SPLIT_SMEM[element_size])[0]
    W, chunk, seg_chunks, G = p["W"], p["CHUNK"], p["SEG_CHUNKS"], p["SEGMENTS"]
    assert W in (256, 128, 64) and n % W == 0 and (n % (2 * W) != 0 or W == 256)
    assert 1 <= chunk <= 256 and chunk * W * element_size % 16 == 0
    assert chunk * W == sm.PER_THREAD[element_size] * 32 * p["num_warps"]
    R = n // W
    lines = seg_chunks * chunk
    assert G * lines >= R > (G - 1) * lines                  # covered, no empty segment
    assert seg_chunks * chunk * W * element_size <= max(seg_bytes, chunk * W * element_size)
    assert p["SEGMENTS_P2"] >= G and p["MASKED"] == (R % chunk != 0)
    # as equal as a box allows: one box fewer per segment would need another segment
    if seg_chunks > 1:
        assert G * (seg_chunks - 1) * chunk < R


def test_rows_not_a_multiple_of_64_have_no_plan():
    from triton_impl import softmax_split_smem as sm

    assert [sm.plan(2, n) for n in (1, 63, 100, 1000, 32767, 2**31 - 1)] == [None] * 6
    assert sm.line_width(192) == 64 and sm.line_width(384) == 128 and sm.line_width(512) == 256


@pytest.mark.parametrize("tile", [(65536, 1, 3), (65536, 1, 64), (65536, 3, 8), (0, 1, 8)])
def test_bad_tiles_are_refused_by_name(tile):
    from triton_impl import softmax_split_smem as sm

    with pytest.raises(ValueError, match=r"triton_softmax_split: the shared-memory tile needs"):
        sm.plan(2, 4096, *tile)


def test_32_warps_keep_boxes_within_256_lines():
    from triton_impl import softmax_split_smem as sm

    assert sm.plan(2, 64 * 1001, warps=32)["CHUNK"] == 256     # W = 64: 16 x 32 x 32 / 64


def test_rows_of_one_segment_zero_no_counters():
    """The workspace of rows of one segment in one launch is one unused element each: no
    launch to zero the arrival counters, which the exchange would not read. The two
    launches keep their pairs."""
    from triton_impl import softmax_split

    pairs, count = softmax_split._workspace(1000, 1, "cpu")
    assert pairs.numel() == 2 and count.numel() == 1
    pairs, count = softmax_split._workspace(1000, 3, "cpu")
    assert pairs.shape == (1000, 3, 2) and bool((count == 0).all()) and count.numel() == 1000
    pairs, count = softmax_split._workspace(1000, 1, "cpu", two_launches=True)
    assert pairs.shape == (1000, 1, 2)       # the first launch's pairs, read by the second


COMPILE = r'''
import json, re, sys
from bench import wgmma_hazards as wh
from triton_impl import softmax_split_smem as sm

def compile_one(dt, elem, n, tile):
    p = sm.plan(elem, n, *(tile or ()))
    layout, smem_layout, box_layout, pair_layout = sm._layouts(elem, p["W"], p["num_warps"])
    sig = {"x_desc": f"tensordesc<{dt}[1, {p['CHUNK']}, {p['W']}],{box_layout!r}>",
           "y_ptr": f"*{dt}", "part_ptr": "*fp32", "count_ptr": "*i32", "rows": "i32",
           "R": "i32"}
    consts = {k: v for k, v in p.items() if k != "num_warps"}
    consts.update(SPIN_LIMIT=1 << 20, layout=layout, smem_layout=smem_layout,
                  pair_layout=pair_layout)
    sig.update({k: "constexpr" for k in consts})
    sass, warnings = wh.compile_for_sm90(sm.softmax_row_split_smem_kernel, sig, consts,
                                         p["num_warps"], gluon=True)
    return dict(plan={k: v for k, v in p.items()}, warnings=warnings,
                tma=sass.count("UTMALDG"), lds128=sass.count("LDS.128"),
                st128=sass.count("STG.E.EF.128"), spills=sass.count("STL"),
                release=len(re.findall(r"MEMBAR.ALL.GPU", sass)),
                red=len(re.findall(r"REDG?\.E\.ADD\.STRONG\.GPU|ATOMG?\.E\.ADD\.STRONG\.GPU", sass)),
                acquire=len(re.findall(r"LDG\.E\.STRONG\.GPU", sass)),
                registers=max(int(r) for r in re.findall(r"R(\d+)\b", sass)) + 1)

out = {}
for name, dt, elem, n, tile in (("fp32 393216", "fp32", 4, 393216, None),
                                ("bf16 393216", "bf16", 2, 393216, None),
                                ("fp16 448", "fp16", 2, 448, None),
                                ("fp32 384 two buffers", "fp32", 4, 384, (4096, 2, 4)),
                                ("bf16 65600 two buffers", "bf16", 2, 65600, (16384, 2, 8))):
    out[name] = compile_one(dt, elem, n, tile)
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def compiled():
    return json_from_subprocess(["-c", COMPILE], timeout=1200)


@pytest.mark.slow
def test_compiled_kernel_moves_rows_by_tma_and_16_byte_accesses(compiled):
    for name, r in compiled.items():
        p = r["plan"]
        loads = p["SEG_CHUNKS"] * (2 if p["BUFFERS"] == 2 else 1)   # + the prologue's
        assert r["tma"] == loads, (name, r)
        assert r["lds128"] >= 1 and r["st128"] >= 1, (name, r)
        assert r["spills"] == 0 and r["warnings"] == [], (name, r)


@pytest.mark.slow
def test_compiled_kernel_exchanges_with_release_and_acquire(compiled):
    """Rows of several segments publish with a release atomic and poll with acquire loads;
    a row of one segment (fp16 448) exchanges nothing."""
    for name, r in compiled.items():
        if r["plan"]["SEGMENTS"] == 1:
            assert r["red"] == 0 and r["acquire"] == 0, (name, r)
        else:
            assert r["release"] >= 1 and r["red"] == 1 and r["acquire"] >= 1, (name, r)


@pytest.mark.slow
def test_compiled_kernel_fits_three_programs_per_sm(compiled):
    """8 warps at <= 80 registers: the register file holds 3 programs per SM (the shared
    memory's count for the default 64 KiB segments)."""
    for name, r in compiled.items():
        if r["plan"]["num_warps"] == 8:
            assert r["registers"] <= 80, (name, r)
