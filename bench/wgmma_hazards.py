"""A static check of compiled Hopper kernels: does any instruction write a register that an
in-flight wgmma still reads?

wgmma (SASS: HGMMA) is asynchronous. With its left operand in registers (the tf32 swap of
matmul_persistent, matmul_autotuned and matmul_swap_gluon), it reads those registers while
it runs; WARPGROUP.DEPBAR.LE gsb0, N retires commit groups, oldest first, until at most N
are pending. A write to an operand register of a group that is still pending is a race:
the tensor core may multiply the new value. This module walks the loop that holds the
HGMMAs twice (so that the back-edge is seen: the race of Triton 3.6's swap sits there) and
reports every such write.

    hazards(sass)              -> list of (pass, instruction)
    compile_for_sm90(...)      -> (sass, ptxas warnings) of a Triton or Gluon kernel,
                                  compiled for sm_90 on any machine (no GPU needed)
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections import deque

_ADDR = re.compile(r"/\*([0-9a-f]{4,})\*/")
A_REGISTERS = 4     # tf32 m64nNk8: a 64 x 8 fragment over 128 threads


def _instructions(sass: str) -> list[tuple[int, str]]:
    """(address, instruction text without predicate) of every SASS line."""
    out = []
    for line in sass.splitlines():
        m = _ADDR.search(line)
        if not m:
            continue
        text = line[m.end():].split(";")[0].strip()
        out.append((int(m.group(1), 16), text))
    return out


def _loop(ins: list[tuple[int, str]]) -> list[str]:
    """The instructions of the innermost loop around the HGMMAs: from the target of the
    first backward branch after the last HGMMA to that branch."""
    idx = [i for i, (_, t) in enumerate(ins) if "HGMMA" in t]
    if not idx:
        return []
    for j in range(idx[-1], len(ins)):
        m = re.search(r"\bBRA (0x[0-9a-f]+)", ins[j][1])
        if m and int(m.group(1), 16) <= ins[idx[0]][0]:
            start = next(i for i, (a, _) in enumerate(ins) if a == int(m.group(1), 16))
            return [t for _, t in ins[start:j + 1]]
    return []


def _register(token: str) -> int | None:
    m = re.fullmatch(r"R(\d+)", token.strip())
    return int(m.group(1)) if m else None


def hazards(sass: str) -> list[tuple[int, str]]:
    """Writes to A-operand registers of pending HGMMA commit groups, in two passes of the
    HGMMA loop (pass 1 sees what the back-edge carries)."""
    loop = _loop(_instructions(sass))
    pending: deque[set[int]] = deque()
    group: set[int] = set()
    found = []
    for pass_ in range(2):
        for text in loop:
            text = re.sub(r"^@!?U?P\w+\s+", "", text)
            op = text.split()[0] if text else ""
            operands = [o.strip() for o in text[len(op):].split(",")]
            if op.startswith("HGMMA"):
                a = _register(operands[1])
                if a is not None:
                    group |= set(range(a, a + A_REGISTERS))
                if "gsb0" in text:
                    pending.append(group)
                    group = set()
                continue
            m = re.match(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x[0-9a-f]+|\d+)", text)
            if m:
                while len(pending) > int(m.group(1), 0):
                    pending.popleft()
                continue
            if op.startswith(("ST", "SYNCS", "BAR", "UTMA", "BRA", "WARPGROUP", "ISETP",
                              "FSETP", "UISETP")) or not operands[0]:
                continue
            dest = _register(operands[0].split()[-1])
            live = set().union(group, *pending)
            if dest is not None and dest in live:
                found.append((pass_, text))
    return found


def hgmma_count(sass: str) -> int:
    return sum("HGMMA" in t for _, t in _instructions(sass))


def _tool(name: str) -> str:
    """The ptxas or cuobjdump Triton compiles with: its own copy, or the one named by
    TRITON_PTXAS_PATH / TRITON_CUOBJDUMP_PATH (a newer toolkit's ptxas makes newer PTX,
    which an older ptxas refuses)."""
    from triton import knobs
    return getattr(knobs.nvidia, name).path


def compile_for_sm90(fn, signature: dict, constexprs: dict, num_warps: int,
                     num_stages: int = 3, gluon: bool = False) -> tuple[str, list[str]]:
    """Compile a @triton.jit (or @gluon.jit) kernel for sm_90 without a GPU; return its SASS
    and ptxas's warnings (C7515: wgmma serialised). Pointer and integer arguments are
    marked 16-divisible, as Triton specialises them at aligned launches."""
    import triton
    from triton.backends.compiler import GPUTarget

    names = list(signature)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n, t in signature.items()
             if t.startswith("*") or t == "i32"}
    if gluon:
        from triton.experimental.gluon._runtime import GluonASTSource
        src = GluonASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
        options = dict(num_warps=num_warps)
    else:
        from triton.compiler import ASTSource
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
        options = dict(num_warps=num_warps, num_stages=num_stages)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
    with tempfile.TemporaryDirectory() as d:
        ptx = os.path.join(d, "k.ptx")
        cubin = os.path.join(d, "k.cubin")
        with open(ptx, "w") as f:
            f.write(compiled.asm["ptx"])
        r = subprocess.run([_tool("ptxas"), "-arch=sm_90a", "-v", ptx,
                            "-o", cubin], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas exit {r.returncode} on {fn.__name__}:\n"
                               f"{(r.stdout + r.stderr)[-2000:]}")
        warnings = [line for line in (r.stdout + r.stderr).splitlines() if "C75" in line]
        with open(cubin, "wb") as f:       # the cubin Triton made (same ptxas, same PTX)
            f.write(compiled.asm["cubin"])
        sass = subprocess.run([_tool("cuobjdump"), "-sass", cubin],
                              capture_output=True, text=True, check=True).stdout
    return sass, warnings


# --------------------------------------------------------------------------- the kernels

def _pointer_signature(fn, constexprs: dict) -> dict:
    import inspect
    params = list(inspect.signature(fn.fn).parameters)
    return {p: ("constexpr" if p in constexprs else "*fp32" if p.endswith("_ptr") else "i32")
            for p in params}


# matmul_swap_gluon_kernel as its launches specialise it: Triton makes an integer argument
# equal to 1 a constant, so the batch steps give different compiled kernels. 2-D
# (triton_persistent; a stack of one: both steps 0), a stack (triton_batched: both 1), a
# stack times one broadcast matrix (A's step 0).
GLUON_VARIANTS = {"matmul_swap_gluon": {},
                  "matmul_swap_gluon batched": {"step_a": 1, "step_b": 1},
                  "matmul_swap_gluon batched, A broadcast": {"step_b": 1}}


def register_operand_kernels() -> dict[str, tuple[str, list[str]]]:
    """Every shipped kernel whose wgmma takes its left operand from registers, compiled for
    sm_90: name -> (SASS, ptxas warnings). Needs TRITON_INTERPRET unset (run as a module:
    python -m bench.wgmma_hazards)."""
    from triton.experimental.gluon import language as gl

    from triton_impl import matmul_autotuned as ma
    from triton_impl import matmul_persistent as mp
    from triton_impl import matmul_swap_gluon as mg
    from triton_impl import tiles, tiles_hopper

    out = {}
    cfg = mg.CONFIG
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    layout = lambda r, c: gl.NVMMASharedLayout.get_default_for([1, r, c], gl.float32)  # noqa: E731
    for name, steps in GLUON_VARIANTS.items():
        sig = {"a_desc": f"tensordesc<fp32[1, {bm}, {bk}],{layout(bm, bk)!r}>",
               "b_desc": f"tensordesc<fp32[1, {bk}, {bn}],{layout(bk, bn)!r}>",
               "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32",
               "step_a": "i32", "step_b": "i32", "stride_cb": "i32"}
        consts = {k: cfg[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES", "GROUP_M",
                                      "IN_FLIGHT")}
        consts.update(steps)
        sig.update({k: "constexpr" for k in consts})
        out[name] = compile_for_sm90(mg.matmul_swap_gluon_kernel, sig, consts, mg.NUM_WARPS,
                                     gluon=True)
    launch = ("num_warps", "num_stages")
    for c in tiles_hopper.PERSISTENT_CONFIGS["tf32-swap"]:
        consts = {k: v for k, v in c.items() if k not in launch}
        consts.update(NUM_PROGRAMS=132, BATCHED=False, B_K_MAJOR=False, SWAP_AB=True,
                      INPUT_PRECISION="tf32", NATIVE_TF32_ROUND=True)
        name = "matmul_persistent swap {BLOCK_M}x{BLOCK_N}x{BLOCK_K} w{num_warps} s{num_stages}"
        out[name.format(**c)] = compile_for_sm90(
            mp.matmul_persistent_kernel, _pointer_signature(mp.matmul_persistent_kernel, consts),
            consts, c["num_warps"], c["num_stages"])
    for c in tiles.AUTOTUNE_CONFIGS["tf32"]:
        if not c["B_FROM_REGISTERS"]:
            continue
        consts = {k: v for k, v in c.items() if k not in launch}
        consts.update(INPUT_PRECISION="tf32", NATIVE_TF32_ROUND=True, K_WIDE=False)
        name = "matmul_autotuned swap {BLOCK_M}x{BLOCK_N}x{BLOCK_K} w{num_warps} s{num_stages}"
        out[name.format(**c)] = compile_for_sm90(
            ma.matmul_autotuned_kernel, _pointer_signature(ma.matmul_autotuned_kernel, consts),
            consts, c["num_warps"], c["num_stages"])
    return out


if __name__ == "__main__":
    import json
    import sys

    if os.environ.get("TRITON_INTERPRET") == "1":
        sys.exit("run without TRITON_INTERPRET=1: the kernels are compiled, not interpreted")
    report = {name: {"hgmma": hgmma_count(sass), "hazards": [t for _, t in hazards(sass)],
                     "warnings": warnings}
              for name, (sass, warnings) in register_operand_kernels().items()}
    json.dump(report, sys.stdout, indent=1)
