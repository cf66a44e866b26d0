"""Grading one submission of a lab: `cvt-bench grade N FILE` (bench/grading/__init__.py).

The grader owns everything a score depends on: the inputs (fresh random seeds on every call,
drawn here), the float64 reference and the tolerance (bench's problems), and the verdict.
The submission runs in a process of its own (bench/grading/sandbox.py) and hands back only
its outputs, what it launched and what torch ops it tried; a submission that hangs past the
stated time or kills its process scores 0 for that test with the reason, and the next test
starts a fresh process.

A call passes when:
    - it raised nothing and computed with no torch op (guard.py: the op is named);
    - it launched at least one Triton kernel, every one defined in the submission's own file
      (a launch of this suite's kernels is named);
    - it left its inputs as they were, and did not hand back the previous call's output;
    - its output has the expected shape and dtype and is within the problem's tolerance of
      the float64 reference (bench/problems: the same check as `bench check`).
    - on the CPU, its kernels stored at least as many elements as the output has (the
      Triton interpreter counts them, bench/counted.py; for a .cu file the CUDA emulator,
      bench/grading/cuda_lab.py): an output computed some other way, with numpy or in the
      host function, is not the kernel's.
A correctness test passes when all its calls pass: its points, else 0. A traffic test
(kind = "traffic") also compares the counted loads and stores with the lab's bound. On a
GPU Nsight Compute counts them, in a second process run under ncu (counters.py,
run_traffic_on_gpu); on a CPU, or a GPU machine where ncu cannot count (no ncu, no access
to the counters, `cvt-bench grade --count-on-cpu`), the Triton interpreter or the CUDA emulator
counts them, in a process that does not see the GPU, and the test says so. A performance test (kind = "performance",
GPU) times the submission beside a reference: run_performance.
"""
from __future__ import annotations

import io
import json
import math
import os
import re
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from bench.grading import guard, labs as labs_mod
from bench.grading.sandbox import CHANGED_INPUTS, SAME_OUTPUT, read_message, write_message

ROOT = Path(__file__).resolve().parents[2]
MAX_ANSWER_BYTES = 1 << 34    # an answer's size as its header says: 16 GiB at most
ENDED = "its process ended"    # the start of Sandbox's answer when its process is gone
ERROR_LINE = re.compile(r"[\w.]*(Error|Exception|Interrupt)\b[^ ]*: ")   # "RuntimeError: ..."


@dataclass
class TestResult:
    name: str
    points: float
    score: float
    output: str
    visibility: str = "visible"
    status: str = "passed"        # passed, failed, not run


@dataclass
class Graded:
    lab: labs_mod.Lab
    submission: str
    tests: list[TestResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.points for t in self.tests if t.status != "not run")


