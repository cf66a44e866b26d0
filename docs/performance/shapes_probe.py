"""The candidates for each kind of suite shape, side by side: how cuda_auto's and
triton_auto's rules (bindings/auto.py, triton_impl/matmul_auto.py) were chosen.

    python docs/performance/shapes_probe.py [--precisions bf16,tf32,fp32] [--kinds skinny,...]

For every shape of the shape suite (bench/families/matmul/suite.py) of the chosen categories
and every precision, each candidate path that takes the shape is checked once against
float64 (bench's own check) and timed with triton.testing.do_bench (L2 flushed by do_bench
between runs, median), beside cuBLAS in the same loop. Printed: ms per candidate and its
time against cuBLAS's (x cuBLAS: above 1 is faster), and which candidate each auto entry
picks. Shapes' categories: skinny, few-tiles, unaligned, transformer, kernelbench, square.
An experiment beside the product, not part of it: the harness's `bench time --suite shapes`
is what the result sets and the report use.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

CANDIDATES = {   # precision -> registry kernels that may run a suite shape
    "fp32": ["cuda_skinny", "cuda_v8_split_k", "triton_split_k", "triton_autotuned"],
    "tf32": ["cuda_skinny", "cuda_v8_split_k", "cuda_t4_tf32", "triton_split_k",
             "triton_persistent", "triton_autotuned"],
    "fp16": ["cuda_skinny", "cuda_t5_stream_k", "triton_split_k", "triton_persistent"],
    "bf16": ["cuda_skinny", "cuda_t5_stream_k", "triton_split_k", "triton_persistent"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--precisions", default="bf16,tf32,fp32")
    ap.add_argument("--kinds", default="skinny,few-tiles,unaligned,transformer,kernelbench")
    args = ap.parse_args()

    import torch
    import triton

    from bench import problems, registry
    from bench.families.matmul import suite
    from bench.families.matmul.models import MatmulShape

    problem = problems.get("matmul")
    kinds = args.kinds.split(",")
    shapes = [(n, MatmulShape.parse(t)) for n, c, t in suite.SUITE if c in kinds]
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
                k = registry.get(kname)
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
            del a, b
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
