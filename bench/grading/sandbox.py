"""The process a submission runs in: `python -m bench.grading.sandbox FILE FUNCTION`.

The grader (bench/grading/grade.py) starts one per submission and talks to it through two
pipes: requests on this process's stdin, answers on the descriptor that was its stdout,
which this module moves aside before the submission is imported (the submission's prints
go to stderr). Each message is a length-prefixed torch.save of a dict:

    request   {"nonce", "inputs": [tensors, on the CPU], "op", "shape", "precision",
               "backend"}
    answer    {"nonce", "out": the output on the CPU or None, "inputs_after": the inputs as
               the call left them, "refused": torch ops refused, "launches": [(kernel,
               file)], "error": why the call raised, "counted": {loads, stores, ...} (on the CPU,
               where the Triton interpreter runs the kernels: bench/counted.py),
               "same_output": whether the output is the previous call's storage,
               "note": where a wrong output is wrong (the harness's pattern report)}

Nothing here decides a score: the grader checks the output against its own float64
reference, in its own process, with its own tolerance. A submission that patches the
harness at import changes this process only.
"""
from __future__ import annotations

import io
import os
import struct
import sys
import traceback
from pathlib import Path

# what the grader says of two cheats, found by a correctness call (grade._judge_call) or by
# a performance test's timed loop (_Timing)
SAME_OUTPUT = "returned the previous call's output tensor (outputs are allocated per call)"
CHANGED_INPUTS = "changed its inputs (a kernel reads A and B, it writes only its output)"


def read_message(stream):
    """One message from a binary stream, or None at its end."""
    import torch

    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    body = stream.read(size)
    if len(body) < size:
        return None
    return torch.load(io.BytesIO(body), weights_only=False)


def write_message(stream, message) -> None:
    import torch

    buf = io.BytesIO()
    torch.save(message, buf)
    data = buf.getvalue()
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _load(path: str, function: str, cuda_spec: dict | None = None, op: str = ""):
    """(module, function) of a Python submission; of a .cu file (cuda_lab.py), (None, the
    student's host function wrapped as a function of the op's tensors)."""
    from bench.plugins import import_file

    if path.endswith(".cu"):
        from bench import device as dev, problems
        from bench.grading import cuda_lab

        names = [name for name, _ in problems.get(op).arguments]
        fn = cuda_lab.CudaFunction(Path(path), cuda_spec or {}, names,
                                   "cuda" if dev.has_gpu() else "cpu")
        return None, fn
    module = import_file(path, "submission")
    fn = getattr(module, function, None)
    if not callable(fn):
        raise AttributeError(f"{os.path.basename(path)} defines no function {function}()")
    return module, fn


class _Submission:
    """The submission as the harness's diagnosis (bench/check.py, failure_note) sees a
    kernel: its backend, its tile sizes (the module's upper-case integers: BLOCK, BLOCK_M,
    ...) and a runner."""

    def __init__(self, module, fn, backend: str):
        self.backend, self.name, self._fn = backend, "submission", fn
        found = vars(module) if module is not None else getattr(fn, "constants", {})
        self._params = {k: v for k, v in found.items()
                        if k.isupper() and isinstance(v, int) and not isinstance(v, bool)}

    def tile_params(self, precision=None) -> dict:
        return {**self._params, "precision": precision}

    def runner(self, precision):
        return self._fn


def _where_wrong(module, fn, problem, out, inputs, request, device) -> str:
    """Where a wrong output is wrong, at the submission's own tile sizes: the harness's
    pattern report (tile edges, reads past the inputs told apart from unwritten elements).
    Advice for the student; the grader judges the output itself."""
    from bench import check

    precision = request["precision"]
    try:
        tol = problem.tolerance(request["shape"], precision)
        if problem.error(out, inputs, precision=precision) <= tol:
            return ""
        # the rerun that names reads past the inputs watches Triton loads: not a .cu file's
        rerun_on = device if module is not None else "none"
        return check.failure_note(_Submission(module, fn, request["backend"]), problem, out,
                                  inputs, precision, "random", tol, rerun_on)
    except Exception:          # advice only: never in the way of the verdict
        return ""


def _emulator_reads(counted: dict, note: str) -> str:
    """A wrong output's note, told by the emulator's bounds check (counted.cuh): reads
    outside every tensor named, else NaN told to be never written."""
    if counted.get("outside_loads"):
        return (f"reads past the inputs: {counted['outside_loads']} loads outside every "
                f"tensor, the first {counted['first_outside_load']}; {note}")
    return note.replace("never written, or computed from reads past the inputs",
                        "never written (the emulator saw every load inside the tensors)")