class Sandbox:
    """The submission's process (sandbox.py), restarted after it hangs or dies."""

    def __init__(self, path: Path, function: str, timeout: float, spec: dict | None = None,
                 cpu: bool = False, prefix: list[str] | None = None):
        self.path, self.function, self.timeout = path, function, timeout
        self.spec = spec or {}          # a .cu file's: {"op", "cuda": lab.toml's [cuda]}
        self.cpu = cpu                  # hide the GPU: the Triton interpreter, the emulator
        self.prefix = prefix or []      # a program it runs under (counters.py: ncu)
        self.proc = None
        self.load_error = ""
        self.stderr = None
        self.tmpdir = None              # the process's TMPDIR, removed when it is stopped

    def start(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        if self.cpu:
            env["CUDA_VISIBLE_DEVICES"] = ""
        # a process that ended of itself (_answer) left its folder: this start makes another
        self._remove_tmpdir()
        # the process is killed, so no cleanup of its own runs (cuda_lab's build folder, what
        # the submission writes): its temporary files go to a folder the grader removes
        self.tmpdir = tempfile.mkdtemp(prefix="cvt_sandbox_")
        tmp = {name: self.tmpdir for name in ("TMPDIR", "TEMP", "TMP")}
        # a program it runs under is given them through `env`, not itself: ncu keeps the
        # grader's TMPDIR, where its lock file serializes profiling across processes
        if self.prefix:
            under = [*self.prefix, "env", *(f"{k}={v}" for k, v in tmp.items())]
        else:
            under = []
            env.update(tmp)
        # the submission's prints go to a file: a pipe nobody reads would fill and block it
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [*under, sys.executable, "-m", "bench.grading.sandbox", str(self.path),
             self.function, json.dumps(self.spec)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0,
            cwd=str(self.path.parent), env=env, start_new_session=True)
        answer = self._answer(max(self.timeout, 120.0))
        self.load_error = answer if isinstance(answer, str) else answer.get("error", "")
        if self.load_error:
            self.stop()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc is not None:
            self.proc.wait()
        self.proc = None
        self._remove_tmpdir()

    def _remove_tmpdir(self) -> None:
        if self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def finish(self, seconds: float) -> None:
        """Its requests' end: the process ends of itself (a program it runs under writes
        what it collected), or is stopped after `seconds`."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=seconds)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.stop()

    def _stderr_tail(self) -> str:
        """The error the process printed last: the last line naming an exception
        ("torch.AcceleratorError: CUDA error: ...", not the advice torch prints after it),
        else its last line."""
        try:
            self.stderr.seek(0)
            tail = self.stderr.read().decode(errors="replace").strip().splitlines()
        except (OSError, ValueError, AttributeError):
            tail = []
        errors = [line for line in tail if ERROR_LINE.match(line)]
        return (errors or tail or [""])[-1][:200]

    def _read(self, n: int, deadline: float) -> bytes | None:
        """Exactly n bytes of the answers' pipe before `deadline`; b"" at its end (the
        process ended), None past the deadline (a hang, also one in the middle of a message)."""
        fd, parts, got = self.proc.stdout.fileno(), [], 0
        while got < n:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0.0))
            if not ready:
                return None
            chunk = os.read(fd, min(n - got, 1 << 20))
            if not chunk:
                return b""
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def _send(self, request: dict, deadline: float) -> bool:
        """The request, whole, before `deadline` (False: not taken in time, or the process
        is gone): a process that stops reading its requests cannot block the grader."""
        buf = io.BytesIO()
        write_message(buf, request)
        data, fd = memoryview(buf.getvalue()), self.proc.stdin.fileno()
        while data:
            _, ready, _ = select.select([], [fd], [], max(deadline - time.monotonic(), 0.0))
            if not ready:
                return False
            try:
                data = data[os.write(fd, data[:1 << 16]):]
            except (BrokenPipeError, OSError):
                return False
        return True

    def _answer(self, seconds: float):
        """The next message, or why there is none (a string)."""
        deadline = time.monotonic() + seconds
        head = self._read(8, deadline)
        body = b""
        if head and len(head) == 8:
            (size,) = struct.unpack("<Q", head)
            if size > MAX_ANSWER_BYTES:
                self.stop()
                return f"an answer of {size} bytes (more than {MAX_ANSWER_BYTES}): refused"
            body = self._read(size, deadline)
        if head is None or body is None:
            self.stop()
            return f"no answer within {seconds:g} s: stopped (a hang, or far too slow)"
        if not head or not body and size:
            code = self.proc.wait()
            why = (f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}")
            tail = self._stderr_tail()
            self.proc = None
            return f"{ENDED} ({why})" + (f": {tail}" if tail else "")
        try:
            return read_message(io.BytesIO(head + body))
        except Exception as exc:        # bytes that are no message of the sandbox's
            self.stop()
            return f"an answer the grader cannot read ({type(exc).__name__}): refused"

    def call(self, request: dict):
        if self.load_error:
            return self.load_error
        if self.proc is None:
            self.start()
            if self.load_error:
                return self.load_error
        request["nonce"] = secrets.token_hex(8)
        if not self._send(request, time.monotonic() + self.timeout):
            return self._answer(1.0)      # why it stopped reading: it ended, or it hangs
        answer = self._answer(self.timeout)
        if isinstance(answer, dict) and answer.get("nonce") != request["nonce"]:
            self.stop()
            return "its answer did not come from the grader's own call (a forged message)"
        return answer


def _same(a, b) -> bool:
    """The same shape, dtype and values, NaN equal to NaN."""
    import torch

    return (a.shape == b.shape and a.dtype == b.dtype
            and torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))


def _judge_call(problem, lab, shape, precision, inputs, answer, path: Path,
                backend: str) -> str:
    """'' when the call passes, else why not (one line, for the student)."""
    import torch

    if isinstance(answer, str):
        return answer
    if answer["error"]:
        return answer["error"]
    if answer["refused"]:
        return f"computed with torch ops ({', '.join(sorted(set(answer['refused'])))})"
    if answer["same_output"]:
        return SAME_OUTPUT
    own = str(path.resolve())
    launches = answer["launches"]
    empty = answer["out"] is not None and answer["out"].numel() == 0
    if not launches and not empty:
        return (f"launched no {'CUDA' if backend == 'cuda' else backend} kernel: the lab "
                f"asks for a kernel of your own")
    for kernel, file in launches:
        if file == own:
            continue
        if file.startswith(guard.SUITE_DIRS):
            return f"launched this suite's own kernel {kernel} ({Path(file).name})"
        if file != own:
            return f"launched {kernel} from {file}: a lab's kernels live in the file handed in"
    for before, after in zip(inputs, answer["inputs_after"]):
        if isinstance(before, torch.Tensor) and not _same(before, after):
            return CHANGED_INPUTS
    counted = answer["counted"] or {}
    if counted.get("outside_stores"):       # the CUDA emulator's bounds check (counted.cuh)
        return (f"stored {counted['outside_stores']} elements outside every tensor it was "
                f"given at {shape}, the first {counted['first_outside_store']}: a store "
                f"needs the same bounds check as its loads (on a GPU it would overwrite "
                f"memory that is not the output's)")
    out = answer["out"]
    judged = SimpleNamespace(random_stream=lab.random_stream, name=lab.slug)
    try:
        err = problem.error(out, inputs, precision=precision, kernel=judged)
    except Exception as exc:
        return f"its output cannot be compared: {type(exc).__name__}: {exc}"
    if out.is_floating_point() and bool(out.isnan().any()):
        bad = out.isnan().flatten().nonzero().flatten()
        note = answer.get("note") or ""
        return (f"{bad.numel()} of {out.numel()} elements are NaN at {shape} {precision}, the "
                f"first at flat index {int(bad[0])}: "
                + (note or "never written (the grader fills outputs with NaN before the "
                           "call), or computed from reads past the inputs"))
    stored = counted.get("stores")
    if stored is not None and not counted.get("escapes") and stored < out.numel():
        return (f"its kernels stored {stored} elements and the output has {out.numel()}: "
                f"the output must be written by the kernel")
    if math.isinf(err):
        return _infinitely_wrong(problem, lab, shape, precision, inputs, out, judged)
    tol = problem.tolerance(shape, precision)
    if not (err <= tol):
        note = answer.get("note") or ""
        return (f"wrong at {shape} {precision}: error {err:.3g} where at most {tol:.3g} "
                f"passes" + (f"; {note}" if note else ""))
    return ""


def _infinitely_wrong(problem, lab, shape, precision, inputs, out, judged) -> str:
    """Why an output is infinitely far from the reference: its shape or dtype, elements
    beyond any rounding (a random op's mask: not the stream under the call's seed), or a
    property of the whole output (a random op's keep rate)."""
    where = f"at {shape} {precision}"
    try:
        emap = problem.error_map(out, inputs, precision=precision, kernel=judged)
    except Exception:
        emap = None
    if emap is None:
        return (f"its output ({tuple(out.shape)}, {out.dtype}) {where} is not the shape or "
                f"dtype expected")
    bad = (emap == math.inf).flatten().nonzero().flatten()
    if bad.numel():
        stream = (f": a kept element the reference drops, or the other way (the mask is not "
                  f"the {lab.random_stream} stream under the call's seed), or a negative "
                  f"input kept" if lab.random_stream else "")
        return (f"{bad.numel()} of {out.numel()} elements {where} are wrong beyond any "
                f"rounding, the first at flat index {int(bad[0])}{stream}")
    whole = getattr(problem, "whole_output_error", None)
    why = whole(out, inputs, precision=precision, kernel=judged) if whole else ""
    return f"{where}: {why or 'infinitely far from the reference'}"


def _bound(expr: str, shape) -> float:
    names = {k: getattr(shape, k) for k in ("M", "N", "K", "n") if hasattr(shape, k)}
    if hasattr(shape, "dims"):
        names["n"] = math.prod(shape.dims)
    return float(eval(expr, {"__builtins__": {}, "ceil": math.ceil}, names))  # noqa: S307


# ---------------------------------------------------------------------------------------
# Performance tests (kind = "performance"): the submission against a reference, both timed
# here, in alternating rounds, by this process's clock
# ---------------------------------------------------------------------------------------

TIMING_ROUNDS = 5
LOOP_SECONDS = 0.03           # each round's loop: at least this long, where memory allows
SET_BUDGET_BYTES = 2 << 30    # the distinct input sets (and their outputs) of one loop
MAX_SETS = 2000


def speed_credit(ratio: float, full_at: float, zero_at: float) -> float:
    """The share of a performance test's points at `ratio` = reference time / yours: all of
    them at full_at or above, none at zero_at or below, a straight line between."""
    if not ratio > zero_at:
        return 0.0
    if ratio >= full_at:
        return 1.0
    return (ratio - zero_at) / (full_at - zero_at)


class _Timed:
    """One side of a performance test: its sandbox and the grader's clock around a loop."""

    def __init__(self, box: Sandbox, request: dict):
        self.box, self.request = box, request

    def _stage(self, stage: str, **extra):
        answer = self.box.call({**self.request, "time": {"stage": stage, **extra}})
        if isinstance(answer, str):
            return answer
        return answer["error"] or answer

    def prepare(self, seed: int, sets: int, fresh) -> str:
        answer = self._stage("prepare", seed=seed, sets=sets, fresh=list(fresh))
        return answer if isinstance(answer, str) else ""

    def loop_seconds(self, ping: float) -> float | str:
        started = time.perf_counter()
        answer = self._stage("run")
        took = time.perf_counter() - started
        return answer if isinstance(answer, str) else max(took - ping, 1e-9)

    def ping(self) -> float:
        best = math.inf
        for _ in range(5):
            started = time.perf_counter()
            self._stage("ping")
            best = min(best, time.perf_counter() - started)
        return best

    def sample(self, k: int):
        return self._stage("sample", k=k)


def _set_bytes(problem, shape, precision) -> int:
    """Bytes of one input set and its output."""
    import torch

    inputs = problem.inputs(shape, precision, seed=0, device="cpu")
    return problem.output_nbytes(shape, precision) + sum(
        x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))


