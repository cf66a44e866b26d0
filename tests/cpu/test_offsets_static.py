"""The detector of 32-bit pointer offsets (tests/support/int32_offsets.py) on hand-written
TTIR: it finds a wrapping product, follows splats and broadcasts, finds a loop counter that
steps past 2^31 and a tile count that wraps. Every kernel of the registry is recorded and
scanned in tests/interpreter/test_offsets_static.py.
"""
from __future__ import annotations

from tests.support import int32_offsets as io


def test_the_scan_finds_a_wrapping_product():
    """The detector itself, on TTIR of the shape Triton emits for `ptr + pid * n`, plus the
    same product extended to int64 first (which is safe)."""
    ttir = """
    %pid = tt.get_program_id x : i32 loc(#loc1)
    %off = arith.muli %pid, %n : i32 loc(#loc2)
    %p = tt.addptr %x_ptr, %off : !tt.ptr<f32>, i32 loc(#loc2)
    %pid64 = arith.extsi %pid : i32 to i64 loc(#loc3)
    %off64 = arith.muli %pid64, %n64 : i64 loc(#loc3)
    %q = tt.addptr %x_ptr, %off64 : !tt.ptr<f32>, i64 loc(#loc3)
#loc1 = loc("k.py":10:0)
#loc2 = loc("k.py":11:0)
#loc3 = loc("k.py":12:0)
"""
    assert io.findings(ttir) == [dict(file="k.py", line=11, op="arith.muli")]


def test_the_scan_follows_splats_and_broadcasts():
    ttir = """
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32> loc(#loc1)
    %s = tt.splat %n : i32 -> tensor<16xi32> loc(#loc1)
    %m = arith.muli %r, %s : tensor<16xi32> loc(#loc1)
    %e = tt.expand_dims %m {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32> loc(#loc2)
    %b = tt.broadcast %e : tensor<16x1xi32> -> tensor<16x16xi32> loc(#loc2)
    %ps = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>> loc(#loc2)
    %p = tt.addptr %ps, %b : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32> loc(#loc2)
#loc1 = loc("k.py":20:0)
#loc2 = loc("k.py":21:0)
"""
    assert [f["line"] for f in io.findings(ttir)] == [20]


def test_the_scan_finds_a_loop_counter_that_steps_past_2_to_the_31():
    """`for k0 in range(0, K, 32)`: the last k0 + 32 wraps when K > 2^31 - 32, and the loop
    never ends. A counter of unit step (`range(tiles)`) cannot pass its bound."""
    ttir = """
  tt.func public @k(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc)), %K: i32 loc("K"(#loc))) {
    %c32_i32 = arith.constant 32 : i32 loc(#loc1)
    %c1_i32 = arith.constant 1 : i32 loc(#loc1)
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %acc = scf.for %k0 = %c0_i32 to %K step %c32_i32 iter_args(%a = %x) -> (f32)  : i32 {
      scf.yield %a : f32 loc(#loc2)
    } loc(#loc2)
    %t = scf.for %kt = %c0_i32 to %K step %c1_i32 iter_args(%a = %x) -> (f32)  : i32 {
      scf.yield %a : f32 loc(#loc3)
    } loc(#loc3)
    tt.return loc(#loc1)
  } loc(#loc)
#loc = loc("k.py":1:0)
#loc1 = loc("k.py":2:0)
#loc2 = loc("k.py":30:0)
#loc3 = loc("k.py":31:0)
"""
    assert io.findings(ttir) == [dict(file="k.py", line=30, op="scf.for")]


def test_the_scan_finds_a_tile_count_that_wraps_at_the_callers_line():
    """tl.cdiv(M, 64) is inlined as M + 63: reported at the kernel's line, not Triton's."""
    ttir = """
  tt.func public @k(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc)), %M: i32 loc("M"(#loc))) {
    %num = arith.constant 63 : i32 loc(#loc1)
    %t = arith.addi %M, %num : i32 loc(#loc4)
    %u = arith.addi %t, %num : i32 loc(#loc4)
    tt.return loc(#loc1)
  } loc(#loc)
#loc = loc("k.py":1:0)
#loc1 = loc("k.py":2:0)
#loc2 = loc("/site-packages/triton/language/standard.py":40:0)
#loc3 = loc("k.py":41:0)
#loc4 = loc(callsite(#loc2 at #loc3))
"""
    assert io.findings(ttir) == [dict(file="k.py", line=41, op="arith.addi")]
