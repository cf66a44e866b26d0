"""`python -m bench model`: the closed-form traffic of each kernel, as table rows.

Nothing runs: every number comes from the kernel's model (bench/models.py,
bench/models_triton.py) at the given shape with the tile parameters the kernel is
compiled with (read from cuda/matmul_config.h for the CUDA ladder).
"""
from __future__ import annotations

from bench import models, problems

# Columns in ELEMENTS and BYTES, in the order a lecture walks down the hierarchy.
QUANTITIES = (
    ("global_loads", "global_load_bytes", "global loads issued by threads"),
    ("global_stores", "global_store_bytes", "global stores"),
    ("shared_loads", "shared_load_bytes", "shared-memory loads"),
)


def params_text(params) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()) or "-"


def lecture_value(kernel, shape, params) -> int | None:
    """The lecture formula's count, where it applies: a square product of a ladder version
    whose parameters the formula names (None otherwise)."""
    if kernel.op != "matmul" or not (shape.M == shape.N == shape.K):
        return None
    try:
        return models.lecture_formula(kernel.version, shape.M, params)
    except (KeyError, TypeError):
        return None


def rows(kernels, shapes_text=None) -> list[dict]:
    """One row per kernel x shape (kernels without a model are skipped). shapes_text: None
    (each op's model shapes), one text for every op (ops it does not fit are left out), or
    a dict op -> text (bench.problems.parse_shapes_spec)."""
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
        params = dict(k.params())
        for shape in shapes:
            t = k.model(shape, params)
            row = dict(kernel=k.name, backend=k.backend, version=k.version, op=k.op,
                       twin=k.twin or "", shape=str(shape), size=problem.size(shape),
                       params=params_text(params), formula=k.formula)
            row.update(t.as_dict())
            row["lecture_global_loads"] = lecture_value(k, shape, params)
            out.append(row)
    return out
