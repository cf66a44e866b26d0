"""CPU tier: the Triton kernels of the performance debts (docs/performance/debts/NOTES.md),
compiled for sm_90 without a GPU, and the measuring script's plan.

  - triton_batched's autotuned tf32 candidates (its default at tf32) that swap the operands
    (B^T from registers) wait for each k-step's wgmma: no register written while a wgmma still reads it
    (bench/wgmma_hazards.py) and no wgmma serialised by ptxas (warning C7515);
  - the split softmax's one-launch kernels (plain, lean, exp once and software-pipelined)
    publish their pair with a release atomic, poll with acquire loads,
    read the pairs past L1 (.cg) and move their segment with 16-byte accesses, without
    spilling; the pipelined loop's loads of the next row are issued before the poll loop
    and first waited for after it (the scoreboards in the SASS control bits);
  - debts_h100.py --plan names every kernel it measures without a GPU, and no variant that
    lost or became a default.
The compiles run in a subprocess: the CPU tier interprets Triton kernels (TRITON_INTERPRET=1),
and an interpreted kernel cannot be compiled.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "performance" / "debts" / "debts_h100.py"

COMPILE = r'''
import json, re, subprocess, tempfile, os
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


def control(sass):
    """[(address, text, write scoreboard, wait mask)] per instruction: the control bits of
    sm_70+ (bits 105-127 of the 128-bit word: stall 4, yield 1, write scoreboard 3, read
    scoreboard 3, wait mask 6), from the second 64-bit word cuobjdump prints under each."""
    lines, out = sass.splitlines(), []
    head = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]{16} \*/")
    for line, below in zip(lines, lines[1:]):
        m = head.search(line)
        if m:
            ctrl = int(re.search(r"/\* (0x[0-9a-f]{16}) \*/", below).group(1), 16) >> 41
            out.append((int(m.group(1), 16), m.group(2), (ctrl >> 5) & 7, (ctrl >> 11) & 0x3F))
    return out


def next_segment(sass):
    """Where the pipelined kernel's loop issues its next row's segment (the last half of the
    128-bit loads: the first half is the prologue's) and where an instruction first waits
    for their scoreboard."""
    ins = control(sass)
    at = lambda cond, start=0: [i for i in range(start, len(ins)) if cond(ins[i][1])]
    loads = at(lambda t: "LDG.E.128" in t)
    nxt = loads[len(loads) // 2:]
    release = at(lambda t: "RED" in t and ".ADD" in t)[0]
    poll = at(lambda t: "LDG.E.STRONG.GPU" in t, release)[0]
    poll_end = next(i for i in at(lambda t: "BRA" in t, poll)     # the first backward branch
                    if int(ins[i][1].split()[-1], 16) < ins[i][0])
    mask = sum(1 << b for b in {ins[i][2] for i in nxt})
    first_wait = next(i for i in range(nxt[0] + 1, len(ins)) if ins[i][3] & mask)
    last_store = at(lambda t: "STG.E.EF.128" in t)[-1]
    return dict(loads=len(nxt), after_release=nxt[0] > release, before_poll=nxt[-1] < poll,
                waited_after_poll=first_wait > poll_end, waited_after_stores=first_wait > last_store)


def compile_split(kernel, elem, dt, block, warps, **extra):
    sig = {"x_ptr": f"*{dt}", "y_ptr": f"*{dt}", "part_ptr": "*fp32", "count_ptr": "*i32",
           "rows": "i32", "n": "i32"}
    consts = dict(BLOCK=block, SEGMENTS=393216 // block,
                  SEGMENTS_P2=triton.next_power_of_2(393216 // block), VEC=16 // elem,
                  SPIN_LIMIT=ss.SPIN_LIMIT, **extra)
    sig.update({k: "constexpr" for k in consts})
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(6)}
    return triton.compile(ASTSource(kernel, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                          options=dict(num_warps=warps, num_stages=1))


cases = []
for elem, dt in ((4, "fp32"), (2, "bf16")):
    cases.append((dt, ss.softmax_row_split_kernel, elem, dt, *tiles.SOFTMAX_SPLIT[elem],
                  dict(PHASE=0)))
    cases.append((dt + " lean", ss.softmax_row_split_kernel, elem, dt, *tiles.SOFTMAX_SPLIT[elem],
                  dict(PHASE=0, LEAN=True)))
    cases.append((dt + " exp once", ss.softmax_row_split_kernel, elem, dt,
                  *tiles.SOFTMAX_SPLIT[elem], dict(PHASE=0, EXP_ONCE=True, FTZ=True)))
    for top in (False, True):
        cases.append((dt + (" pipelined top" if top else " pipelined"),
                      ss.softmax_row_split_pipelined_kernel, elem, dt,
                      *tiles.SOFTMAX_SPLIT_PIPELINED[elem], dict(PREFETCH_AT_TOP=top)))
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
        exps=sass.count("MUFU.EX2"),
        next_segment=next_segment(sass) if kernel is ss.softmax_row_split_pipelined_kernel
        else None)
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def compiled():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", COMPILE], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


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
    assert len(compiled["split"]) == 10
    for name, r in compiled["split"].items():
        assert r["release"] == 1 and r["acquire"] >= 1 and r["cg_loads"] == 2, (name, r)
        # 32 elements per thread: float32 8 vectors of 16 bytes, 16-bit 4 (8192 / 256 threads
        # pipelined, 16384 / 512 plain); the pipelined loop loads twice as often (prologue +
        # next row) as it stores
        vectors = 8 if name.startswith("fp32") else 4
        loads = 2 * vectors if "pipelined" in name else vectors
        assert r["ld128"] == loads and r["st128"] == vectors, (name, r)
        assert r["spills"] == 0 and r["registers"] <= 128, (name, r)


@pytest.mark.slow
def test_split_softmax_lean_takes_its_exps_without_the_subnormal_fixup(compiled):
    """lean=True: the exps of the segment's sum (and, for 16-bit outputs, of the output) by
    ex2.approx.ftz: the compare against -126 of tl.exp's fix-up is left only where tl.exp
    remains (the fold of the pairs; float32 outputs), and the kernel is shorter."""
    split = compiled["split"]
    for dt in ("fp32", "bf16"):
        plain, lean = split[dt], split[dt + " lean"]
        assert lean["instructions"] < plain["instructions"], (dt, plain, lean)
        assert lean["fixups"] < plain["fixups"] and lean["registers"] <= plain["registers"]
    assert split["bf16 lean"]["fixups"] <= 2, split["bf16 lean"]


@pytest.mark.slow
def test_split_softmax_exp_once_takes_one_exp_per_element(compiled):
    """exp_once=True: the output multiplies the sum's kept exps by the segment's scale, so
    the kernel executes one MUFU.EX2 per element (32 per thread) plus the fold's few, where
    the plain and lean kernels take two; it is the shortest of the three and spills nothing."""
    split = compiled["split"]
    for dt in ("fp32", "bf16"):
        plain, lean, once = split[dt], split[dt + " lean"], split[dt + " exp once"]
        assert 32 <= once["exps"] <= 40 and plain["exps"] >= 64, (dt, plain, once)
        assert once["instructions"] < lean["instructions"] < plain["instructions"], dt
        assert once["registers"] <= plain["registers"] and once["spills"] == 0, (dt, once)


@pytest.mark.slow
def test_split_softmax_pipelined_keeps_the_next_segment_in_flight(compiled):
    """The pipelined loop issues the next row's segment before the poll loop (after the
    release by default, before the pair with prefetch_at='top') and nothing waits for those
    loads until the poll loop is over; in 16-bit, until this row's output is stored. (In
    float32 ptxas moves the loaded registers into the loop-carried ones during the output's
    arithmetic: the wait comes after the poll and the fold, before the stores.) Registers:
    8 warps x 128 (float32) leave 2 programs per SM, x 80 (16-bit) 3."""
    for name, r in compiled["split"].items():
        if "pipelined" not in name:
            continue
        seg = r["next_segment"]
        assert seg["loads"] == (8 if name.startswith("fp32") else 4), (name, seg)
        assert seg["before_poll"] and seg["waited_after_poll"], (name, seg)
        assert seg["after_release"] == (not name.endswith("top")), (name, seg)
        if not name.startswith("fp32"):
            assert seg["waited_after_stores"] and r["registers"] <= 80, (name, r)


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
    assert not any("packed" in line or "one_chunk" in line or "64x64 tiles" in line
                   for line in lines)
    assert not any("row_sram" in line for line in lines if "393216" in line)
    for line in (line for line in lines if line.startswith("softmax")):
        names = set(line.split(": ", 1)[1].split(", "))
        assert {f"triton split {v}" for v in ("(default)", "pipelined", "pipelined top",
                                              "pipelined 4096x4w", "evict", "pipelined .cg",
                                              "lean")} <= names
    assert not (ROOT / "unused-out").exists()