def _call(module, fn, request, device: str, previous: list) -> dict:
    """One graded call: poisoned output memory, the inputs between poisoned margins on the
    CPU (bench/check.py, poisoned_launch), the call watched (bench/grading/guard.py)."""
    import torch

    from bench import check, counted, problems
    from bench.grading import guard

    problem = problems.get(request["op"])
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in request["inputs"]]
    records, given = [], []
    # a traffic test under Nsight Compute (counters.py): the call runs once unprofiled, then
    # again inside the range, and a .cu file's function without its torch profiler there
    profiled = bool(request.get("profile"))
    cuda = module is None             # a .cu submission (cuda_lab.CudaFunction)

    def watched(*args):
        given[:] = args                # what the call got (on the CPU: copies in margins)
        with guard.watching() as record:
            records.append(record)
            return _in_range(fn, args) if profiled else fn(*args)

    answer = {"nonce": request["nonce"], "out": None, "error": "", "counted": None,
              "same_output": False, "note": ""}
    try:
        if profiled:
            if cuda:
                fn.timing = True
            with guard.watching() as record:
                records.append(record)
                fn(*inputs)            # compiles, autotunes: outside the range
                torch.cuda.synchronize()
        nbytes = problem.output_nbytes(request["shape"], request["precision"])
        if device == "cpu" and cuda:  # the emulator counts (counted.cuh)
            out, _ = check.poisoned_launch(watched, inputs, nbytes, device)
            answer["counted"] = fn.last_counts
        elif device == "cpu":         # every call: the grader checks who wrote the output
            with counted.counting() as c:
                out, _ = check.poisoned_launch(watched, inputs, nbytes, device)
            answer["counted"] = {"loads": c.loads, "stores": c.stores,
                                 "load_bytes": c.load_bytes, "store_bytes": c.store_bytes,
                                 "launches": len(c.launches)}
        else:                         # a GPU: the inputs between NaN margins there too
            out, _ = check.poisoned_launch(watched, inputs, nbytes, device, margins=True)
        if isinstance(out, torch.Tensor):
            # the previous output is kept alive until now, so that its memory cannot be
            # handed out again: the same storage is the same tensor, not a reused address
            ptr = out.untyped_storage().data_ptr() if out.numel() else 0
            answer["same_output"] = bool(ptr) and any(
                ptr == p.untyped_storage().data_ptr() for p in previous)
            previous[:] = [out]
            answer["out"] = out.detach().to("cpu").clone()
            answer["note"] = _where_wrong(module, fn, problem, out, inputs, request, device)
            if cuda and answer["counted"] and answer["note"]:
                answer["note"] = _emulator_reads(answer["counted"], answer["note"])
        else:
            answer["error"] = f"returned {type(out).__name__}, not a tensor"
    except guard.Refused as exc:
        answer["error"] = str(exc)
    except Exception as exc:       # the submission's own failure: reported, not fatal here
        # a CUDA error is sticky: the context cannot run the next call, so the process
        # ends after this answer and the grader starts a fresh one
        answer["fatal"] = device == "cuda" and "CUDA error" in str(exc)
        frames = traceback.extract_tb(exc.__traceback__)
        where = next((f"line {f.lineno}" for f in reversed(frames)
                      if os.path.basename(f.filename) == request["file_name"]), "")
        answer["error"] = (f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
                           + (f" ({request['file_name']}, {where})" if where else ""))
        if "wrap_triton" in str(exc):  # a torch.library Triton op, under the interpreter
            answer["error"] = ("the call computed with a Triton kernel behind a torch.library "
                               "op (as this suite's own kernels are): a lab's kernel must do "
                               "the work itself, launched from the file handed in")
    answer["inputs_after"] = [x.detach().to("cpu").clone() if isinstance(x, torch.Tensor) else x
                              for x in given]
    answer["refused"] = [name for r in records for name in r.refused]
    answer["launches"] = [launch for r in records for launch in r.launches]
    if cuda and profiled:               # the grader names them from ncu's report
        fn.timing = False
        answer["launches"] += [("(named by Nsight Compute)", str(fn.path))]
    elif cuda:
        answer["launches"] += fn.last_launches
    return answer


def _in_range(fn, args):
    """fn(*args) inside counters.RANGE, after the marker kernel that begins each call's
    group of kernels in ncu's report."""
    import torch

    from bench.grading import counters

    torch.cuda.nvtx.range_push(counters.RANGE)
    try:
        torch.cuda._sleep(1)
        return fn(*args)
    finally:
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


