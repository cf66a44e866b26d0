"""`python -m bench model`: the closed-form traffic of each kernel, as table rows.

Nothing runs: every number comes from the kernel's model (its family's models.py) at the
given shape and precision, with the tile parameters the kernel is compiled with at that
precision (read from cuda/matmul_config.h for the CUDA ladder).
"""
from __future__ import annotations

from bench import problems


def params_text(params) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()) or "-"


def rows(kernels, shapes_text=None, precisions: list[str] | None = None) -> list[dict]:
    """One row per kernel x shape x precision (kernels without a model are skipped).
    shapes_text: None (each op's model shapes), one text for every op (ops it does not fit
    are left out), or a dict op -> text (bench.problems.parse_shapes_spec). precisions: the
    labels to model at (each kernel's first precision if None; kernels that support none of
    them are left out)."""
    out = []
    for k in kernels:
        if k.model is None or not problems.known(k.op):
            continue
        problem = problems.get(k.op)
        try:
            shapes = problems.shapes_for(problem, shapes_text, problem.model_shapes)
        except ValueError:
            if isinstance(shapes_text, dict):
                raise
            continue                  # one text for every op: "1024x1024x1024" is no image
        if shapes is None:
            continue
        for precision in [p for p in (precisions or k.precisions[:1]) if p in k.precisions]:
            params = k.tile_params(precision)
            shown = {n: v for n, v in params.items() if n != "precision"}
            for shape in shapes:
                t = problem.traffic(k, shape, precision)
                row = dict(kernel=k.name, backend=k.backend, version=k.version, op=k.op,
                           twin=k.twin or "", shape=str(shape), size=problem.size(shape),
                           precision=precision, params=params_text(shown), formula=k.formula)
                row.update(t.as_dict())
                row["lecture_global_loads"] = problem.lecture_value(k, shape, params)
                out.append(row)
    return out
