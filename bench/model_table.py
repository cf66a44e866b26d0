"""`python -m bench model`: the closed-form traffic of each kernel, as table rows.

Nothing runs: every number comes from the kernel's model (its family's models.py) at the
given shape and precision, with the tile parameters the kernel is compiled with at that
precision (read from cuda/matmul_config.h for the CUDA ladder).
"""
from __future__ import annotations

import math

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
        if (k.model is None and k.chooses is None) or not problems.known(k.op):
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
                if t is None:
                    continue          # a dispatching entry's choice without a model
                row = dict(kernel=k.name, backend=k.backend, version=k.version, op=k.op,
                           twin=k.twin or "", shape=str(shape), size=problem.size(shape),
                           precision=precision, params=params_text(shown), formula=k.formula)
                if k.chooses is not None:
                    row["choice"] = k.choice(shape, precision)
                row.update(t.as_dict())
                row["lecture_global_loads"] = problem.lecture_value(k, shape, params)
                out.append(row)
    return out


# ---------------------------------------------------------------------------------------
# Model columns of stored rows, at each row's precision
# ---------------------------------------------------------------------------------------

def _model_for(row):
    """(kernel, problem, shape, Traffic) of a result row from today's registry and models,
    at the row's own shape and precision; None if the kernel, its op or its model is gone."""
    from bench import registry

    kernel = registry.by_name().get(row.get("kernel"))
    precision = row.get("precision")
    if kernel is None or kernel.model is None or precision not in kernel.precisions \
            or not problems.known(kernel.op):
        return None
    problem = problems.get(kernel.op)
    try:
        shape = problem.parse_shape(row["shape"])
    except (KeyError, ValueError):
        return None
    return kernel, problem, shape, problem.traffic(kernel, shape, precision)


def _time_row(row: dict) -> dict:
    found = _model_for(row) if row.get("status") == "ok" else None
    if found is None or found[3] is None:
        return row
    t = found[3]
    model_bytes = t.global_load_bytes + t.global_store_bytes
    ms = row.get("median_ms")
    return dict(row, model_bytes=model_bytes,
                gbps_model=model_bytes / (ms * 1e-3) / 1e9 if ms else row.get("gbps_model"))


def _profile_row(row: dict) -> dict:
    from bench import profile

    found = _model_for(row) if row.get("status") == "ok" else None
    if found is None or found[3] is None:
        return row
    kernel, problem, _shape, t = found
    lv = {k: row.get(k) if row.get(k) is not None else math.nan
          for k in ("issued_elements", "shared_elements", "ffma", "dram_read_bytes",
                    "dram_write_bytes")}
    fresh = profile.compare(kernel, problem, lv, t)
    fresh.pop("target", None)      # PASS/FAIL stays as judged when the counters were read
    return dict(row, **fresh)


def at_row_precision(s: dict) -> dict:
    """The result set s (kind -> payload) with every column derived from a traffic model
    (time: model_bytes, gbps_model; profile: the model's loads, bytes, FMAs and the
    measured/model ratios) computed again from the kernel's closed-form model at the row's
    own shape and precision, with the tile parameters the kernel runs at that precision.

    The models are closed form, so this costs nothing, and it keeps a stored result set
    consistent with today's models: rows written before the models took the precision
    carried fp32 bytes on half-precision rows (twice too many). A row whose kernel or model
    is no longer in the registry keeps its stored columns."""
    out = dict(s)
    for kind, fix in (("time", _time_row), ("profile", _profile_row)):
        if kind in s:
            out[kind] = dict(s[kind], rows=[fix(r) for r in s[kind]["rows"]])
    return out
