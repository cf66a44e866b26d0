"""Pointer offsets computed in 32-bit integers, found in the compiled code (no GPU needed).

Triton types a product by its operands: `tl.program_id`, `tl.arange`, a loop counter and
every integer argument below 2^31 are i32, so `pid * BLOCK * stride` or `h * w` is an i32
multiply that wraps silently once the true product passes 2^31, and a pointer built from
it points somewhere else (an illegal address on the GPU, or a wrong element). This module
finds every such multiply in every kernel the suite launches:

1. record: every registry kernel runs once on a small case through the interpreter
   (TRITON_INTERPRET=1); each launch is recorded as (kernel, argument types, constexprs,
   num_warps) — the exact specialisations the wrappers produce, autotune candidates too;
2. compile: each recorded launch is compiled for sm_90 (no GPU needed) with every integer
   argument typed i32, the worst case, except that an argument equal to 1 is a constant,
   as Triton specialises it on the GPU (so the kernel must compile both ways), and each
   64-bit switch of a kernel (WIDE_FLAGS, for sizes near 2^31) is compiled on and off;
3. scan the TTIR for three shapes of the same wrap, each reported with its source line:
   - offset: an `arith.muli` whose result is i32 (scalar or tensor) and which flows,
     through additions, splats, broadcasts and reshapes, into the offset of a `tt.addptr`;
   - counter: an i32 `scf.for` whose step is a constant above 1 and whose bound is not a
     constant: `for k0 in range(0, K, BLOCK_K)` steps past 2^31 (and loops forever) when
     K is within BLOCK_K of it;
   - size: an i32 kernel argument plus a constant, `M + BLOCK_M - 1` inside `tl.cdiv(M,
     BLOCK_M)`: negative when M is within BLOCK_M of 2^31 (_common.tile_count cannot wrap).

A finding is allowed only where the source line says why it cannot overflow, with a
comment `i32 ok: <the bound>` on that line (the kernels keep 32-bit arithmetic where a
bound proves it safe: it is cheaper in registers than int64).

    python -m tests.support.int32_offsets   # the table of findings (run without TRITON_INTERPRET)
"""
from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOW = "i32 ok:"
# Triton's own library functions, which cannot carry our comment, and why they are safe.
LIBRARY_OK = {
    "triton/language/standard.py": "tl.swizzle2d multiplies program indices: every product "
                                   "is below the number of programs, < 2^31",
}
# Kernels the interpreter cannot run (not recorded): read by hand, covered on the GPU by
# tests/gpu/test_large_offsets.py.
NOT_RECORDED = {
    "matmul_swap_gluon_kernel": "a Gluon kernel (no interpreter): TMA descriptors address A "
                                "and B (3-D: batch, rows, cols); its only pointer offsets are "
                                "the epilogue's (batch and row), int64",
    "softmax_row_split_smem_kernel": "a Gluon kernel (no interpreter): TMA reads x (3-D: row, "
                                     "line, element); y's offsets are row * n in int64 plus "
                                     "a position within the row (< n < 2^31); run past 2^31 "
                                     "elements in tests/gpu/test_large_offsets.py",
}
RULES = {"arith.muli": "offset", "scf.for": "counter", "arith.addi": "size"}
_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "grid", "warmup")


# --------------------------------------------------------------------------- 1. record

def _arg_type(value) -> str | None:
    """The Triton signature type of a runtime argument; None for what is not scanned."""
    import torch

    if isinstance(value, torch.Tensor):
        name = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
                torch.uint8: "u8", torch.int32: "i32", torch.int64: "i64",
                torch.bool: "i1"}[value.dtype]
        return "*" + name
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32"          # the worst case: Triton passes ints below 2^31 as i32
    if isinstance(value, float):
        return "fp32"
    return None


