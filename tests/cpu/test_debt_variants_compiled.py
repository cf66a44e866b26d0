"""CPU tier: the Triton kernels of the performance debts (docs/performance/debts/NOTES.md),
compiled for sm_90 without a GPU, and the measuring script's plan.

  - triton_batched's autotuned tf32 candidates (its default at tf32) that swap the operands
    (B^T from registers) wait for each k-step's wgmma: no register written while a wgmma still reads it
    (bench/wgmma_hazards.py) and no wgmma serialised by ptxas (warning C7515);
  - the split softmax's one-launch kernel publishes its pair with a release atomic, polls
    with acquire loads, reads the pairs past L1 (.cg), moves its segment with 16-byte
    accesses without spilling, and takes one exp per element;
  - debts_h100.py --plan names every kernel it measures without a GPU, and no variant that
    lost or became a default.
The compiles run in a subprocess: the CPU tier interprets Triton kernels (TRITON_INTERPRET=1),
and an interpreted kernel cannot be compiled.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.compiled import json_from_subprocess

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "performance" / "debts" / "debts_h100.py"

COMPILE = r'''
import json, re, subprocess, tempfile, os
import torch
from bench import wgmma_hazards as wh
from triton_impl import matmul_batched as mb, softmax_split as ss, tiles
report = {"batched": {}, "split": {}}
for c in tiles.AUTOTUNE_CONFIGS["tf32"]:
    if not c["B_FROM_REGISTERS"]:
        continue
    consts = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")}
    consts.update(INPUT_PRECISION="tf32", NATIVE_TF32_ROUND=True, K_WIDE=False)
    sass, warnings = wh.compile_for_sm90(mb._tunable_kernel,
                                         wh._pointer_signature(mb._tunable_kernel, consts),
                                         consts, c["num_warps"], c["num_stages"])
    name = "{BLOCK_M}x{BLOCK_N}x{BLOCK_K} w{num_warps} s{num_stages}".format(**c)
    report["batched"][name] = dict(hgmma=wh.hgmma_count(sass),
                                   hazards=[t for _, t in wh.hazards(sass)], warnings=warnings)
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
def test_batched_tf32_swap_candidates_are_race_free(compiled):
    from triton_impl import tiles

    swaps = sum(c["B_FROM_REGISTERS"] for c in tiles.AUTOTUNE_CONFIGS["tf32"])
    assert len(compiled["batched"]) == swaps > 0
    for name, r in compiled["batched"].items():
        assert r["hgmma"] > 0, name
        assert r["hazards"] == [], (name, r["hazards"][:4])
        assert r["warnings"] == [], (name, r["warnings"])


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
    """packed=True (16-bit rows as int32 pairs): 64 elements per thread, moved by 8 16-byte
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


def test_the_script_plans_every_variant_without_a_gpu():
    r = subprocess.run([sys.executable, str(SCRIPT), "unused-out", "--plan"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 * 3 + 2 + 2
    assert any("cuda split C=16 (auto)" in line for line in lines if "393216 fp32" in line)
    assert any("cuda split C=8 (auto)" in line for line in lines if "393216 bf16" in line)
    assert all("cuda row_sram, cuda online" in line for line in lines if "32768 fp" in line
               or "32768 bf" in line)
    assert not any("sram packed" in line or "online packed" in line or "one_chunk" in line
                   or "64x64 tiles" in line for line in lines)
    assert not any("row_sram" in line for line in lines if "393216" in line)
    for line in (line for line in lines if line.startswith("softmax")):
        names = set(line.split(": ", 1)[1].split(", "))
        assert {"cuda split (op)", "triton split (op)", "triton split (default)",
                "triton split evict", "triton split .cg"} <= names
        # segment sizes of the default's elements per thread (packed 16-bit: 64, else 32)
        packed = " fp16:" in line or " bf16:" in line
        assert ({"triton split unpacked", "triton split 16384x8w"} if packed
                else {"triton split 8192x8w"}) <= names
        assert not any("lean" in v or "pipelined" in v or "exp once" in v for v in names)
    assert not (ROOT / "unused-out").exists()


@pytest.mark.parametrize("shapes", ["4096x0", "2x3x4", "4096x32768:dim=0", "abc"])
def test_the_script_refuses_bad_softmax_shapes_before_any_work(shapes):
    r = subprocess.run([sys.executable, str(SCRIPT), "unused-out", "--plan",
                        "--softmax-shapes", shapes], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "--softmax-shapes" in r.stderr, r.stderr
    assert not (ROOT / "unused-out").exists()


def test_the_script_plans_other_softmax_shapes():
    r = subprocess.run([sys.executable, str(SCRIPT), "unused-out", "--plan", "--sections",
                        "softmax", "--softmax-shapes", "16x65536,8x1048576"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [line.split(":")[0] for line in r.stdout.splitlines()] == [
        f"softmax {s} {p}" for s in ("16x65536", "8x1048576") for p in ("fp32", "fp16", "bf16")]
