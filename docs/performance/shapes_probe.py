"""The candidates for each kind of suite shape, side by side: how cuda_auto's and
triton_auto's rules (bindings/auto.py, triton_impl/matmul_auto.py) were chosen.

    python docs/performance/shapes_probe.py [--precisions bf16,tf32,fp32] [--kinds skinny,...]
                                            [--names m3,n1,...]
    python docs/performance/shapes_probe.py --sweep [--precisions ...]
    python docs/performance/shapes_probe.py --sweep-skinny [--precisions fp32]

For every shape of the shape suite (bench/families/matmul/suite.py) of the chosen categories
and every precision, each candidate path that takes the shape is checked once against
float64 (bench's own check) and timed with triton.testing.do_bench (L2 flushed by do_bench
between runs, median), beside cuBLAS in the same loop. Printed: ms per candidate and its
time against cuBLAS's (x cuBLAS: above 1 is faster), and which candidate each auto entry
picks. Shapes' categories: skinny, few-tiles, unaligned, transformer, kernelbench, square.
--sweep times triton_split_k's tile candidates (SWEEP below: tile, warps, stages and the
programs per SM its splits aim at; forced through matmul_split_k._matmul's tile) at a few
skinny and few-tile shapes instead, best first;
tiles.SPLIT_K holds the winners. --sweep-skinny does the same for triton_skinny's tiles
(SWEEP_FMA: BLOCK_K, BLOCK_N, V, warps and programs per SM, per side and small size R) at
the skinny shapes; tiles.SKINNY_FMA holds its winners. An experiment beside the product, not part of it: the harness's `bench time --suite shapes`
is what the result sets and the report use.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

CANDIDATES = {   # precision -> registry kernels that may run a suite shape
    "fp32": ["cuda_skinny", "cuda_v8_split_k", "cuda_split_k_fp32", "triton_skinny",
             "triton_split_k", "triton_autotuned"],
    "tf32": ["cuda_skinny", "cuda_v8_split_k", "cuda_t4_tf32", "cuda_split_k_tf32",
             "triton_skinny", "triton_split_k", "triton_persistent", "triton_autotuned"],
    "fp16": ["cuda_skinny", "cuda_t5_stream_k", "cuda_split_k", "triton_split_k",
             "triton_persistent"],
    "bf16": ["cuda_skinny", "cuda_t5_stream_k", "cuda_split_k", "triton_split_k",
             "triton_persistent"],
}


def _cfg(bm, bn, bk, warps, stages, pps):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages,
                programs_per_sm=pps)


SWEEP = {   # (case, operand bytes) -> candidates
    ("skinny", 2): [_cfg(16, 64, 128, 4, 4, 2), _cfg(16, 128, 64, 4, 4, 2),
                    _cfg(16, 128, 128, 4, 3, 2), _cfg(16, 64, 256, 4, 3, 2),
                    _cfg(16, 256, 64, 8, 3, 1), _cfg(16, 32, 256, 4, 4, 4),
                    _cfg(16, 64, 64, 4, 6, 4), _cfg(16, 128, 128, 8, 4, 1)],
    ("skinny", 4): [_cfg(16, 64, 64, 4, 4, 2), _cfg(16, 32, 128, 4, 4, 4),
                    _cfg(16, 128, 32, 4, 4, 2), _cfg(16, 64, 32, 4, 6, 4),
                    _cfg(16, 128, 64, 8, 3, 1), _cfg(16, 32, 64, 2, 4, 8)],
    ("few_tiles", 2): [_cfg(128, 128, 64, 8, 3, 1), _cfg(64, 64, 64, 4, 4, 2),
                       _cfg(128, 64, 64, 4, 4, 2), _cfg(64, 128, 64, 4, 4, 2),
                       _cfg(64, 64, 128, 4, 3, 2)],
    ("few_tiles", 4): [_cfg(64, 64, 32, 4, 4, 2), _cfg(32, 64, 32, 4, 4, 4),
                       _cfg(64, 128, 32, 4, 3, 2), _cfg(64, 64, 64, 4, 3, 2)],
}
def _fma(bk, bn, v, warps=4, pps=4):
    return dict(BLOCK_K=bk, BLOCK_N=bn, V=v, num_warps=warps, num_stages=1,
                programs_per_sm=pps)


SWEEP_FMA = {   # (side, R rounded up) -> triton_skinny's candidates; the first is tiles'
    ("rows", 1): [_fma(64, 64, 4), _fma(128, 32, 4), _fma(128, 64, 4), _fma(256, 32, 4),
                  _fma(64, 64, 4, 4, 8), _fma(128, 64, 4, 8, 2), _fma(64, 128, 4, 8)],
    ("rows", 4): [_fma(64, 32, 4), _fma(128, 32, 4), _fma(128, 16, 4), _fma(64, 64, 4),
                  _fma(32, 64, 4), _fma(64, 32, 4, 4, 8), _fma(64, 16, 4)],
    ("rows", 16): [_fma(32, 32, 4), _fma(32, 16, 4), _fma(64, 16, 4), _fma(16, 32, 4),
                   _fma(32, 32, 4, 4, 8), _fma(64, 32, 4), _fma(32, 32, 1)],
    ("cols", 1): [_fma(32, 128, 1), _fma(16, 256, 1), _fma(64, 128, 1), _fma(32, 256, 1, 8),
                  _fma(16, 128, 1, 4, 8)],
    ("cols", 4): [_fma(16, 128, 1), _fma(8, 128, 1), _fma(32, 64, 1), _fma(16, 64, 1),
                  _fma(8, 256, 1, 8)],
    ("cols", 16): [_fma(8, 64, 1), _fma(4, 128, 1), _fma(8, 128, 1, 8), _fma(16, 32, 1),
                   _fma(4, 64, 1, 4, 8)],
}
SWEEP_FMA_SHAPES = ("n1", "n3", "n16", "kb4-matvec", "m3", "m16", "attn-1", "vocab-1")


def sweep_skinny(precisions) -> int:
    import triton

    from triton_impl import matmul_skinny as ms

    def candidates(s, size):
        side, r = ("rows", s.N) if s.N < s.M else ("cols", s.M)
        return SWEEP_FMA[(side, triton.next_power_of_2(r))]

    return _sweep(precisions, SWEEP_FMA_SHAPES, candidates,
                  lambda a, b, precision, cfg: ms._matmul(a, b, precision, tile=cfg), keep=None)


SWEEP_SHAPES = ("m3", "m16", "n1", "n16", "vocab-1", "attn-16", "few-128", "few-256",
                "few-512", "few-1000")


def sweep(precisions) -> int:
    from triton_impl import matmul_split_k as sk

    def candidates(s, size):
        return SWEEP[("skinny" if sk.is_skinny(s.M, s.N) else "few_tiles", size)]

    return _sweep(precisions, SWEEP_SHAPES, candidates,
                  lambda a, b, precision, cfg: sk._matmul(a, b, precision, tile=cfg), keep=4)


def _sweep(precisions, shape_names, candidates, run, keep) -> int:
    """Every candidate tile of `candidates(shape, operand bytes)` at each named suite shape,
    run by `run(a, b, precision, tile)`, checked once against float64 and timed with do_bench
    beside torch.matmul; printed best first (the first `keep`, or all)."""
    import torch
    import triton

    from bench import problems
    from bench.families.matmul import suite
    from bench.families.matmul.models import MatmulShape

    problem = problems.get("matmul")
    named = {n: MatmulShape.parse(t) for n, _c, t in suite.SUITE}
    for precision in precisions:
        size = 4 if precision in ("fp32", "tf32") else 2
        for name in shape_names:
            s = named[name]
            a, b = problem.inputs(s, precision, seed=1, device="cuda")
            t_ref = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=10, rep=50)
            out = []
            for cfg in candidates(s, size):
                fn = lambda: run(a, b, precision, cfg)     # noqa: E731
                try:
                    err = problem.error(fn(), (a, b), precision=precision)
                    t = triton.testing.do_bench(fn, warmup=10, rep=50)
                except Exception as exc:
                    out.append((float("inf"), f"ERR {type(exc).__name__} {cfg}"))
                    continue
                bad = "" if err <= problem.tolerance(s, precision) else " WRONG"
                gbps = (s.M * s.K + s.K * s.N + s.M * s.N) * size / t / 1e6
                out.append((t, f"{t:.4f} ms {gbps:6.0f} GB/s {t_ref / t:5.2f}x {cfg}{bad}"))
            out.sort(key=lambda x: x[0])
            print(f"{precision} {name} {s.M}x{s.N}x{s.K} (torch.matmul {t_ref:.4f} ms)")
            for _t, line in out[:keep]:
                print("   ", line, flush=True)
            a = b = None
            torch.cuda.empty_cache()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--precisions", default="bf16,tf32,fp32")
    ap.add_argument("--kinds", default="skinny,few-tiles,unaligned,transformer,kernelbench")
    ap.add_argument("--names", default="", help="only these suite shapes (names, comma-separated)")
    ap.add_argument("--sweep", action="store_true", help="triton_split_k's tile candidates")
    ap.add_argument("--sweep-skinny", action="store_true", help="triton_skinny's candidates")
    args = ap.parse_args()
    if args.sweep:
        return sweep(args.precisions.split(","))
    if args.sweep_skinny:
        return sweep_skinny(args.precisions.split(","))

    import torch
    import triton

    from bench import problems, registry
    from bench.catalog.matmul_shape_paths import skinny_record, triton_skinny_record
    from bench.families.matmul import suite
    from bench.families.matmul.models import MatmulShape

    problem = problems.get("matmul")
    records = {**registry.by_name(), "cuda_skinny": skinny_record(),
               "triton_skinny": triton_skinny_record()}
    kinds = args.kinds.split(",")
    names_only = set(filter(None, args.names.split(",")))
    shapes = [(n, MatmulShape.parse(t)) for n, c, t in suite.SUITE
              if (n in names_only if names_only else c in kinds)]
    for precision in args.precisions.split(","):
        names = CANDIDATES[precision] + ["cuda_auto", "triton_auto"]
        print(f"\n== {precision}: ms (x cuBLAS)")
        print("shape".ljust(26) + "cublas".rjust(9) + "".join(n[:18].rjust(20) for n in names))
        for name, s in shapes:
            a, b = problem.inputs(s, precision, seed=1, device="cuda")
            ref = registry.get("cublas").runner(precision)
            t_ref = triton.testing.do_bench(lambda: ref(a, b), warmup=10, rep=50)
            cells = []
            for kname in names:
                k = records[kname]
                if precision not in k.precisions or k.refusal(s):
                    cells.append("-".rjust(20))
                    continue
                fn = k.runner(precision)
                try:
                    err = problem.error(fn(a, b), (a, b), precision=precision, kernel=k)
                    t = triton.testing.do_bench(lambda: fn(a, b), warmup=10, rep=50)
                except Exception as exc:      # a candidate that fails is shown, not fatal
                    cells.append(f"ERR {type(exc).__name__}"[:19].rjust(20))
                    continue
                bad = "" if err <= problem.tolerance(s, precision) else " WRONG"
                pick = f" {k.choice(s, precision).split('_')[1]}" if k.chooses else ""
                cells.append(f"{t:.4f} ({t_ref / t:.2f}){pick}{bad}".rjust(20))
            print(f"{name[:12]} {s.M}x{s.N}x{s.K}"[:25].ljust(26) + f"{t_ref:9.4f}"
                  + "".join(cells), flush=True)
            a = b = None
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
