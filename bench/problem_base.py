"""The interface every op's Problem implements (bench/families/ brings them; bench/problems.py finds them)."""
from __future__ import annotations

import contextlib

MODES = ("random", "exact", "nonfinite")
REQUIRED = object()     # an argument without a default (Problem.arguments)


class Problem:
    """One op of the suite, as the harness sees it. Subclasses fill in every method.

    A *shape* is whatever object :meth:`parse_shape` returns; ``str(shape)`` must give the
    text back (results files store shapes as text). Inputs are a tuple of tensors that
    the kernel's runner takes positionally: ``runner(*inputs) -> output``.
    """

    name = ""
    shape_help = ""
    # How a script calls a kernel of this op (bench.kernels): its arguments in order, each a
    # name and a default (REQUIRED: none). The same order as inputs() returns them.
    arguments: tuple = ()
    # Default shapes, as text, per device ("cpu" runs Triton through the interpreter:
    # keep those tiny). "time" shapes are the x axis of the throughput figure; "model"
    # shapes are where the report tabulates the traffic models; "profile" where the
    # report runs Nsight Compute (one size keeps the GPU report inside its budget).
    check_shapes = {"cpu": "", "cuda": ""}
    time_shapes = {"cpu": "", "cuda": ""}
    model_shapes = ""
    profile_shapes = ""
    quick_time_shapes = ""    # `report --quick`: a few shapes (the time shapes if empty)
    # Named sets of shapes for --suite NAME (check, time, model, profile): name -> text.
    suites: dict[str, str] = {}

    # -- shapes
    def parse_shape(self, text: str):
        raise NotImplementedError

    def parse_shapes(self, text: str) -> list:
        return [self.parse_shape(t.strip()) for t in text.split(",") if t.strip()]

    def size(self, shape) -> float:
        """One number for the x axis of a throughput plot."""
        raise NotImplementedError

    # -- inputs and outputs
    def inputs(self, shape, precision: str, seed: int = 0, mode: str = "random",
               device: str = "cpu") -> tuple:
        raise NotImplementedError

    def output_nbytes(self, shape, precision: str) -> int:
        """Bytes of the output, so the harness can poison the block the kernel will get."""
        raise NotImplementedError

    # -- correctness
    def error(self, out, inputs, mode: str = "random", precision: str | None = None,
              kernel=None) -> float:
        """Largest error of `out` as the op measures it (inf for a wrong shape, a NaN, or a
        missing non-finite value in "nonfinite" mode); at most tolerance() passes.
        precision: the label the kernel ran at (None: the output dtype's own); kernel: the
        registry record, for an op whose check depends on what the kernel promises (the
        dropout mask of the suite's Philox stream, bit for bit)."""
        raise NotImplementedError

    def tolerance(self, shape, precision: str) -> float:
        raise NotImplementedError

    def judging(self):
        """A context within which error() may judge several outputs of one kernel on the
        same inputs at the cost of one reference (the harness's check after timing judges
        two); what it keeps goes when the context ends. By default nothing is kept."""
        return contextlib.nullcontext()

    def error_map(self, out, inputs, mode: str = "random", precision: str | None = None,
                  kernel=None):
        """The error of every output element (a tensor of the output's shape, inf where an
        element is NaN or a non-finite value is wrong), so that a failed check can say
        where it fails; None where the op cannot say (the check then gives the maximum)."""
        return None

    # How a failed check reads the error map (bench/check.py, where_wrong): "matrix" (rows
    # and columns of a 2-D output, the tiles of both), "rows" (rows reduced along a dim: the
    # wrong rows, and the columns within them) or "elements" (a flat array cut into blocks).
    error_layout = "matrix"

    def where_view(self, t, inputs):
        """A tensor of the output's shape (the error map, the output) arranged as
        error_layout reads it: "rows" wants [rows, n] with n along the reduced dim."""
        return t

    def whole_output_error(self, out, inputs, mode: str = "random",
                           precision: str | None = None, kernel=None) -> str:
        """What is wrong with the output as a whole that no single element shows (a
        dropout's keep rate), for a failed check's note; "" when nothing is."""
        return ""

    def exact_possible(self, shape, precision: str) -> bool:
        return True

    def exact_note(self, shape, precision: str) -> str:
        """Why the exact mode is skipped here (check shows it), when it is."""
        return f"shape {shape} too large for exact {precision}"

    # -- work and traffic
    def useful_flops(self, shape) -> int:
        raise NotImplementedError

    def compulsory_bytes(self, shape, precision: str) -> int:
        """Each input read once plus the output written once: the DRAM floor."""
        raise NotImplementedError

    def traffic(self, kernel, shape, precision: str):
        """The kernel's traffic model at this shape and precision, or None."""
        return kernel.traffic(shape, precision)

    def lecture_value(self, kernel, shape, params) -> int | None:
        """The lecture formula's global-load count, where the op has one (model table)."""
        return None

    def profile_target(self, kernel, levels: dict, model) -> str:
        """PASS or FAIL where the op sets a counter target for this kernel, else "-"."""
        return "-"


