"""The labs: where they live, what each declares, and copying a starter out.

A lab is a folder labs/NN_slug/ (in an installed copy, bench/labs/NN_slug/):

    README.md        for the student: the goal, what to read, how to run and grade locally
    starter.py       the file the student completes (TODOs); it imports and runs as given
    lab.toml         the lab: its op, the function graded, the backend, the visible tests
    instructor/      not in the student's copy: solution.py, hidden.toml (more tests, more
                     shapes), bugs.toml (planted bugs: each the solution with one change,
                     the tests it must fail and a phrase of the reason; `cvt-bench lab check
                     N` grades them all)

lab.toml:

    number = 1                      # `cvt-bench grade 1 ...`
    slug = "vector_add"
    title = "..."
    op = "vector_add"               # a problem of bench/problems (inputs, float64 reference)
    function = "vector_add"         # what the student's file defines
    backend = "triton"              # the Python file's backend (starter.py, solution.py)
    timeout = 120                   # seconds per call before the call is stopped
    fresh = ["seed"]                # op arguments drawn anew on every call (default: none)
    random_stream = "philox4x32-10" # a random op's stream, checked element by element

    [cuda]                          # a CUDA variant: starter.cu, instructor/solution.cu
    signature = "void vector_add(const float* x, const float* y, float* out, long n)"
    output = "x"                    # out: empty_like(x), or a shape ("M, N"); cuda_lab.py
                                    # says what the parameters may be

    [[tests]]
    name = "tail"                   # each test: shapes x precisions, `calls` (2) fresh inputs each
    points = 2
    shapes = ["1000", "4097"]
    precisions = ["fp32"]
    hint = "..."                    # shown when it fails (cuda_hint: the CUDA variant's)
    kind = "correct"                # or "traffic" (max_loads, max_stores: formulas of the
                                    # shape's M, N, K or n), or "performance" (GPU):
    reference = "instructor/solution.py"  # performance: timed beside the submission
    full_at = 0.5                   # performance: all points at 0.5x the reference's speed,
    zero_at = 0.1                   # none at 0.1x, a straight line between (grade.py)
    visibility = "visible"          # Gradescope's: visible, hidden, after_due_date, ...
    backends = ["triton"]           # only these variants take the test (default: every one)
"""
from __future__ import annotations

import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
# in a checkout labs/ is beside bench/; pip install puts it in bench/labs/ (build_backend.py)
LABS_DIR = _PACKAGE / "labs" if (_PACKAGE / "labs").is_dir() else _PACKAGE.parent / "labs"
KINDS = ("correct", "traffic", "performance")
VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")
STUDENT_FILES = ("README.md", "starter.py", "starter.cu",    # those the lab has
                 "cvt_lab_mma.cuh")


class LabError(ValueError):
    """A lab, a test file or an argument that cannot be used (one line: what and why)."""


@dataclass
class LabTest:
    name: str
    points: float
    shapes: list[str]
    precisions: list[str] = field(default_factory=lambda: ["fp32"])
    kind: str = "correct"
    calls: int = 2          # fresh inputs each: a second call catches a cached output
    hint: str = ""
    cuda_hint: str = ""     # the CUDA variant's hint, where it differs
    visibility: str = "visible"
    max_loads: str = ""
    max_stores: str = ""
    tolerance: float = 0.0
    backends: list[str] = field(default_factory=list)   # empty: every variant of the lab
    reference: str = ""     # performance: a file of the lab's folder ("" = the variant's solution)
    full_at: float = 0.5    # performance: all points at this ratio (reference time / yours)
    zero_at: float = 0.1    # performance: no points at or below this ratio


@dataclass
class LabTests:
    tests: list[LabTest]


@dataclass
class Bug:
    """A planted bug (instructor/bugs.toml): the solution with `replace` changed to `with_`,
    the tests it must fail, and a phrase the reason of each must contain. Where a GPU
    grades it otherwise (a traffic bug the compiler undoes: the hardware never issues the
    load that the source repeats), gpu_fails lists the tests it fails there and gpu_why
    says why."""
    name: str
    why: str
    replace: str
    with_: str
    fails: list[str]
    says: str
    file: str = "solution.py"       # or solution.cu: a bug of the CUDA variant
    gpu_fails: list[str] | None = None
    gpu_why: str = ""

    def fails_on(self, device: str) -> list[str]:
        return self.fails if device != "cuda" or self.gpu_fails is None else self.gpu_fails

    @property
    def suffix(self) -> str:
        return Path(self.file).suffix

    def source(self, lab: "Lab") -> str:
        """The solution with this bug in it, its first comment saying so."""
        solution = (lab.instructor / self.file).read_text()
        if solution.count(self.replace) != 1:
            raise LabError(f"{lab.instructor / 'bugs.toml'}: bug {self.name}: its `replace` "
                           f"text is not in {self.file} exactly once")
        body = solution.replace(self.replace, self.with_, 1)
        if self.suffix == ".cu":
            return f"// Planted bug: {self.why}.\n{body}"
        rest = body.split("\n", 1)[1] if body.startswith('"""') else body
        return f'"""Planted bug: {self.why}."""\n{rest}'


def bugs(lab: "Lab") -> list[Bug]:
    path = lab.instructor / "bugs.toml"
    if not path.is_file():
        return []
    try:
        entries = tomllib.loads(path.read_text()).get("bugs", [])
        found = [Bug(**{("with_" if k == "with" else k): v for k, v in e.items()})
                 for e in entries]
    except (tomllib.TOMLDecodeError, TypeError) as exc:
        raise LabError(f"{path}: {exc}") from None
    names = {t.name for t in lab.tests}
    for bug in found:
        unknown = [f for f in bug.fails + (bug.gpu_fails or []) if f not in names]
        if unknown:
            raise LabError(f"{path}: bug {bug.name} must fail {unknown}, which are no tests "
                           f"of lab {lab.number}")
        if (bug.gpu_fails is None) != (not bug.gpu_why):
            raise LabError(f"{path}: bug {bug.name}: gpu_fails and gpu_why come together "
                           f"(the tests it fails on a GPU, and why they differ)")
    return found