class _Timing:
    """A performance test's side of this process (grade.py, performance tests): `sets`
    inputs drawn here on the GPU from the grader's seed, each different, so that no call
    can reuse an earlier call's answer; the timed loop calls the submission once per set,
    and the grader's own clock, not this process's, measures it (the whole request, less a
    ping's round trip). Afterwards the grader asks for outputs of sets it picks then, and
    checks them against its float64 reference."""

    def __init__(self):
        self.sets, self.outs, self.drawn = [], [], []

    @staticmethod
    def _calls(fn, sets, device) -> tuple[list, str]:
        """fn on each input set, watched, then synchronized: (outputs, why refused or '').
        Each output must be a tensor of its own: every output stays alive to the end of the
        loop, so a storage handed back twice is an output reused, not an address recycled.
        A .cu file's function skips its profiler for these calls only (timing), so that the
        correctness tests after a performance test are watched as before."""
        import torch

        from bench import device as dev
        from bench.grading import guard

        timed = hasattr(fn, "timing")
        if timed:
            fn.timing = True
        try:
            with guard.watching() as record:
                outs = [fn(*inputs) for inputs in sets]
                dev.synchronize(device)
        finally:
            if timed:
                fn.timing = False
        refused = record.refused
        if refused:
            return outs, f"computed with torch ops ({', '.join(refused)})"
        if not all(isinstance(out, torch.Tensor) for out in outs):
            return outs, "returned something other than a tensor"
        def storage(x):
            return x.untyped_storage().data_ptr()

        for out, inputs in zip(outs, sets):   # an output written into an input changed it
            if out.numel() and any(isinstance(x, torch.Tensor) and x.numel()
                                   and storage(x) == storage(out) for x in inputs):
                return outs, CHANGED_INPUTS
        storages = [storage(out) for out in outs if out.numel()]
        return outs, (SAME_OUTPUT if len(set(storages)) < len(storages) else "")

    @staticmethod
    def _draw(template, g, device) -> list:
        """One input set like the template's, its floating tensors drawn from generator g."""
        import torch

        inputs = []
        for x in template:
            if isinstance(x, torch.Tensor):
                y = torch.empty(x.shape, dtype=x.dtype, device=device)
                y.normal_(generator=g) if y.is_floating_point() else y.copy_(x)
                x = y
            inputs.append(x)
        return inputs

    def handle(self, module, fn, request, device) -> dict:
        import torch

        from bench import problems

        t = request["time"]
        answer = {"nonce": request["nonce"], "error": ""}
        stage = t["stage"]
        try:
            if stage == "ping":
                return answer
            if stage == "prepare":
                problem = problems.get(request["op"])
                names = [name for name, _ in problem.arguments]
                template = list(problem.inputs(request["shape"], request["precision"],
                                               seed=t["seed"], device="cpu"))
                g = torch.Generator(device=device).manual_seed(t["seed"])
                self.sets, self.outs, self.drawn = [], [], []
                for k in range(t["sets"]):
                    state = g.get_state()        # to draw set k again: were its inputs kept?
                    inputs = self._draw(template, g, device)
                    for name in t.get("fresh", []):
                        inputs[names.index(name)] = t["seed"] + k
                    self.sets.append(inputs)
                    self.drawn.append((template, state))
                # compile, then one warm call
                answer["error"] = self._calls(fn, [self.sets[0]] * 2, device)[1]
                return answer
            if stage == "run":
                self.outs, answer["error"] = self._calls(fn, self.sets, device)
                return answer
            if stage == "sample":
                k = t["k"]
                template, state = self.drawn[k]
                g = torch.Generator(device=device)
                g.set_state(state)
                again = self._draw(template, g, device)
                if not all(torch.equal(a, b) for a, b in zip(again, self.sets[k])
                           if isinstance(a, torch.Tensor)):
                    answer["error"] = CHANGED_INPUTS
                    return answer
                answer["out"] = self.outs[k].detach().to("cpu").clone()
                answer["inputs"] = [x.detach().to("cpu").clone() if isinstance(x, torch.Tensor)
                                    else x for x in self.sets[k]]
                return answer
            if stage == "free":
                self.sets, self.outs, self.drawn = [], [], []
                return answer
            answer["error"] = f"no timing stage {stage!r}"
        except Exception as exc:          # the submission's failure, reported
            answer["error"] = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
        return answer


def main(argv: list[str]) -> int:
    """argv: FILE FUNCTION [SPEC]; SPEC (JSON) for a .cu file: {"op", "cuda": lab.toml's
    [cuda]}."""
    import json

    path, function = argv[0], argv[1]
    spec = json.loads(argv[2]) if len(argv) > 2 else {}
    channel = os.fdopen(os.dup(1), "wb")        # the answers' pipe, out of print()'s way
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer

    from bench import device as dev

    device = dev.setup()
    try:
        module, fn = _load(path, function, spec.get("cuda"), spec.get("op", ""))
        loaded = {"nonce": "load", "error": ""}
    except BaseException as exc:      # noqa: BLE001: any import failure is the student's
        module = fn = None
        loaded = {"nonce": "load",
                  "error": str(exc) if type(exc).__name__ == "CompileError" else
                           f"importing it raised {type(exc).__name__}: "
                           f"{(str(exc).splitlines() or [''])[0][:200]}"}
    write_message(channel, loaded)
    if fn is None:
        return 0
    previous: list = []
    timing = _Timing()
    while True:
        request = read_message(requests)
        if request is None:
            return 0
        request["file_name"] = os.path.basename(path)
        if "time" in request:
            write_message(channel, timing.handle(module, fn, request, device))
            continue
        answer = _call(module, fn, request, device, previous)
        write_message(channel, answer)
        if answer.get("fatal"):
            return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
