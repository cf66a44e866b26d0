"""Correctness: every selected kernel x shape x precision against the float64 reference.

The same functions back `python -m bench check`, the report and the pytest tiers. What
"correct" means for an op (inputs, reference, error, tolerance) lives in its Problem
(bench/families/<family>/); this file only runs kernels and compares.

Each run:
  1. makes the inputs (random, exact small integers, or with a NaN and an inf),
  2. fills the memory the output will land in with NaN ("poisons" it), so an element the
     kernel forgets to write is NaN and fails instead of passing by luck (on the GPU every
     free block of the allocator, and the output must land there; on the CPU every empty
     tensor made during the run starts as NaN, and the inputs lie between NaN margins, so
     a read past one gives NaN every time),
  3. runs the kernel once and waits for it (errors of the launch surface here),
  4. measures the largest error and compares it with the bound;
  5. when it fails, says where (failure_note): the wrong elements and their pattern at the
     kernel's own tiles, and on the CPU, after running it once more with every Triton load
     checked (bench/out_of_bounds.py), whether a NaN was never written or computed from a
     read past the inputs (named: tensor, index, how far past its end).
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from bench import device as dev
from bench import out_of_bounds, problems, registry


@dataclass
class CheckResult:
    kernel: str
    shape: str
    precision: str
    mode: str          # "random", "exact" or "nonfinite" (see the op's Problem: bench/families/<family>/)
    error: float       # largest relative error (see the op's Problem: bench/families/<family>/)
    tolerance: float
    status: str        # "ok", "FAIL", "ERROR" or "skip"
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("FAIL", "ERROR")

    def as_dict(self) -> dict:
        return asdict(self)


def check_one(kernel, problem, shape, precision: str, mode: str = "random", seed: int = 0,
              device: str = "cpu") -> CheckResult:
    """Runs `kernel` once on `shape` and compares with the problem's reference."""
    tol = 0.0 if mode == "exact" else problem.tolerance(shape, precision)
    row = dict(kernel=kernel.name, shape=str(shape), precision=precision, mode=mode,
               tolerance=tol)
    ok, why = dev.can_run(kernel, device, precision)
    if not ok:
        return CheckResult(error=math.nan, status="skip", note=why, **row)
    if mode == "exact" and not problem.exact_possible(shape, precision):
        return CheckResult(error=math.nan, status="skip", note=problem.exact_note(shape, precision),
                           **row)
    try:
        fn = kernel.runner(precision)
        inputs = problem.inputs(shape, precision, seed=seed, mode=mode, device=device)
        out, landed = poisoned_launch(fn, inputs, problem.output_nbytes(shape, precision),
                                      device)
        err = problem.error(out, inputs, mode=mode, precision=precision, kernel=kernel)
    except Exception as exc:  # a kernel that raises on valid input is a failure, not a crash
        first = (str(exc).splitlines() or [""])[0][:160]
        return CheckResult(error=math.nan, status="ERROR",
                           note=f"{type(exc).__name__}: {first}", **row)
    passed = err == 0.0 if mode == "exact" else err <= tol
    # library references (cuBLAS, PyTorch) allocate inside the library, out of reach
    if passed and not landed and kernel.backend not in registry.REFERENCE_BACKENDS:
        return CheckResult(error=err, status="ERROR", note=NOT_POISONED, **row)
    if passed:
        return CheckResult(error=err, status="ok", **row)
    return CheckResult(error=err, status="FAIL", **row, note=failure_note(
        kernel, problem, out, inputs, precision, mode, tol, device))


RESERVE_MORE = 64 << 20     # bytes: the second try's extra poisoned room


def poisoned_launch(fn, inputs, nbytes: int, device: str, margins: bool | None = None):
    """fn(*inputs) with its output's memory poisoned first: (output, whether it landed in
    the poisoned memory). A wrapper that pads its output, or allocates a workspace first,
    can miss the block of nbytes made free and poisoned: then it runs once more with more
    room poisoned. On the CPU (or wherever `margins` asks: the labs' grader on a GPU) the
    inputs lie between poisoned margins, so a read past one gives NaN every time
    (bench/out_of_bounds.py)."""
    margins = device != "cuda" if margins is None else margins
    for reserve in (nbytes, 4 * nbytes + RESERVE_MORE):
        poisoned = dev.poison_output_memory(reserve, device)
        given = out_of_bounds.poisoned_margins(inputs) if margins else inputs
        with dev.quiet_interpreter(device), dev.poisoned_cpu_allocations():
            out = fn(*given)
            dev.synchronize(device)
            landed = dev.output_was_poisoned(out, poisoned, device)
        if landed:
            break
    return out, landed