def run_performance(test, lab, box: Sandbox, ref_box: Sandbox, backend: str, base: dict,
                    hint: str) -> TestResult:
    """The submission and the reference (test.reference, a file of the lab's), each on the
    same fresh input sets, in TIMING_ROUNDS alternating rounds; score by speed_credit on the
    ratio of the medians. Two outputs of the submission's last loop, picked afterwards, are
    checked against float64 first: a fast wrong answer scores 0."""
    from bench import problems

    problem = problems.get(lab.op)
    lines, shares = [], []
    for text in test.shapes:
        shape = problem.parse_shape(text)
        precision = test.precisions[0]
        request = {"op": lab.op, "shape": shape, "precision": precision, "backend": backend}
        sides = {"yours": _Timed(box, request), "reference": _Timed(ref_box, request)}
        ping = min(side.ping() for side in sides.values())
        seed = secrets.randbits(30)
        per_call = {}
        for name, side in sides.items():          # a short loop first: how long is a call
            why = side.prepare(seed, 3, lab.fresh) or ""
            took = side.loop_seconds(ping) if not why else why
            if isinstance(took, str):
                whose = "" if name == "yours" else " (the reference's: tell the instructor)"
                return TestResult(**base, score=0.0, status="failed",
                                  output=f"{text}: {took}{whose}{hint}")
            per_call[name] = took / 3
        by_memory = max(SET_BUDGET_BYTES // max(_set_bytes(problem, shape, precision), 1), 3)
        sets = int(min(MAX_SETS, by_memory,
                       max(3, math.ceil(LOOP_SECONDS / max(min(per_call.values()), 1e-7)))))
        seed = secrets.randbits(30)
        for side in sides.values():
            why = side.prepare(seed, sets, lab.fresh)
            if why:
                return TestResult(**base, score=0.0, status="failed", output=f"{text}: {why}")
        times = {name: [] for name in sides}
        for _ in range(TIMING_ROUNDS):
            for name, side in sides.items():
                took = side.loop_seconds(ping)
                if isinstance(took, str):
                    return TestResult(**base, score=0.0, status="failed",
                                      output=f"{text}: {took}{hint}")
                times[name].append(took / sets)
        judged = SimpleNamespace(random_stream=lab.random_stream, name=lab.slug)
        for k in sorted({secrets.randbelow(sets), sets - 1}):
            got = sides["yours"].sample(k)
            if isinstance(got, str):
                return TestResult(**base, score=0.0, status="failed", output=f"{text}: {got}")
            err = problem.error(got["out"], got["inputs"], precision=precision, kernel=judged)
            tol = problem.tolerance(shape, precision)
            if not err <= tol:
                return TestResult(**base, score=0.0, status="failed",
                                  output=f"{text}: the timed loop's output for input set {k} "
                                         f"is wrong (error {err:.3g}, at most {tol:.3g} "
                                         f"passes): a fast wrong answer scores nothing{hint}")
        for side in sides.values():
            side._stage("free")
        mine = sorted(times["yours"])[len(times["yours"]) // 2]
        ref = sorted(times["reference"])[len(times["reference"]) // 2]
        ratio = ref / mine
        share = speed_credit(ratio, test.full_at, test.zero_at)
        shares.append(share)
        lines.append(f"{text} {precision}: yours {mine * 1e3:.4g} ms, the reference "
                     f"({ref_box.path.name}) {ref * 1e3:.4g} ms: {ratio:.2f}x its speed; "
                     f"{share * test.points:.3g} of {test.points:g} points (all at "
                     f">= {test.full_at:g}x, none at <= {test.zero_at:g}x, a line between)")
        lines.append(f"(median of {TIMING_ROUNDS} alternating rounds, each {sets} calls on "
                     f"distinct inputs, timed by the grader's clock)")
    score = round(test.points * sum(shares) / max(len(shares), 1), 3)   # the shapes' mean
    return TestResult(**base, score=score, status="passed" if score == test.points else "failed",
                      output="\n".join(lines) + (hint if score < test.points else ""))


def _base_and_hint(test, backend: str) -> tuple[dict, str]:
    """A test result's fixed fields, and the author's hint for this backend ('' or a line)."""
    hint = test.cuda_hint if backend == "cuda" and test.cuda_hint else test.hint
    return (dict(name=test.name, points=test.points, visibility=test.visibility),
            f"\nhint: {hint}" if hint else "")


def run_test(test: labs_mod.LabTest, lab, box: Sandbox, path: Path, device: str,
             backend: str = "", ref_box: Sandbox | None = None) -> TestResult:
    from bench import problems

    problem = problems.get(lab.op)
    backend = backend or lab.backend
    base, hint = _base_and_hint(test, backend)
    if test.kind == "traffic" and device == "cuda":
        # where Nsight Compute could not count (grade: _traffic_on_gpu), the CPU counts,
        # in a box that does not see the GPU
        device = "cpu"
    if test.kind == "performance" and device != "cuda" and not os.environ.get(
            "CVT_LAB_TIME_ON_CPU"):      # (the CPU tier's test of the timing itself)
        return TestResult(**base, score=0.0, status="not run", output="needs a GPU")
    if test.kind == "performance":
        return run_performance(test, lab, box, ref_box, backend, base, hint)
    lines = []
    for shape, precision, inputs in _calls_of(test, problem, lab):
        answer = box.call({"inputs": list(inputs), "op": lab.op, "shape": shape,
                           "precision": precision, "backend": lab.backend})
        why = _judge_call(problem, lab, shape, precision, inputs, answer, path, backend)
        if why:
            return TestResult(**base, score=0.0, status="failed", output=why + hint)
        if test.kind == "traffic":
            got = answer["counted"] or {}
            if got.get("escapes"):
                return TestResult(
                    **base, score=0.0, status="failed",
                    output=f"{shape}: {got['escapes']} raw pointers taken from the kernel's "
                           f"arguments (&p[i], a cast, or `T* q = p + i`): accesses through "
                           f"them are not counted, so the traffic cannot be graded; index "
                           f"the arguments (p[i]), or keep `auto q = p + i`")
            why = _over_bound(test, shape, got, lines, "counted")
            if why:
                return TestResult(**base, score=0.0, status="failed", output=why + hint)
    return TestResult(**base, score=test.points, status="passed",
                      output="\n".join(lines) or "every call within tolerance")


def _calls_of(test, problem, lab):
    """(shape, precision, inputs) of each call of a test: fresh inputs from fresh seeds."""
    for text in test.shapes:
        shape = problem.parse_shape(text)
        for precision in test.precisions:
            for _ in range(test.calls):
                inputs = list(problem.inputs(shape, precision, seed=secrets.randbits(31),
                                             device="cpu"))
                names = [name for name, _ in problem.arguments]
                for name in lab.fresh:        # e.g. dropout's seed: a new mask every call
                    inputs[names.index(name)] = secrets.randbits(31)
                yield shape, precision, inputs


def _over_bound(test, shape, got: dict, lines: list, how: str) -> str:
    """'' when got's loads and stores are within the test's bounds (a line each added to
    lines), else lines and which bound was passed."""
    for what in ("loads", "stores"):
        limit = getattr(test, f"max_{what}")
        if not limit:
            continue
        bound = _bound(limit, shape)
        n = got.get(what, 0)
        lines.append(f"{shape} {what}: {n:.0f} {how}, bound {limit} = {bound:.0f}")
        if n > bound * (1 + test.tolerance):
            return "\n".join(lines) + f"\nmore {what} than the bound"
    return ""


def run_traffic_on_gpu(test, lab, box: Sandbox, workdir: Path, path: Path,
                       backend: str) -> TestResult | str:
    """A traffic test counted by Nsight Compute (counters.py): box runs under ncu, each call
    is judged as any other, and the counts are read from ncu's report once box has ended.
    A string: why ncu counted nothing (the grader then counts on the CPU): no report, or the
    process under ncu ended or hung (on the H200, one of 14 such processes running at once
    ended with exit status 9 where the same call alone was counted and judged)."""
    from bench import problems
    from bench.grading import counters, cuda_lab

    problem = problems.get(lab.op)
    base, hint = _base_and_hint(test, backend)
    made = []
    try:
        for shape, precision, inputs in _calls_of(test, problem, lab):
            answer = box.call({"inputs": list(inputs), "op": lab.op, "shape": shape,
                               "precision": precision, "backend": lab.backend,
                               "profile": True})
            if isinstance(answer, str):   # the process under ncu ended or hung: the CPU
                return f"under Nsight Compute, {answer}"      # counts (and judges) again
            why = _judge_call(problem, lab, shape, precision, inputs, answer, path, backend)
            if why:
                return TestResult(**base, score=0.0, status="failed", output=why + hint)
            tensors = [x for x in inputs if hasattr(x, "element_size")]
            made.append((shape, tensors[0].element_size(), answer["out"]))
    finally:
        box.finish(seconds=max(box.timeout, 60.0))
    profiled = counters.calls(workdir)
    if isinstance(profiled, str):
        return profiled
    if len(profiled) != len(made):
        return f"Nsight Compute profiled {len(profiled)} of the test's {len(made)} calls"
    own = set(cuda_lab.kernel_names(path.read_text())) if backend == "cuda" else None
    lines = []
    for (shape, in_size, out), got in zip(made, profiled):
        if out.numel() == 0:
            continue
        if not got["kernels"]:
            return TestResult(**base, score=0.0, status="failed",
                              output=f"{shape}: no kernel ran in the profiled call" + hint)
        strangers = sorted(set(got["kernels"]) - own) if own is not None else []
        if strangers:
            return TestResult(**base, score=0.0, status="failed",
                              output=f"{shape}: the profiled call ran kernels that are not "
                                     f"the file's: {', '.join(strangers)}" + hint)
        counted = {"loads": got["load_bytes"] / in_size,
                   "stores": got["store_bytes"] / out.element_size()}
        if counted["stores"] < out.numel():
            return TestResult(**base, score=0.0, status="failed",
                              output=f"{shape}: its kernels stored {counted['stores']:.0f} "
                                     f"elements (Nsight Compute) and the output has "
                                     f"{out.numel()}: the output must be written by the "
                                     f"kernel" + hint)
        why = _over_bound(test, shape, counted, lines, "counted by Nsight Compute")
        lines.append(f"{shape} DRAM: {got['dram_read_bytes']:.0f} bytes read, "
                     f"{got['dram_write_bytes']:.0f} written (not graded)")
        if why:
            return TestResult(**base, score=0.0, status="failed", output=why + hint)
    return TestResult(**base, score=test.points, status="passed",
                      output="\n".join(lines + ["(loads: bytes the load instructions and "
                                                 "cp.async asked for, in input elements)"]))


def _traffic_on_gpu(test, lab, submission: Path, backend: str, spec, timeout: float,
                    count_on_cpu: bool = False):
    """A traffic test on a GPU: counted by Nsight Compute in a sandbox of its own, or why
    not (no ncu here, no counters for this user: the caller counts on the CPU)."""
    from bench.grading import counters

    if count_on_cpu:           # the source's requests, not the compiled kernel's (labs.md)
        return "--count-on-cpu was given"
    # A process under ncu that ends is given one more sandbox before the CPU counts: with
    # many processes under ncu at once, one may end where it runs alone (labs.md)
    for _ in range(2):
        with tempfile.TemporaryDirectory(prefix="cvt_ncu_") as workdir:
            command = counters.command(Path(workdir))
            if command is None:
                return "no Nsight Compute (ncu) on this machine"
            # ncu replays each profiled kernel: the calls take longer than the lab's timeout
            box = Sandbox(submission, lab.function, 3 * timeout, spec, prefix=command)
            try:
                graded = run_traffic_on_gpu(test, lab, box, Path(workdir), submission, backend)
            finally:
                box.stop()
        if not (isinstance(graded, str) and ENDED in graded):
            return graded
    return graded + " (twice)"


def grade(lab: labs_mod.Lab, submission: Path, hidden: labs_mod.LabTests | None = None,
          timeout: float | None = None, count_on_cpu: bool = False) -> Graded:
    """Every test of the lab (and of `hidden`) against one submission file; count_on_cpu:
    traffic tests counted on the CPU even where a GPU and ncu are."""
    from bench import device as dev

    device = "cuda" if dev.has_gpu() else "cpu"
    submission = Path(submission).resolve()
    backend = lab.backend_of(submission)
    result = Graded(lab, str(submission))
    spec = ({"op": lab.op, "cuda": {**lab.cuda, "include": str(lab.folder)}}
            if backend == "cuda" else None)
    box = Sandbox(submission, lab.function, timeout or lab.timeout, spec)
    refs: dict[str, Sandbox] = {}        # performance tests' references, one process each
    cpu_box = None                       # traffic tests on a GPU machine: counted on the CPU
    try:
        tests = lab.tests_for(backend, [*lab.tests, *(hidden.tests if hidden else [])])
        for test in tests:
            started = time.monotonic()
            ref_box, test_box = None, box
            counted_why = ""           # why Nsight Compute did not count a traffic test
            if test.kind == "traffic" and device == "cuda":
                graded = _traffic_on_gpu(test, lab, submission, backend, spec,
                                         timeout or lab.timeout, count_on_cpu)
                if not isinstance(graded, str):
                    result.tests.append(graded)
                    result.tests[-1].output += f"\n({time.monotonic() - started:.1f} s)"
                    continue
                counted_why = f"\n(counted on the CPU: {graded})"
                if cpu_box is None:
                    cpu_box = Sandbox(submission, lab.function, timeout or lab.timeout, spec,
                                      cpu=True)
                test_box = cpu_box
            if test.kind == "performance":
                ref = lab.reference(test, backend)
                if str(ref) not in refs:
                    refs[str(ref)] = Sandbox(ref, lab.function, timeout or lab.timeout, spec)
                ref_box = refs[str(ref)]
            result.tests.append(run_test(test, lab, test_box, submission, device, backend,
                                         ref_box))
            result.tests[-1].output += f"{counted_why}\n({time.monotonic() - started:.1f} s)"
    finally:
        box.stop()
        for other in [*refs.values(), cpu_box]:
            if other is not None:
                other.stop()
    return result