@dataclass
class Lab:
    number: int
    slug: str
    title: str
    op: str
    function: str
    backend: str
    folder: Path
    timeout: float = 120.0
    tests: list[LabTest] = field(default_factory=list)
    fresh: list[str] = field(default_factory=list)   # arguments drawn anew per call (seed)
    random_stream: str = ""                           # the mask checked element by element
    cuda: dict = field(default_factory=dict)          # the CUDA variant: signature, output

    @property
    def instructor(self) -> Path:
        return self.folder / "instructor"

    @property
    def backends(self) -> list[str]:
        if self.backend == "cuda":        # a lab in CUDA alone (lab 6)
            return ["cuda"]
        return [self.backend] + (["cuda"] if self.cuda else [])

    def backend_of(self, path) -> str:
        """The variant a submission file is: .cu is the CUDA one, .py the lab's backend."""
        suffix = Path(path).suffix
        if suffix == ".cu":
            if not self.cuda:
                raise LabError(f"lab {self.number} has no CUDA variant: hand in a .py file")
            return "cuda"
        if suffix != ".py" or self.backend == "cuda":
            takes = {("triton", False): "a .py file", ("triton", True): "a .py or a .cu file",
                     ("cuda", True): "a .cu file"}.get((self.backend, bool(self.cuda)),
                                                         "a .py file")
            raise LabError(f"{Path(path).name}: lab {self.number} takes {takes}")
        return self.backend

    def tests_for(self, backend: str, tests=None) -> list[LabTest]:
        return [t for t in (self.tests if tests is None else tests)
                if not t.backends or backend in t.backends]

    def solution(self, backend: str) -> Path:
        return self.instructor / ("solution.cu" if backend == "cuda" else "solution.py")

    def reference(self, test: LabTest, backend: str) -> Path:
        """The file a performance test times the submission against."""
        path = self.folder / test.reference if test.reference else self.solution(backend)
        if not path.is_file():
            raise LabError(f"lab {self.number}: test {test.name}: no reference file {path}")
        return path

    def starter(self, backend: str) -> Path:
        return self.folder / ("starter.cu" if backend == "cuda" else "starter.py")


def _tests(entries, where: str) -> list[LabTest]:
    out = []
    for i, entry in enumerate(entries):
        try:
            test = LabTest(**entry)
        except TypeError as exc:
            raise LabError(f"{where}: test {i + 1}: {exc}") from None
        if test.kind not in KINDS:
            raise LabError(f"{where}: test {test.name}: kind must be one of {', '.join(KINDS)}")
        if test.visibility not in VISIBILITY:
            raise LabError(f"{where}: test {test.name}: visibility must be one of "
                           f"{', '.join(VISIBILITY)}")
        if test.kind == "performance" and not 0 <= test.zero_at < test.full_at:
            raise LabError(f"{where}: performance test {test.name}: 0 <= zero_at < full_at")
        if test.kind == "traffic" and not (test.max_loads or test.max_stores):
            raise LabError(f"{where}: traffic test {test.name} gives no max_loads or max_stores")
        out.append(test)
    return out


def load(folder: Path) -> Lab:
    where = folder / "lab.toml"
    try:
        spec = tomllib.loads(where.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LabError(f"{where}: {exc}") from None
    tests = _tests(spec.pop("tests", []), str(where))
    try:
        lab = Lab(folder=folder, tests=tests, **spec)
    except TypeError as exc:
        raise LabError(f"{where}: {exc}") from None
    if lab.cuda and "signature" not in lab.cuda:
        raise LabError(f"{where}: [cuda] gives no signature")
    return lab


def hidden_tests(path: Path) -> LabTests:
    """The tests of an instructor's file (hidden.toml: [[tests]] entries)."""
    try:
        spec = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LabError(f"{path}: {exc}") from None
    return LabTests(_tests(spec.get("tests", []), str(path)))


def all_labs() -> list[Lab]:
    return [load(d) for d in sorted(LABS_DIR.glob("[0-9][0-9]_*")) if (d / "lab.toml").is_file()]


def get(number: int | str) -> Lab:
    labs = {str(lab.number): lab for lab in all_labs()}
    key = str(int(number)) if str(number).isdigit() else str(number)
    if key not in labs:
        by_slug = {lab.slug: lab for lab in labs.values()}
        if key in by_slug:
            return by_slug[key]
        raise LabError(f"no lab {number}: the labs are {', '.join(sorted(labs, key=int))} "
                       f"(cvt-bench lab list)")
    return labs[key]


def start(lab: Lab, into: Path) -> list[Path]:
    """Copies the student's files of `lab` into `into` (made if missing), never over a file
    that exists there; returns the files written."""
    into = Path(into)
    targets = [(lab.folder / name, into / name) for name in STUDENT_FILES
               if (lab.folder / name).is_file()]
    clash = [str(t) for _s, t in targets if t.exists()]
    if clash:
        raise LabError(f"{', '.join(clash)} exists already: nothing copied (start in an empty "
                       f"folder, or move the file)")
    into.mkdir(parents=True, exist_ok=True)
    for source, target in targets:
        shutil.copyfile(source, target)
    return [t for _s, t in targets]
