"""CPU tier: triton_skinny (triton_impl/matmul_skinny.py) compiled for sm_90 without a GPU, at
every tile of tiles.SKINNY_FMA in fp32: no tl.dot (an fp32 product summed over k is a pattern
Triton may rewrite into a dot, at tf32; the interpreter cannot see such a rewrite), the big
operand in 16-byte vector loads, no spill, and at least R * BLOCK_K * BLOCK_N / threads
multiplies (FFMA, or the FMUL that starts a run of V) per step. The compiles run in a subprocess (the CPU tier
interprets Triton kernels, and an interpreted kernel cannot be compiled).
"""
from __future__ import annotations

import pytest

from tests.support.compiled import json_from_subprocess


COMPILE = r'''
import json, re, subprocess, tempfile, os
import triton
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget
from bench import wgmma_hazards as wh
from triton_impl import matmul_skinny as ms, tiles

SIG = ["a_ptr", "b_ptr", "c_ptr", "w_ptr", "R", "N", "K", "steps", "stride_ar", "stride_ak",
       "stride_bk", "stride_bn", "stride_cr", "stride_cn"]


def compile_skinny(side, r, p):
    # as the wrapper calls it on contiguous operands: "rows" (N small) A' = B^T, B' = A^T,
    # whose unit strides are stride_ar and stride_bk; "cols" (M small) stride_ak, stride_bn
    unit = ("stride_ar", "stride_bk") if side == "rows" else ("stride_ak", "stride_bn")
    sig = {n: ("*fp32" if n.endswith("_ptr") else "i32") for n in SIG}
    consts = dict(BLOCK_R=r, BLOCK_K=p["BLOCK_K"], BLOCK_N=p["BLOCK_N"], V=p["V"], SPLIT=True,
                  K_WIDE=False, **{u: 1 for u in unit})
    sig.update({k: "constexpr" for k in consts})
    divisible = [n for n in SIG if n.endswith("_ptr") or n in ("N", "K")
                 or (n.startswith("stride") and n not in unit)]
    attrs = {(list(sig).index(n),): [["tt.divisibility", 16]] for n in divisible}
    return triton.compile(ASTSource(ms.matmul_skinny_kernel, sig, consts, attrs),
                          target=GPUTarget("cuda", 90, 32),
                          options=dict(num_warps=p["num_warps"], num_stages=p["num_stages"]))


report = {}
for side, table in tiles.SKINNY_FMA.items():
    for r, p in table.items():
        k = compile_skinny(side, r, p)
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "k.cubin"), "wb").write(k.asm["cubin"])
            tool = wh._tool("cuobjdump")
            sass = subprocess.run([tool, "-sass", os.path.join(d, "k.cubin")],
                                  capture_output=True, text=True, check=True).stdout
            res = subprocess.run([tool, "-res-usage", os.path.join(d, "k.cubin")],
                                 capture_output=True, text=True, check=True).stdout
        ttgir = k.asm["ttgir"]
        report[f"{side} {r}"] = dict(
            dots=ttgir.count("tt.dot") + ttgir.count("warp_group_dot"),
            mma=len(re.findall(r"\s[HIDQ]?MMA\b|HGMMA", sass)), ffma=sass.count("FFMA"),
            fmul=sass.count("FMUL"), ldg128=sass.count("LDG.E.128"),
            spills=sass.count("STL"), registers=int(re.findall(r"REG:(\d+)", res)[0]),
            threads=32 * p["num_warps"], elements=r * p["BLOCK_K"] * p["BLOCK_N"])
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def compiled():
    return json_from_subprocess(["-c", COMPILE])


@pytest.mark.slow
def test_skinny_compiles_to_fmas_not_a_dot(compiled):
    from triton_impl import tiles

    assert set(compiled) == {f"{side} {r}" for side, t in tiles.SKINNY_FMA.items() for r in t}
    for name, c in compiled.items():
        assert c["dots"] == 0 and c["mma"] == 0, (name, c)
        # a multiply per element: FFMA, and an FMUL to start each run of V
        assert c["ffma"] + c["fmul"] >= c["elements"] // c["threads"], (name, c)
        assert c["spills"] == 0, (name, c)


@pytest.mark.slow
def test_skinny_loads_the_big_operand_in_vectors(compiled):
    """Every step's loads of B' are 16-byte vectors: BLOCK_K * BLOCK_N * 4 / 16 / threads of
    them at least."""
    from triton_impl import tiles

    for side, table in tiles.SKINNY_FMA.items():
        for r, p in table.items():
            c = compiled[f"{side} {r}"]
            vectors = p["BLOCK_K"] * p["BLOCK_N"] // 4 // c["threads"]
            assert c["ldg128"] >= max(1, vectors), (side, r, c)
