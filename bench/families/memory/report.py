"""Report sections of the memory-bound ops, from result files.

    bandwidth  per op, every kernel x shape: achieved GB/s (compulsory bytes / median time),
               % of the copy bandwidth measured in the same run, and the speed-up over
               PyTorch eager at the same shape and precision
    targets    the targets, each with MET / MISSED and the numbers behind it:
               - add, copy, ReLU + dropout at the >= 256 MB shapes: >= 90% of the copy
                 bandwidth, in both languages;
               - softmax at 4096 x 32768 float32: >= 80% of it and faster than torch.softmax;
               - at the shapes the source documents benchmark (the "seed shape" rows:
                 the lecture notes, "A Practitioner's Guide to Triton" and the
                 notebook "Meet Triton"): every kernel at least as fast as the PyTorch eager
                 version it replaces.
    counters   per profiled kernel: DRAM bytes (ncu) next to the compulsory and model bytes:
               where a kernel misses, this says whether it moved more bytes than it must
               (extra passes reaching DRAM) or moved the right bytes too slowly.
"""
from __future__ import annotations

import math

from bench import text as fmt
from bench.families.memory.problems import is_memory_op, problem
from bench.results import num


def _memory_rows(rows):
    return [r for r in rows if is_memory_op(r.get("op", ""))]


def _ok(rows):
    return [r for r in rows if r.get("status") == "ok" and r.get("median_ms")]


def _eager_ms(rows, column: str = "median_ms") -> dict:
    """(op, shape, precision) -> a column (the median ms unless told) of PyTorch eager's
    row, the op's reference."""
    return {(r["op"], r["shape"], r["precision"]): num(r.get(column)) for r in rows
            if r.get("backend") == "torch" and r.get("version") == "eager"}


def within_noise(ms: float, iqr_ms: float, ref_ms: float, ref_iqr_ms: float) -> bool:
    """A kernel slower than its reference by less than the larger of the two interquartile
    ranges: the two medians are not told apart by this run (a 5 us launch jitters by ~0.6 us)."""
    if any(math.isnan(v) for v in (ms, iqr_ms, ref_ms, ref_iqr_ms)):
        return False
    return ms - ref_ms < max(iqr_ms, ref_iqr_ms)


def gbps(x) -> str:
    """GB/s for a table: whole numbers from 100 up, three significant digits below."""
    x = num(x)
    return "-" if math.isnan(x) else f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def _shapes_in_order(rows) -> list[str]:
    return sorted(dict.fromkeys(r["shape"] for r in rows),
                  key=lambda s: min(num(r["compulsory_bytes"]) for r in rows if r["shape"] == s))


def section_time(time_payload: dict) -> str:
    rows = _ok(_memory_rows(time_payload["rows"]))
    if not rows:
        return ""
    copy = ((time_payload.get("meta") or {}).get("ceilings") or {}).get("copy_gbps")
    eager = _eager_ms(rows)
    parts = ["## Memory-bound ops: bandwidth",
             "Each cell: achieved GB/s = compulsory bytes (inputs read once, output written "
             "once) / median launch time with L2 flushed; in brackets % of the copy bandwidth "
             f"measured in this run ({fmt.f(copy, 0)} GB/s) and the speed-up over PyTorch "
             "eager at the same shape and precision (> 1: faster). The model column of "
             "time.csv (gbps_model) counts every extra pass as well."]
    for op in dict.fromkeys(r["op"] for r in rows):
        at = [r for r in rows if r["op"] == op]
        shapes = _shapes_in_order(at)
        cells = {(r["kernel"], r["precision"], r["shape"]): r for r in at}
        table = []
        for kernel, precision in dict.fromkeys((r["kernel"], r["precision"]) for r in at):
            line = [kernel, precision]
            for s in shapes:
                r = cells.get((kernel, precision, s))
                if r is None:
                    line.append("")
                    continue
                ref = eager.get((op, s, precision))
                speed = f", {ref / num(r['median_ms']):.2f}x" if ref and r.get("version") != "eager" else ""
                line.append(f"{gbps(r['gbps_compulsory'])} ({fmt.f(r.get('pct_roof'), 0)}%{speed})")
            table.append(line)
        parts.append(f"### {op}\n\n" + fmt.md_table(["kernel", "precision"] + shapes, table))
    return "\n\n".join(parts)


def _input_bytes(op: str, shape: str, precision: str) -> float:
    p = problem(op)
    return p.input_bytes(p.parse_shape(shape), precision)


