"""CPU tier: the split softmax's register kernels (triton_impl/softmax_split.py), compiled for
sm_90 without a GPU: the one-launch kernel publishes its pair with a release atomic, polls
with acquire loads, reads the pairs past L1 (.cg), moves its segment with 16-byte accesses
without spilling, and takes one exp per element; the packed kernel (16-bit rows as int32
pairs) keeps 64 elements in 64 registers. (The shared-memory kernel:
test_softmax_split_smem.py.) The compiles run in a subprocess: the CPU tier interprets
Triton kernels (TRITON_INTERPRET=1), and an interpreted kernel cannot be compiled.
"""
from __future__ import annotations

import pytest

from tests.support.compiled import json_from_subprocess


COMPILE = r'''
import json, re, subprocess, tempfile, os
import torch
from bench import wgmma_hazards as wh
from triton_impl import softmax_split as ss, tiles
report = {"split": {}}
import triton
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget


def compile_split(kernel, elem, dt, block, warps, n=393216, **extra):
    maxnreg = extra.pop("MAXNREG", None)
    sig = {"x_ptr": f"*{dt}", "y_ptr": f"*{dt}", "part_ptr": "*fp32", "count_ptr": "*i32",
           "rows": "i32", "n": "i32"}
    consts = dict(BLOCK=block, SEGMENTS=n // block,
                  SEGMENTS_P2=triton.next_power_of_2(n // block), VEC=16 // elem,
                  SPIN_LIMIT=ss.SPIN_LIMIT, **extra)
    if kernel is ss.softmax_row_split_pairs_kernel:     # the rows as int32 pairs
        sig = dict(sig, x_ptr="*i32", y_ptr="*i32")
        sig["n2"] = sig.pop("n")
        consts = dict(BF16=dt == "bf16",
                      NEG_INF_PAIR=ss._NEG_INF_PAIR[torch.float16 if dt == "fp16" else torch.bfloat16],
                      BLOCK=block // 2, SEGMENTS=n // block,
                      SEGMENTS_P2=triton.next_power_of_2(n // block),
                      SPIN_LIMIT=ss.SPIN_LIMIT, **extra)
    sig.update({k: "constexpr" for k in consts})
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(6)}
    return triton.compile(ASTSource(kernel, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                          options=dict(num_warps=warps, num_stages=1, maxnreg=maxnreg))


cases = []
for elem, dt in ((4, "fp32"), (2, "bf16")):
    block, warps, cap = tiles.SOFTMAX_SPLIT[elem]
    cases.append((dt, ss.softmax_row_split_kernel, elem, dt, block, warps,
                  dict(PHASE=0, FTZ=True, MAXNREG=cap)))
block, warps, regs = tiles.SOFTMAX_SPLIT_PACKED[2]
for dt in ("fp16", "bf16"):
    cases.append((dt + " packed", ss.softmax_row_split_pairs_kernel, 2, dt, block, warps,
                  dict(FTZ=True, MAXNREG=regs)))
# a row of one segment (3000 elements: 4096 on 2 warps), as the wrapper launches it
cases.append(("bf16 packed one segment", ss.softmax_row_split_pairs_kernel, 2, "bf16", 4096,
              2, dict(FTZ=True, MAXNREG=ss._default_cap(regs, 1), n=4096)))
for name, kernel, elem, dt, block, warps, extra in cases:
    k = compile_split(kernel, elem, dt, block, warps, **extra)
    ptx = k.asm["ptx"]
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "k.cubin"), "wb").write(k.asm["cubin"])
        tool = wh._tool("cuobjdump")
        sass = subprocess.run([tool, "-sass", os.path.join(d, "k.cubin")], capture_output=True,
                              text=True, check=True).stdout
        res = subprocess.run([tool, "-res-usage", os.path.join(d, "k.cubin")],
                             capture_output=True, text=True, check=True).stdout
    report["split"][name] = dict(
        release=len(re.findall(r"atom\.global\.gpu\.release\.add", ptx)),
        acquire=len(re.findall(r"ld\.global\.gpu\.acquire", ptx)),
        cg_loads=len(re.findall(r"ld\.global\.cg", ptx)),
        ld128=sass.count("LDG.E.128"), st128=sass.count("STG.E.EF.128"),
        spills=sass.count("STL"), registers=int(re.findall(r"REG:(\d+)", res)[0]),
        instructions=len(re.findall(r"/\*[0-9a-f]{4}\*/", sass)), fixups=sass.count("-126"),
        exps=sass.count("MUFU.EX2"))
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def compiled():
    return json_from_subprocess(["-c", COMPILE])


@pytest.mark.slow
def test_split_softmax_exchange_and_vector_accesses(compiled):
    assert set(compiled["split"]) == {"fp32", "bf16", "fp16 packed", "bf16 packed",
                                      "bf16 packed one segment"}
    for name, r in compiled["split"].items():
        if "packed" in name:
            continue
        assert r["release"] == 1 and r["acquire"] >= 1 and r["cg_loads"] == 2, (name, r)
        # 32 elements per thread: float32 8 vectors of 16 bytes, 16-bit 4
        vectors = 8 if name == "fp32" else 4
        assert r["ld128"] == vectors and r["st128"] == vectors, (name, r)
        # 4 warps at <= 80 registers: at least 6 programs per SM; float32 capped at 56 (9
        # programs per SM) for one spilled register (tiles.SOFTMAX_SPLIT)
        if name == "fp32":
            assert r["spills"] <= 1 and r["registers"] <= 56, (name, r)
        else:
            assert r["spills"] == 0 and r["registers"] <= 80, (name, r)


@pytest.mark.slow
def test_split_softmax_packed_keeps_64_elements_in_64_registers(compiled):
    """The packed path (16-bit rows as int32 pairs): 64 elements per thread, moved by 8 16-byte
    loads and stores, in 64 registers without a spill (tiles.SOFTMAX_SPLIT_PACKED's cap), the
    exchange as in the kernel above, and the exp taken twice (128 per thread)."""
    one = compiled["split"]["bf16 packed one segment"]          # uncapped: _default_cap
    assert one["spills"] == 0 and one["release"] == 0 and one["acquire"] == 0, one
    for dt in ("fp16", "bf16"):
        r = compiled["split"][dt + " packed"]
        assert r["release"] == 1 and r["acquire"] >= 1 and r["cg_loads"] == 2, (dt, r)
        assert r["ld128"] == 8 and r["st128"] == 8, (dt, r)
        assert r["registers"] <= 64 and r["spills"] == 0, (dt, r)
        assert 128 <= r["exps"] <= 136, (dt, r)


@pytest.mark.slow
def test_split_softmax_takes_one_exp_per_element(compiled):
    """The output multiplies the sum's kept exps by the segment's scale: one MUFU.EX2 per
    element (32 per thread) plus the fold's few, where taking the exp again from x took 64;
    16-bit exps by ex2.approx.ftz, so no compare against -126 of tl.exp's subnormal fix-up
    outside the fold (float32 keeps tl.exp and its fix-up: its subnormal outputs)."""
    for name, r in compiled["split"].items():
        if "packed" not in name:
            assert 32 <= r["exps"] <= 40, (name, r)
    assert compiled["split"]["bf16"]["fixups"] <= 2, compiled["split"]["bf16"]