def record_launches() -> list[dict]:
    """Runs every registry kernel once through the interpreter; returns its launches."""
    assert os.environ.get("TRITON_INTERPRET") == "1", "record under TRITON_INTERPRET=1"
    from triton.runtime.interpreter import InterpretedFunction

    from bench import check, device, problems, registry

    launches: dict[str, dict] = {}
    original = InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        fn = self.fn
        params = inspect.signature(fn).parameters
        bound = dict(zip(params, args))
        bound.update({k: v for k, v in kwargs.items() if k in params})
        constexpr = {n for n, p in params.items()
                     if "constexpr" in str(p.annotation)}
        sig, consts, skip = {}, {}, None
        for name, p in params.items():
            value = bound.get(name, p.default)
            if name in constexpr:
                consts[name] = value
                sig[name] = "constexpr"
                continue
            if type(value) is int and value == 1:      # Triton specialises 1 as a constant
                consts[name] = 1
                sig[name] = "constexpr"
                continue
            t = _arg_type(value)
            if t is None:
                skip = f"argument {name} of type {type(value).__name__}"
                break
            sig[name] = t
        key = json.dumps([fn.__module__, fn.__name__, sig, consts], sort_keys=True, default=str)
        if key not in launches:
            launches[key] = dict(module=fn.__module__, kernel=fn.__name__, signature=sig,
                                 constexprs=consts, num_warps=kwargs.get("num_warps", 4),
                                 num_stages=kwargs.get("num_stages", 3), skip=skip)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    InterpretedFunction.run = run
    try:
        for kernel in registry.select("*", include_wrong=True):
            if kernel.backend != "triton" or not problems.known(kernel.op):
                continue
            problem = problems.get(kernel.op)
            if "_bug_" in kernel.name:      # the deliberately wrong kernels are wrong anyway
                continue
            # every CPU check shape: softmax's dim=0 shapes take the column kernels
            for shape in problem.parse_shapes(problem.check_shapes["cpu"]):
                for precision in kernel.precisions:
                    if device.can_run(kernel, "cpu", precision)[0]:
                        check.check_one(kernel, problem, shape, precision, device="cpu")
        import torch

        from triton_impl import matmul_grouped
        matmul_grouped._launch_order(5, 4, 3, device="cpu")      # the launch-order figure's
        # triton_batched at every precision (its autotuned pointer kernel at tf32/fp16/bf16,
        # the tf32 operand swap included; at fp16 also the stack through matmul_persistent's
        # kernel, batch step 1), and the split softmax's launches the registry's shapes miss
        from triton_impl import matmul_batched, softmax_split
        for precision, dtype in (("fp32", torch.float32), ("tf32", torch.float32),
                                 ("fp16", torch.float16)):
            matmul_batched.matmul(torch.ones(2, 33, 19, dtype=dtype),
                                  torch.ones(2, 19, 17, dtype=dtype), precision)
        matmul_batched.matmul(torch.ones(2, 33, 24, dtype=torch.float16),      # TMA, a stack
                              torch.ones(2, 24, 16, dtype=torch.float16), "fp16")
        from triton_impl import matmul_split_k        # the sum over splits (S > 1)
        matmul_split_k._matmul(torch.ones(33, 200), torch.ones(200, 17), "fp32", splits=3)
        from triton_impl import matmul_skinny         # not in the registry: both sides
        for a_shape, b_shape in (((3, 200), (200, 40)), ((40, 200), (200, 3))):
            for splits in (1, 3):
                matmul_skinny._matmul(torch.ones(a_shape), torch.ones(b_shape), "fp32",
                                      splits=splits)
        softmax_split.softmax_split(torch.ones(3, 100))               # one segment: the exchange
        softmax_split._softmax_split(torch.ones(3, 1000), block=256)  # four: two launches
        softmax_split.softmax_split(torch.ones(3, 1000, dtype=torch.float16))  # int32 pairs
        softmax_split.softmax_split(torch.ones(3, 1001, dtype=torch.float16))  # element-wise
    finally:
        InterpretedFunction.run = original
    return list(launches.values()) + _wide_variants(launches.values())


# Constexpr flags that switch a kernel to 64-bit counting for sizes near 2^31: the small
# CPU shapes never set them, so the scan also compiles each launch with the flag on.
WIDE_FLAGS = ("WIDE", "K_WIDE")


def _wide_variants(launches) -> list[dict]:
    out = []
    for launch in launches:
        for flag in WIDE_FLAGS:
            if launch["constexprs"].get(flag) is False:
                out.append(dict(launch, constexprs=dict(launch["constexprs"], **{flag: True})))
    return out


# --------------------------------------------------------------------------- 2. compile

def _jit_function(module: str, name: str):
    import importlib

    obj = getattr(importlib.import_module(module), name)
    while not hasattr(obj, "arg_names") or hasattr(obj, "configs"):  # Autotuner -> .fn
        obj = obj.fn
    return obj