# A pass proves nothing when an element the kernel never wrote could hold a right answer.
NOT_POISONED = ("its output was not in the memory poisoned before the run (allocate it with "
                "torch.empty/empty_like, which the check fills with NaN first), so an element "
                "it never wrote could hold an earlier right answer: the pass is not counted")
# ---------------------------------------------------------------------------------------
# Where a failed check fails
# ---------------------------------------------------------------------------------------

TILE_SIZES = (256, 128, 64, 32, 16, 8)     # block sizes a kernel's edge may sit at
# A kernel's own tile parameters (Kernel.tile_params), per axis of its output, looked up
# before TILE_SIZES, in this order ("T*V": the v1.5 and v2 ladders' (T*V) x (T*V) tile).
ROW_TILES = ("BLOCK_M", "BM", "BLOCK_H", "BLOCK_SIZE_M", "TILE_M", "T*V", "L", "BLOCK",
             "BLOCK_SIZE", "TILE", "WM", "TM", "V")
COLUMN_TILES = ("BLOCK_N", "BN", "BLOCK_W", "BLOCK_SIZE_N", "TILE_N", "T*V", "L", "BLOCK",
                "BLOCK_SIZE", "TILE", "WN", "TN", "V")
ELEMENT_TILES = ("BLOCK", "BLOCK_SIZE", "TILE", "BLOCK_N", "BN", "L")
# Why an element may be NaN, by what is known: on a GPU nothing more; on the CPU, after a
# rerun that checked every Triton load (bench/out_of_bounds.py), or of torch code alone.
NAN_UNKNOWN = "never written, or computed from reads past the inputs"
NAN_UNWRITTEN = "never written (a rerun that checked every load found none out of bounds)"
NAN_UNWRITTEN_TORCH = "never written (outputs start as NaN)"


def failure_note(kernel, problem, out, inputs, precision: str, mode: str, tol: float,
                 device: str) -> str:
    """The note of a failed check: where it fails (diagnose), at the kernel's own tiles.

    On the CPU the kernel runs once more on guarded copies of its inputs with every Triton
    load checked (bench/out_of_bounds.py): reads past the inputs are named, and the rest
    of the note is then that rerun's, whose reads past the inputs give a fixed value (the
    first run read whatever memory lay there, which changes from run to run)."""
    try:
        return _failure_note(kernel, problem, out, inputs, precision, mode, tol, device)
    except Exception as exc:     # a diagnosis must never hide the failure itself
        return f"(no diagnosis: {type(exc).__name__}: {exc})"


def _failure_note(kernel, problem, out, inputs, precision, mode, tol, device) -> str:
    import torch

    try:
        tiles = dict(kernel.tile_params(precision))
    except Exception:            # a record without tile parameters: the generic sizes
        tiles = {}
    again = None
    if device == "cpu" and isinstance(out, torch.Tensor):
        again = out_of_bounds.rerun(kernel.runner(precision), inputs,
                                    [name for name, _ in problem.arguments])
    judged = dict(precision=precision, kernel=kernel)
    if again is None:
        return diagnose(problem, out, inputs, mode, tol, tiles, NAN_UNKNOWN, **judged)
    if not again.reads:
        cause = NAN_UNWRITTEN if again.launches else NAN_UNWRITTEN_TORCH
        return diagnose(problem, out, inputs, mode, tol, tiles, cause, **judged)
    where = diagnose(problem, again.out, inputs, mode, tol, tiles, NAN_UNKNOWN, **judged)
    return f"{again.describe()}: " + (
        where or f"its output passes; the first run's: "
                 f"{diagnose(problem, out, inputs, mode, tol, tiles, NAN_UNKNOWN, **judged)}")


def tile_candidates(params: dict, names) -> list[tuple[str, int]]:
    """(label, size) of the kernel's tile parameters among `names`, in that order, one per
    size: [("BLOCK_M = 32", 32), ...]. Values that are not integers above 1 are left out."""
    values = dict(params or {})
    if isinstance(values.get("T"), int) and isinstance(values.get("V"), int):
        values["T*V"] = values["T"] * values["V"]
    found, sizes = [], set()
    for name in names:
        v = values.get(name)
        if isinstance(v, int) and not isinstance(v, bool) and v > 1 and v not in sizes:
            found.append((f"{name} = {v}", v))
            sizes.add(v)
    return found


