"""The program compute-sanitizer runs over (tests/test_sanitizer.py): every CUDA and Triton
kernel of the registry, once per precision, at odd shapes (edges of every tile), with a
marker line before each so an error report can be traced to its kernel.

    compute-sanitizer --tool memcheck python -m tests.sanitize_target [--kernels GLOBS]
"""
from __future__ import annotations

import argparse
import sys

# Odd shapes per op: tile edges, a masked tail, columns as well as rows.
SHAPES = {
    "matmul": "127x129x31,1x65x17",
    "vector_add": "1000,4097",
    "copy": "1000,4097",
    "relu_dropout": "1000,4097",
    "softmax": "37x1000,37x1000:dim=0,5x40000",
    "rgb_to_grey": "3x31x17,3x9x1030",
}


def main(argv=None) -> int:
    import torch

    from bench import problems, registry

    p = argparse.ArgumentParser()
    p.add_argument("--kernels", default="*")
    args = p.parse_args(argv)
    ran = 0
    for k in registry.select(args.kernels):
        if k.backend not in ("cuda", "triton") or k.op not in SHAPES:
            continue
        problem = problems.get(k.op)
        for shape in problem.parse_shapes(SHAPES[k.op]):
            if k.op == "softmax" and k.version == "row_sram" and shape.around()[1] > 32768:
                continue
            for precision in k.precisions:
                print(f"== {k.name} {shape} {precision}", flush=True)
                inputs = problem.inputs(shape, precision, seed=1, device="cuda")
                out = k.runner(precision)(*inputs)
                torch.cuda.synchronize()
                err = problem.error(out, inputs)
                if not err <= problem.tolerance(shape, precision):
                    print(f"WRONG {k.name} {shape} {precision}: error {err}", flush=True)
                    return 1
                ran += 1
    print(f"ran {ran} kernel launches", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
