"""`python -m bench`: the command line of the harness.

    python -m bench list                                  every kernel, with backend and version
    python -m bench check --kernels 'cuda_*' --shapes 1000x999x37,1x1x1 [--exact]
"""
from __future__ import annotations

import argparse
import math
import sys

from bench import registry
from bench.models import MatmulShape

DEFAULT_CHECK_SHAPES = "1x1x1,17x13x7,64x64x64,127x129x31,256x256x256"


def _table(headers: list[str], rows: list[list]) -> str:
    text = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) if text else len(h)
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in text])


def cmd_list(args) -> int:
    rows = []
    for k in registry.select(args.kernels):
        rows.append([k.name, k.backend, k.version, ",".join(k.precisions), k.twin or "-",
                     k.summary])
    print(_table(["kernel", "backend", "version", "precisions", "twin", "summary"], rows))
    return 0


def _fmt_err(x: float) -> str:
    return "-" if math.isnan(x) else ("inf" if math.isinf(x) else f"{x:.2e}")


def cmd_check(args) -> int:
    from bench import check, device

    dev = device.setup()
    kernels = registry.select(args.kernels, op="matmul")
    if not kernels:
        print(f"bench check: no matmul kernel matches {args.kernels!r}", file=sys.stderr)
        return 2
    shapes = [MatmulShape.parse(s) for s in args.shapes.split(",")]
    precisions = args.precision.split(",") if args.precision else None
    results = check.run(kernels, shapes, precisions, exact=args.exact, seed=args.seed, device=dev)
    rows = [[r.kernel, r.shape, r.precision, r.mode, _fmt_err(r.error),
             _fmt_err(r.tolerance) if r.mode == "random" else "0", r.status, r.note]
            for r in results]
    print(f"device: {dev}")
    print(_table(["kernel", "shape", "prec", "mode", "max rel err", "bound", "status", "note"], rows))
    failed = [r for r in results if r.failed]
    ran = [r for r in results if r.status != "skip"]
    print(f"\n{len(ran) - len(failed)} passed, {len(failed)} failed, "
          f"{len(results) - len(ran)} skipped")
    if not ran:
        print("bench check: nothing could run here", file=sys.stderr)
        return 1
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="every registered kernel")
    s.add_argument("--kernels", default=None, help="comma-separated globs (default: all)")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("check", help="correctness against a float64 reference")
    s.add_argument("--kernels", default="*", help="comma-separated globs, e.g. 'cuda_*,triton_v3*'")
    s.add_argument("--shapes", default=DEFAULT_CHECK_SHAPES, help="MxNxK[,MxNxK...]")
    s.add_argument("--precision", default=None, help="fp32,tf32,fp16,bf16 (default: all supported)")
    s.add_argument("--exact", action="store_true", help="also run the exact small-integer mode")
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(func=cmd_check)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