def ttir(launch: dict) -> str:
    """The TTIR of one recorded launch, compiled for sm_90 (TRITON_INTERPRET unset)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = _jit_function(launch["module"], launch["kernel"])
    src = ASTSource(fn=fn, signature=launch["signature"], constexprs=launch["constexprs"])
    options = dict(num_warps=launch["num_warps"], num_stages=launch["num_stages"])
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
    return compiled.asm["ttir"]


# --------------------------------------------------------------------------- 3. scan

_DEF = re.compile(r"^\s*(%[\w#]+)(?::\d+)?\s*=\s*([\w.]+)\s*(.*)$")
_USES = re.compile(r"%[\w#]+")
_LOC_REF = re.compile(r"loc\((#loc\d*)\)\s*$")
_LOC_DEF = re.compile(r'^(#loc\d*)\s*=\s*loc\((.*)\)\s*$')
# Operations through which an integer offset keeps its value (and its wrap).
_PASS = {"arith.addi", "arith.subi", "arith.muli", "arith.extsi", "arith.extui",
         "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans",
         "arith.select", "arith.remsi", "arith.divsi"}


def _locations(text: str) -> dict[str, list[tuple[str, int]]]:
    """#locN -> its frames [(file, line)], innermost first: a callsite location (code
    inlined from a @triton.jit function such as tl.cdiv) gives the callee's line, then
    the caller's. Fused and named locations are followed to their file lines."""
    raw = {}
    for line in text.splitlines():
        m = _LOC_DEF.match(line.strip())
        if m:
            raw[m.group(1)] = m.group(2)

    def resolve(body: str, depth=0) -> list[tuple[str, int]]:
        if depth > 40:
            return []
        call = re.fullmatch(r"\s*callsite\((#loc\d*) at (#loc\d*)\)\s*", body)
        if call:
            return (resolve(raw.get(call.group(1), ""), depth + 1)
                    + resolve(raw.get(call.group(2), ""), depth + 1))
        m = re.search(r'"([^"]+\.py)":(\d+)', body)
        if m:
            return [(m.group(1), int(m.group(2)))]
        ref = re.search(r"(#loc\d*)", body)
        if ref and ref.group(1) in raw:
            return resolve(raw[ref.group(1)], depth + 1)
        return []

    return {k: r for k, v in raw.items() if (r := resolve(v))}


def _is_library(path: str) -> bool:
    return "site-packages" in path or "/triton/language/" in path


def _where(frames: list[tuple[str, int]], own_code: bool) -> tuple[str, int]:
    """The innermost frame, or with own_code the innermost one outside Triton's library
    (a wrap inside tl.cdiv is the caller's line)."""
    if own_code:
        frames = [f for f in frames if not _is_library(f[0])] or frames
    return frames[0] if frames else ("?", 0)


_FUNC_ARG = re.compile(r"(%[\w#]+): i32\b")
_FOR = re.compile(r"^(\s*)(?:%[\w#:]+\s*=\s*)?scf\.for %[\w#]+ = (%[\w#]+) to (%[\w#]+) "
                  r"step (%[\w#]+) .*: i32 \{\s*$")
_CONST = re.compile(r"%c(-?\d+)_i32\b")
_CONST_DEF = re.compile(r"^\s*(%[\w#]+) = arith\.constant (-?\d+) : i32\b")


def findings(text: str) -> list[dict]:
    """The three wraps of the module docstring: [{file, line, op}], op naming the rule's
    operation (arith.muli: offset, scf.for: counter, arith.addi: size)."""
    locs = _locations(text)
    lines = text.splitlines()
    found = []
    scalar_args, constants = set(), {}
    for line in lines:
        if "tt.func" in line:
            scalar_args.update(_FUNC_ARG.findall(line))
        c = _CONST_DEF.match(line)
        if c:
            constants[c.group(1)] = int(c.group(2))

    def constant(name: str):
        c = _CONST.fullmatch(name)
        return int(c.group(1)) if c else constants.get(name)
    for i, line in enumerate(lines):
        # counter: the loop's location is printed on its closing brace
        m = _FOR.match(line)
        if m:
            indent, _lb, ub, step = m.groups()
            if (constant(step) or 0) > 1 and constant(ub) is None:
                close = next((l for l in lines[i + 1:] if l.startswith(indent + "}")), "")
                ref = _LOC_REF.search(close)
                file, n = _where(locs.get(ref.group(1) if ref else "", []), own_code=True)
                found.append(dict(file=file, line=n, op="scf.for"))
            continue
        # size: an i32 kernel argument plus a positive constant
        d = _DEF.match(line)
        if d and d.group(2) == "arith.addi":
            body = d.group(3).split(" loc(")[0]
            operands = _USES.findall(body.split(":")[0])
            if (body.rsplit(":", 1)[-1].strip() == "i32"
                    and any(o in scalar_args for o in operands)
                    and any((constant(o) or 0) > 0 for o in operands)):
                ref = _LOC_REF.search(line)
                file, n = _where(locs.get(ref.group(1) if ref else "", []), own_code=True)
                found.append(dict(file=file, line=n, op="arith.addi"))
    return found + _offset_findings(text, locs)


