"""Every op's Problem, found through its family, and the --shapes syntax of every subcommand.

A Problem (bench/problem_base.py) says what "correct" means for one op: inputs, a float64
reference, an error and a tolerance that can fail. The families (bench/families/) bring
them; :func:`get` finds one under the name registry records carry in ``Kernel.op``.
"""
from __future__ import annotations

from bench import families


def problems() -> dict:
    """op name -> Problem, over every family."""
    return {p.name: p for family in families.families() for p in family.problems()}


def get(op: str):
    table = problems()
    try:
        return table[op]
    except KeyError:
        raise KeyError(f"problems: no Problem registered for op {op!r}; "
                       f"known: {', '.join(sorted(table))}") from None


def known(op: str) -> bool:
    return op in problems()


def parse_shapes_spec(text: str | None):
    """The --shapes argument of every subcommand: None (each op's defaults), one list for
    every op ("1024x1024x1024"), or per op as "op=shapes;op=shapes"
    ("copy=67108864;softmax=4096x32768,3000x3000:dim=0"), returned as a dict op -> text.
    ValueError names the part that is wrong."""
    if not text or "=" not in text.split(";")[0].split(",")[0].split(":")[0]:
        return text or None
    out = {}
    for part in (p.strip() for p in text.split(";") if p.strip()):
        op, sep, shapes = part.partition("=")
        if not sep or not known(op.strip()):
            raise ValueError(f"--shapes: expected op=shapes[;op=shapes], with op one of "
                             f"{', '.join(sorted(problems()))}; got {part!r}")
        out[op.strip()] = shapes.strip()
    return out


def shapes_for(problem, spec, default: str | None):
    """The shapes of `problem` under a parsed --shapes spec: a list of shape objects, or
    None when a per-op spec does not name this op (the op is left out). `default` is the
    op's own text when spec is None. ValueError if the text does not parse for this op."""
    if isinstance(spec, dict):
        if problem.name not in spec:
            return None
        spec = spec[problem.name]
    return problem.parse_shapes(spec or default or "")