def evaluate_targets(time_payload: dict) -> list[dict]:
    """One dict per (target, kernel, shape, precision): what was needed, what was measured."""
    rows = _ok(_memory_rows(time_payload["rows"]))
    eager = _eager_ms(rows)
    eager_iqr = _eager_ms(rows, "iqr_ms")
    out = []
    mine = [r for r in rows if r.get("backend") in ("cuda", "triton")]
    for r in mine:
        p = problem(r["op"])
        shape, prec = r["shape"], r["precision"]
        pct = num(r.get("pct_roof"))
        ref = eager.get((r["op"], shape, prec))
        speed = ref / num(r["median_ms"]) if ref else math.nan
        targets = [s for s in p.target_shapes.split(",") if s]
        big = (shape in targets and prec == "fp32" if r["op"] == "softmax"
               else _input_bytes(r["op"], shape, prec) >= 256 * 2**20)   # "tensors >= 256 MB"
        if big and targets:
            need = 100 * p.bandwidth_target
            ok = pct >= need
            what = f">= {need:.0f}% of copy"
            if r["op"] == "softmax":
                ok = ok and speed > 1.0
                what += " and faster than torch.softmax"
            out.append(dict(target="bandwidth", op=r["op"], kernel=r["kernel"], shape=shape,
                            precision=prec, need=what, pct_copy=pct, vs_eager=speed, met=ok))
        if shape in [s for s in p.seed_shapes.split(",") if s]:
            key = (r["op"], shape, prec)
            noise = speed < 1.0 and within_noise(num(r["median_ms"]), num(r.get("iqr_ms")),
                                                  eager.get(key, math.nan),
                                                  eager_iqr.get(key, math.nan))
            out.append(dict(target="seed shape", op=r["op"], kernel=r["kernel"], shape=shape,
                            precision=prec, need=">= PyTorch eager (speed-up >= 1)",
                            pct_copy=pct, vs_eager=speed, met=speed >= 1.0, noise=noise))
    return out


def section_targets(time_payload: dict) -> str:
    results = evaluate_targets(time_payload)
    if not results:
        return ""
    table = [[t["target"], t["op"], t["kernel"], t["shape"], t["precision"], t["need"],
              fmt.f(t["pct_copy"], 1, True), "-" if math.isnan(t["vs_eager"]) else f"{t['vs_eager']:.2f}x",
              "MET" if t["met"] else "**MISSED** (within the IQR)" if t.get("noise")
              else "**MISSED**"] for t in results]
    met = sum(t["met"] for t in results)
    misses = [t for t in results if not t["met"]]
    noisy = sum(bool(t.get("noise")) for t in misses)
    text = (f"## Memory-bound ops: targets\n\n{met} of {len(results)} met. Bandwidth targets at "
            "the >= 256 MB shapes (softmax: 4096 x 32768 float32); \"seed shape\" targets at "
            "the shapes the source documents benchmark (the lecture notes \"GPU Matmul and "
            "Operator Compilation\", \"A Practitioner's Guide to Triton\", the notebook "
            "\"Meet Triton\"), against PyTorch eager timed in the same run."
            "\n\n" + fmt.md_table(["target", "op", "kernel", "shape", "precision", "needed",
                                    "% of copy", "vs eager", "status"], table))
    if misses:
        text += (f"\n\n{noisy} of the {len(misses)} misses are slower than PyTorch eager by "
                 "less than the larger interquartile range of the two timings: this run "
                 "cannot tell those medians apart. Every miss is explained with the counters "
                 "in docs/performance/memory_bound.md (\"Small shapes\").")
    return text


def section_profile(profile_payload: dict) -> str:
    rows = [r for r in _memory_rows(profile_payload["rows"]) if r.get("status") == "ok"]
    if not rows:
        return ""
    table = []
    for r in rows:
        dram = num(r.get("dram_read_bytes")) + num(r.get("dram_write_bytes"))
        comp = num(r.get("compulsory_bytes"))
        model = num(r.get("model_global_load_bytes"))
        table.append([r["kernel"], r["shape"], r["precision"], fmt.human_bytes(comp),
                      fmt.human_bytes(model), fmt.human_bytes(r.get("dram_read_bytes")),
                      fmt.human_bytes(r.get("dram_write_bytes")),
                      fmt.f(dram / comp if comp else None, 3),
                      fmt.human_bytes(r.get("l2_bytes")), fmt.human_bytes(r.get("issued_bytes")),
                      fmt.f(r.get("ncu_time_ms"), 4), r.get("ncu_kernels", "")[:60]])
    return ("## Memory-bound ops: DRAM traffic versus the model\n\nOne launch per row (ncu, "
            "caches flushed before it). compulsory = inputs once + output once; model loads = "
            "what the threads ask for (extra passes included); DRAM = what HBM delivered and "
            "absorbed. DRAM / compulsory near 1.00 means no extra pass reached DRAM (a second "
            "read served by L2 costs no DRAM bandwidth); above it, the excess is traffic the "
            "kernel could avoid. issued = bytes of the load instructions executed.\n\n"
            + fmt.md_table(["kernel", "shape", "prec", "compulsory", "model loads", "DRAM read",
                            "DRAM write", "DRAM / compulsory", "L2 read", "issued", "ncu ms",
                            "CUDA kernels"], table))


def readme_table() -> str:
    """The README's table of the memory-bound kernels (every record, references and the
    deliberately wrong copies included)."""
    from bench import registry

    head = ["op", "kernel", "backend", "version", "precisions", "what it is", "traffic"]
    rows = [[k.op, f"`{k.name}`", k.backend, k.version, ", ".join(k.precisions), k.summary,
             k.formula or "-"] for k in registry.kernels() if is_memory_op(k.op)]
    return fmt.md_table(head, rows)