def _offset_findings(text: str, locs) -> list[dict]:
    """offset: i32 multiplies that reach a pointer offset."""
    defs: dict[str, tuple[str, list[str], str, str]] = {}
    addptr_offsets: list[str] = []
    for line in text.splitlines():
        m = _DEF.match(line)
        if not m:
            continue
        name, op, rest = m.groups()
        body = rest.split(" loc(")[0]
        operands = _USES.findall(body.split(":")[0])
        type_text = body.rsplit(":", 1)[-1] if ":" in body else ""
        loc = _LOC_REF.search(line)
        defs[name] = (op, operands, type_text.strip(), loc.group(1) if loc else "")
        if op == "tt.addptr" and len(operands) >= 2:
            addptr_offsets.append(operands[1])
    found, seen, stack = [], set(), list(addptr_offsets)
    while stack:
        v = stack.pop()
        if v in seen or v not in defs:
            continue
        seen.add(v)
        op, operands, type_text, loc = defs[v]
        if op not in _PASS:
            continue
        result_type = type_text.split("->")[-1]
        if op == "arith.muli" and re.search(r"\bi32\b|xi32>", result_type):
            where = _where(locs.get(loc, []), own_code=False)
            found.append(dict(file=where[0], line=where[1], op=op))
        stack.extend(operands)
    return found


def jit_kernels() -> dict[str, str]:
    """Every `*_kernel` defined with @triton.jit or @gluon.jit in the product modules of
    triton_impl/ (the tuning probes are not product code): name -> module file."""
    found = {}
    for path in sorted((ROOT / "triton_impl").glob("*.py")):
        if path.name.startswith("tune_"):
            continue
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"def (\w+_kernel)\(", line)
            if m and i and re.search(r"@(triton|gluon)\.jit", "\n".join(lines[max(0, i - 3):i])):
                found[m.group(1)] = path.name
    return found


def source_line(path: str, line: int) -> str:
    try:
        return Path(path).read_text().splitlines()[line - 1]
    except (OSError, IndexError):
        return ""


def scan(launches: list[dict]) -> list[dict]:
    """Every recorded launch compiled and scanned: one row per (kernel, source line)."""
    rows = {}
    for launch in launches:
        if launch["skip"]:
            continue
        for f in findings(ttir(launch)):
            text = source_line(f["file"], f["line"])
            key = (launch["kernel"], f["file"], f["line"], f["op"])
            library = next((why for lib, why in LIBRARY_OK.items()
                            if f["op"] == "arith.muli" and f["file"].endswith(lib)), None)
            rows[key] = dict(kernel=launch["kernel"], file=os.path.relpath(f["file"], ROOT),
                             line=f["line"], rule=RULES[f["op"]], source=text.strip(),
                             allowed=bool(library) or ALLOW in text.partition("#")[2],
                             why=library or text.partition(ALLOW)[2].strip())
    return sorted(rows.values(), key=lambda r: (r["file"], r["line"]))


def recorded_launches_in_subprocess() -> list[dict]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    code = ("import json; from tests.support import int32_offsets as o; "
            "print(json.dumps(o.record_launches()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def scan_in_subprocess() -> tuple[list[dict], list[dict]]:
    """(launches, findings): recorded under the interpreter, compiled and scanned without it."""
    launches = recorded_launches_in_subprocess()
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    # A cache of its own: Triton keys compiled kernels by their source, not their path, so
    # a shared cache can hand back the TTIR of the same kernel compiled from another
    # checkout, whose locations then name that checkout's files and lines.
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="cvt-offsets-triton-cache-")
    code = ("import json, sys; from tests.support import int32_offsets as o; "
            "print(json.dumps(o.scan(json.load(sys.stdin))))")
    try:
        out = subprocess.run([sys.executable, "-c", code], input=json.dumps(launches),
                             capture_output=True, text=True, env=env, cwd=ROOT)
    finally:
        shutil.rmtree(env["TRITON_CACHE_DIR"], ignore_errors=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-4000:])
    return launches, json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    launches, rows = scan_in_subprocess()
    print(f"{len(launches)} launches recorded, "
          f"{sum(1 for l in launches if l['skip'])} not compiled "
          f"({'; '.join(sorted({l['kernel'] + ': ' + l['skip'] for l in launches if l['skip']}))})")
    for r in rows:
        print(f"{'ok ' if r['allowed'] else 'BAD'} {r['rule']:7s} {r['file']}:{r['line']} {r['kernel']}: "
              f"{r['source']}")