def _with_generic(tiles: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The kernel's own tiles, then the TILE_SIZES it does not have (labelled by size)."""
    own = {size for _, size in tiles}
    return tiles + [(str(t), t) for t in TILE_SIZES if t not in own]


def _spans(indices: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9' (at most four spans, then '...')."""
    spans, start = [], None
    for i, v in enumerate(indices):
        if start is None:
            start = v
        if i + 1 == len(indices) or indices[i + 1] != v + 1:
            spans.append(f"{start}" if start == v else f"{start}-{v}")
            start = None
    return ", ".join(spans[:4]) + (", ..." if len(spans) > 4 else "")


def _lines(indices: list[int], what: str) -> str:
    """'row 5' or 'rows 5, 100-103'."""
    return f"{what}{'s' if len(indices) > 1 else ''} {_spans(indices)}"


def _last(count: int, what: str) -> str:
    return f"the last {what}" if count == 1 else f"the last {count} {what}s"


def _axis_parts(bad_lines: list[int], length: int, what: str,
                tiles=()) -> tuple[str, str]:
    """What the wrong rows (or columns) are, and what they have in common, if anything: a
    tail past a tile edge, a stride. `tiles` are (label, size), the kernel's own first."""
    first, count = bad_lines[0], len(bad_lines)
    tiles = list(tiles) or [(str(t), t) for t in TILE_SIZES]
    if bad_lines == list(range(first, length)):              # a tail
        if first == length - 1:
            own = next((label for label, t in tiles
                        if "=" in label and first % t == 0 and first > 0), None)
            return f"the last {what} ({first})", (
                f"a partial tile of {own} begins there" if own else "")
        edge = next((label for label, t in tiles if first % t == 0 and first > 0), None)
        return f"the last {count} {what}s ({first}-{length - 1})", (
            f"they start at {first}, a multiple of {edge}, where a partial tile begins"
            if edge else "")
    for label, t in tiles:                                   # every t-th line
        rest = {i % t for i in bad_lines}
        if len(rest) == 1 and count >= 2 and count >= length // t - 1:
            return (f"every {what} with index % {t} == {rest.pop()}",
                    f"a tile edge inside{f' ({label})' if '=' in label else ''}")
    return _lines(bad_lines, what), ""


def _axis_pattern(bad_lines: list[int], length: int, what: str, tiles=()) -> str | None:
    """What the wrong rows (or columns) have in common: a tail past a tile edge, a stride."""
    if not bad_lines:
        return None
    lines, why = _axis_parts(bad_lines, length, what, tiles)
    return f"{lines}: {why}" if why else lines


def _indices(mask) -> list[int]:
    return mask.nonzero().flatten().tolist()


def _matrix_pattern(bad, tiles: dict) -> str:
    """Rows and columns of a 2-D output: whole rows, whole columns, an L along the bottom
    and right edges, the bottom-right corner, or the rows and columns that hold them."""
    import torch

    M, N = bad.shape
    row_tiles = _with_generic(tile_candidates(tiles, ROW_TILES))
    col_tiles = _with_generic(tile_candidates(tiles, COLUMN_TILES))
    rows, cols = _indices(bad.any(dim=1)), _indices(bad.any(dim=0))
    if rows and bool(bad[rows].all()):
        return f"whole rows: {_axis_pattern(rows, M, 'row', row_tiles)}"
    if cols and bool(bad[:, cols].all()):
        return f"whole columns: {_axis_pattern(cols, N, 'column', col_tiles)}"
    full_rows, full_cols = bad.all(dim=1), bad.all(dim=0)
    r = int(torch.flip(full_rows, [0]).cumprod(0).sum())     # trailing whole rows
    c = int(torch.flip(full_cols, [0]).cumprod(0).sum())
    r_tail, c_tail = rows == list(range(M - len(rows), M)), cols == list(range(N - len(cols), N))
    if r and c:
        lower = torch.zeros_like(bad)
        lower[M - r:, :] = True
        lower[:, N - c:] = True
        if bool(torch.equal(bad, lower)):
            return (f"{_last(r, 'row')} and {_last(c, 'column')} (an L along the bottom "
                    f"and right edges: partial tiles past row {M - r} and column {N - c}"
                    f"{_edge_labels(M - r, row_tiles, N - c, col_tiles)})")
    if r_tail and c_tail and bool(bad[rows][:, cols].all()):
        return (f"the bottom-right corner, rows {_spans(rows)} x columns {_spans(cols)} "
                f"(the tile past row {rows[0]} and column {cols[0]}"
                f"{_edge_labels(rows[0], row_tiles, cols[0], col_tiles)})")
    return "; ".join(f"in {_axis_pattern(lines, n, what, t)}"
                     for lines, n, what, t in ((rows, M, "row", row_tiles),
                                               (cols, N, "column", col_tiles))
                     if len(lines) < n)


def _edge_labels(row: int, row_tiles, col: int, col_tiles) -> str:
    """', multiples of BLOCK_M = 32 and BLOCK_N = 32' where the kernel's own tiles say so."""
    own = [next((label for label, t in tiles if "=" in label and i % t == 0 and i > 0), None)
           for i, tiles in ((row, row_tiles), (col, col_tiles))]
    if not all(own):
        return ""
    return f", multiples of {own[0]}" if own[0] == own[1] else \
        f", multiples of {own[0]} and {own[1]}"


def _same_factor(err, rows: list[int], tol: float) -> bool:
    """Whether every element of each of these rows has (nearly) the same relative error: the
    output is the reference times one factor per row, a wrong normalisation."""
    e = err if len(rows) == err.shape[0] else err[rows]     # no copy of a whole map
    if not bool(e.isfinite().all()):
        return False
    spread = e.max(dim=1).values - e.min(dim=1).values
    return bool((spread <= (0.01 * e.mean(dim=1)).clamp_min(4 * tol)).all())


NORMALISATION = "the row's normalisation (each element off by one factor per row)"


def _rows_pattern(bad, err, tol: float, tiles: dict, reduced: bool = True) -> str:
    """Rows ([rows, n]): which rows are wrong, and within them every element, the same
    columns in each (a band: the masked lanes of a block), or others. Rows `reduced` along
    a dim (a softmax's) that are wrong by one factor throughout are a wrong normalisation."""
    R, n = bad.shape
    rows = _indices(bad.any(dim=1))
    row_tiles = tile_candidates(tiles, ("BLOCK_M", "BLOCK_ROWS", "ROWS"))
    col_tiles = _with_generic(tile_candidates(tiles, ELEMENT_TILES))
    which = "every row" if len(rows) == R else (
        _axis_pattern(rows, R, "row", row_tiles) if row_tiles else _lines(rows, "row"))
    if bool(bad[rows].all()):
        return f"{which} (every element)" + (
            f": {NORMALISATION}" if reduced and _same_factor(err, rows, tol) else "")
    cols = _indices(bad[rows[0]])
    if bool((bad[rows] == bad[rows[0]]).all()):           # the same columns in each row
        lines, why = _axis_parts(cols, n, "column", col_tiles)
        of = "of every row" if len(rows) == R else f"of {which}" + (
            " (the same in each)" if len(rows) > 1 else "")
        return f"{lines} {of}" + (f": {why}" if why else "")
    return f"in {which}; in {_axis_pattern(_indices(bad.any(dim=0)), n, 'column', col_tiles)}"


def _elements_pattern(bad, tiles: dict, what: str = "elements") -> str | None:
    """A flat output cut into blocks: the tail past the last full block, whole blocks of the
    kernel's own size (a generic size would fit any aligned range), or None (no pattern a
    block explains). `what` names the elements ("elements ... of the flattened output")."""
    n = bad.numel()
    idx = _indices(bad)
    first = idx[0]
    blocks = _with_generic(tile_candidates(tiles, ELEMENT_TILES))
    if idx == list(range(first, n)):                          # a tail
        for label, t in blocks:
            if first % t or not first:
                continue
            span = f"{what.replace('elements', f'elements {first}-{n - 1}', 1)}"
            if "=" not in label:                              # a guess: say only the edge
                return f"{span}: they start at {first}, a multiple of {t}, where a partial " \
                       f"block begins"
            size = f"{t} ({label.split(' = ')[0]})"
            if first == (n - 1) // t * t:
                return f"{span}, the tail past the last full block of {size}"
            if first == t:
                return f"{span}, everything past the first block of {size}"
            return f"{span}, from a multiple of {size} on"
    for label, t in tile_candidates(tiles, ELEMENT_TILES):     # whole blocks of its own
        if t >= n:
            continue
        hit = sorted({i // t for i in idx})
        if len(idx) == sum(min(t, n - b * t) for b in hit):
            return (f"whole blocks of {t} ({label.split(' = ')[0]}): {_lines(hit, 'block')} "
                    f"({what} {_spans(idx)})")
    return None


def where_wrong(err, tol, out, tiles: dict | None = None, layout: str | None = None,
                nan_cause: str = NAN_UNKNOWN) -> str:
    """One line that says where the output is wrong: how many elements, the first index,
    and the pattern when there is one (like torch.testing.assert_close's mismatch report).

    `err`, `out`: the error map and the output, arranged as `layout` reads them ("matrix":
    rows and columns of a 2-D output; "rows": rows reduced along a dim, [rows, n];
    "elements": a flat array in blocks; None: "matrix" for 2-D, else "elements"). `tiles`:
    the kernel's tile parameters (Kernel.tile_params), looked up before TILE_SIZES.
    `nan_cause`: why a wrong element may be NaN, as far as is known."""
    import torch

    bad = ~(err <= tol)                                      # NaN errors count as wrong
    count, total = int(bad.sum()), bad.numel()
    if count == 0:
        return ""
    flat = int(bad.reshape(-1).nonzero()[0])
    first = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), bad.shape)) \
        if bad.dim() > 1 else (flat,)
    parts = [f"{count} of {total} elements wrong ({100 * count / total:.3g}%), first at "
             f"{list(first) if len(first) > 1 else first[0]}"]
    nan = torch.isnan(out.detach()) & bad
    if int(nan.sum()) == count:
        parts.append(f"all NaN: {nan_cause}")
    elif int(nan.sum()):
        parts.append(f"{int(nan.sum())} of them NaN: {nan_cause}")
    tiles = tiles or {}
    layout = layout or ("matrix" if bad.dim() == 2 else "elements")
    if layout == "rows" and bad.dim() == 2:
        parts.append(_rows_pattern(bad, err, tol, tiles) if count < total else
                     "every element" + (f": {NORMALISATION}"
                                        if _same_factor(err, list(range(bad.shape[0])), tol)
                                        else ""))
    elif count == total:
        parts.append("every element")
    elif layout == "matrix" and bad.dim() == 2:
        parts.append(_matrix_pattern(bad, tiles))
    else:
        flat_text = _elements_pattern(bad.reshape(-1), tiles, "elements" if bad.dim() < 2
                                      else "elements of the flattened output")
        if flat_text:
            parts.append(flat_text)
        elif bad.dim() >= 2:
            as_rows = bad.reshape(-1, bad.shape[-1])
            parts.append(_rows_pattern(as_rows, err.reshape(as_rows.shape), tol, tiles,
                                       reduced=False))
        else:
            parts.append(f"elements {_spans(_indices(bad))}")
    return "; ".join(p for p in parts if p)


def diagnose(problem, out, inputs, mode: str, tol: float, tiles: dict | None = None,
             nan_cause: str = NAN_UNKNOWN, precision: str | None = None, kernel=None) -> str:
    """where_wrong() from the problem's error map (arranged by its where_view), and what is
    wrong with the output as a whole (its whole_output_error); or a note that the op cannot
    say where. precision, kernel: as the problem's error() takes them."""
    import torch

    if not isinstance(out, torch.Tensor):
        return f"the kernel returned {type(out).__name__}, not a tensor"
    try:
        err = problem.error_map(out, inputs, mode=mode, precision=precision, kernel=kernel)
        whole = problem.whole_output_error(out, inputs, mode=mode, precision=precision,
                                           kernel=kernel)
    except Exception:            # a diagnosis must never hide the failure itself
        err, whole = None, ""
    if err is None:
        expected = getattr(inputs[0], "shape", None)
        return (f"no error per element here (the largest only): output shape "
                f"{tuple(out.shape)}, dtype {out.dtype}" +
                (f" (inputs {tuple(expected)})" if expected is not None else ""))
    view = problem.where_view
    where = where_wrong(view(err, inputs), 0.0 if mode == "exact" else tol, view(out, inputs),
                        tiles, problem.error_layout, nan_cause)
    return "; ".join(p for p in (where, whole) if p)


def _shapes_for(problem, shapes, device: str) -> list:
    """Shapes as objects of this problem: parsed from text, or the problem's defaults."""
    if shapes is None or isinstance(shapes, (str, dict)):
        return problems.shapes_for(problem, shapes, problem.check_shapes[device])
    return [problem.parse_shape(s) if isinstance(s, str) else s for s in shapes]


def plan(kernels, shapes=None, precisions: list[str] | None = None,
         modes=("random",), device: str = "cpu") -> list:
    """The work of a check, in order: (kernel, problem, shape, precision, mode) for each
    run, or a CheckResult already decided (a kernel whose op has no Problem, shapes that do
    not fit its op), so that the results keep the order of the kernels."""
    work: list = []
    for kernel in kernels:
        if not problems.known(kernel.op):
            work.append(CheckResult(kernel.name, "-", "-", "-", math.nan, math.nan, "skip",
                                    f"no Problem for op {kernel.op!r} in any family (bench/families/)"))
            continue
        problem = problems.get(kernel.op)
        try:
            kshapes = _shapes_for(problem, shapes, device)
        except ValueError as exc:
            work.append(CheckResult(kernel.name, str(shapes), "-", "-", math.nan, math.nan,
                                    "skip", f"shapes do not fit op {kernel.op}: {exc}"))
            continue
        if kshapes is None:           # a per-op --shapes that does not name this op
            continue
        for precision in kernel.precisions:
            if precisions and precision not in precisions:
                continue
            for shape in kshapes:
                why = kernel.refusal(shape)
                for mode in modes:
                    work.append(CheckResult(kernel.name, str(shape), precision, mode, math.nan,
                                            math.nan, "skip", why) if why else
                                (kernel, problem, shape, precision, mode))
    return work


def will_run(kernel, problem, shape, precision: str, mode: str, device: str) -> bool:
    """Whether check_one would run the kernel (rather than skip it at once)."""
    return dev.can_run(kernel, device, precision)[0] and (
        mode != "exact" or problem.exact_possible(shape, precision))


def run(kernels, shapes=None, precisions: list[str] | None = None,
        exact: bool = False, seed: int = 0, device: str | None = None,
        nonfinite: bool = False, progress=None, show_progress: bool = False
        ) -> list[CheckResult]:
    """Checks every kernel on every shape, at every precision it supports (or those asked).

    shapes: None (each problem's defaults for this device), a comma-separated string, or
    a list of shape objects/strings. `exact` and `nonfinite` add those modes to "random".
    Kernels whose op has no Problem are reported as skipped, not dropped silently.
    progress(result), if given, is called after every run; show_progress draws the runs
    that can run here as they go, on stderr (bench/terminal.py).
    """
    from bench import terminal

    device = device or dev.setup()
    modes = ["random"] + (["exact"] if exact else []) + (["nonfinite"] if nonfinite else [])
    work = plan(kernels, shapes, precisions, modes, device)
    runs = [isinstance(w, tuple) and will_run(*w, device) for w in work]
    results = []
    with terminal.Progress(sum(runs), "check", unit="runs", enabled=show_progress) as bar:
        for w, runs_here in zip(work, runs):
            if isinstance(w, CheckResult):
                results.append(w)
                continue
            kernel, problem, shape, precision, mode = w
            if runs_here:
                bar.start(f"{kernel.name} {shape} {precision} {mode}")
            r = check_one(kernel, problem, shape, precision, mode, seed, device)
            if runs_here:
                bar.advance()
            if progress:
                progress(r)
            results.append(r)
    return results


def general_reason(note: str) -> str:
    """A skip reason without its shapes: "shape 64x64x64 too large for exact bf16" and
    "shape 127x129x31 too large for exact bf16" are one reason."""
    return re.sub(r"\b\d+(?:x\d+)*(?::dim=-?\d+)?\b", "…", note or "no reason given")


def skipped_by_reason(rows) -> list[tuple[str, list[str], int]]:
    """The skipped runs of a check (CheckResults or their dicts) grouped by reason:
    (reason, the kernels in order, how many runs), the most frequent reason first."""
    groups: dict[str, tuple[list[str], list[int]]] = {}
    for r in rows:
        r = r if isinstance(r, dict) else r.as_dict()
        if r["status"] != "skip":
            continue
        kernels, runs = groups.setdefault(general_reason(r.get("note")), ([], [0]))
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
        runs[0] += 1
    return sorted(((why, k, n[0]) for why, (k, n) in groups.items()), key=lambda g: -g[2])
