"""A lab's CUDA submission (a .cu file) as a function of tensors, for the grader's sandbox.

The student writes kernels and one host function that launches them, with the C signature
the lab gives (lab.toml, [cuda] signature), for example

    void vector_add(const float* x, const float* y, float* out, long n)

Pointers are the tensors' memory, row-major and contiguous: the op's inputs by their names
(bench/problems: x, y; a, b; ...) and the output (`out`, or the one pointer parameter whose
name is no input's), which this module allocates (lab.toml, [cuda]
output: "x" is empty_like(x), "M, N" a shape of the sizes below). Integer and float
parameters are the op's scalars (p, seed) or sizes: n (elements of the first input), M, N,
K (a matmul's), rows and cols (the first input as rows of its last dimension).

Where it runs:
    GPU   nvcc builds the file and a C entry beside it into a shared library (ctypes calls
          it); the profiler records each call's kernels (at least one must run) and any
          copy between host and GPU (refused: the kernel does the work); an error the call
          leaves (a launch error, an illegal address) fails it, and its process ends after
          the answer, since a CUDA context with a sticky error cannot run the next test.
    CPU   the CUDA emulator (bench/cuda_emulator: one thread per CUDA thread) runs the same
          file, its launches rewritten (emulate.py) and its kernels' pointer parameters
          counted (counted.cuh): loads and stores per element and per byte, like the Triton
          interpreter's count (bench/counted.py), and the escapes that leave the count.
"""
from __future__ import annotations

import ctypes
import hashlib
import math
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.grading.counters import kernel_name

EMULATOR = Path(__file__).resolve().parents[1] / "cuda_emulator"
BOUNDS = r"(?:__launch_bounds__\s*\([^)]*\)\s*)?"
GLOBAL = re.compile(r"__global__\s+" + BOUNDS + r"void\s+" + BOUNDS + r"(\w+)\s*\(([^)]*)\)",
                    re.S)
POINTER_PARAM = re.compile(r"^(const\s+)?([\w:]+)\s*(const\s*)?\*\s*(?:const\s+)?"
                           r"(?:__restrict__\s+)?(\w+)$")
TILE_CONSTANT = re.compile(r"#define\s+([A-Z][A-Z0-9_]*)\s+(\d+)\b|constexpr\s+(?:int|unsigned|"
                           r"long|int64_t|size_t)\s+([A-Z][A-Z0-9_]*)\s*=\s*(\d+)\s*;")
SIZES = ("n", "M", "N", "K", "rows", "cols")


class CompileError(RuntimeError):
    """The submission did not compile (the compiler's first error, one line)."""


@dataclass
class Param:
    ctype: str
    name: str
    kind: str        # "pointer", "int" or "float"


def parse_signature(text: str) -> tuple[str, list[Param]]:
    """'void f(const float* x, long n)' -> ('f', [Param('const float*', 'x', 'pointer'), ...])."""
    m = re.fullmatch(r"\s*void\s+(\w+)\s*\((.*)\)\s*;?\s*", text, re.S)
    if not m:
        raise ValueError(f"a [cuda] signature is `void name(type name, ...)`, not {text!r}")
    params = []
    for part in filter(None, (p.strip() for p in m.group(2).split(","))):
        pm = re.fullmatch(r"(.*?[\s*])(\w+)", part)
        if not pm:
            raise ValueError(f"signature {text!r}: cannot read the parameter {part!r}")
        ctype, name = pm.group(1).strip(), pm.group(2)
        kind = ("pointer" if "*" in ctype else
                "float" if ctype.split()[-1] in ("float", "double") else "int")
        params.append(Param(ctype, name, kind))
    return m.group(1), params


def kernel_names(source: str) -> set[str]:
    return {m.group(1) for m in GLOBAL.finditer(source)}


def tile_constants(source: str) -> dict[str, int]:
    """The file's upper-case integer constants (#define TILE 32, constexpr int BLOCK = 256):
    its tile sizes, for the pattern report of a wrong output."""
    out = {}
    for m in TILE_CONSTANT.finditer(source):
        name, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        out[name] = int(value)
    return out


def counted_kernels(source: str) -> str:
    """Each __global__ function's pointer parameters as cvt_emu::counted<T> (counted.cuh)."""
    def params(m: re.Match) -> str:
        parts = []
        for part in m.group(2).split(","):
            pm = POINTER_PARAM.fullmatch(part.strip())
            if pm:
                const = "const " if (pm.group(1) or pm.group(3)) else ""
                part = f" cvt_emu::counted<{const}{pm.group(2)}> {pm.group(4)}"
            parts.append(part)
        return m.group(0)[:m.start(2) - m.start(0)] + ",".join(parts) + ")"
    return GLOBAL.sub(params, source)


def entry_source(include: str, name: str, params: list[Param], gpu: bool) -> str:
    """A C entry around the student's host function: ctypes calls it with the pointers, the
    integers and the floats in three arrays, and gets the CUDA error the call left."""
    args, counts = [], {"pointer": 0, "int": 0, "float": 0}
    arrays = {"pointer": "p", "int": "i", "float": "f"}
    for param in params:
        args.append(f"({param.ctype}){arrays[param.kind]}[{counts[param.kind]}]")
        counts[param.kind] += 1
    lines = ([f'#include "{include}"'] if gpu else
             ['#include "counted.cuh"', f'#include "{include}"'])
    lines += ['extern "C" int cvt_lab_entry(void* const* p, const long long* i, '
              'const double* f) {',
              "  (void)p; (void)i; (void)f;",
              f"  {name}({', '.join(args)});",
              "  return (int)cudaGetLastError();", "}"]
    lines += ['extern "C" const char* cvt_lab_error(int e) {',
              "  return cudaGetErrorString((cudaError_t)e);", "}"]
    if not gpu:
        lines += ['extern "C" void cvt_lab_counts(long long* out) {',
                  "  out[0] = cvt_emu::counted_loads; out[1] = cvt_emu::counted_stores;",
                  "  out[2] = cvt_emu::counted_load_bytes; out[3] = cvt_emu::counted_store_bytes;",
                  "  out[4] = cvt_emu::counted_escapes; out[5] = cvt_emu::launches;",
                  "  out[6] = cvt_emu::outside_loads; out[7] = cvt_emu::outside_stores;",
                  "  out[8] = (long long)cvt_emu::first_outside_load.load();",
                  "  out[9] = (long long)cvt_emu::first_outside_store.load();", "}",
                  'extern "C" void cvt_lab_extents(void* const* begin, const long long* bytes,',
                  "                                int n) {",
                  "  cvt_emu::extents = n < cvt_emu::kMaxExtents ? n : cvt_emu::kMaxExtents;",
                  "  for (int i = 0; i < cvt_emu::extents; ++i) {",
                  "    cvt_emu::extent_begin[i] = static_cast<const char*>(begin[i]);",
                  "    cvt_emu::extent_end[i] = static_cast<const char*>(begin[i]) + bytes[i];",
                  "  }",
                  "  cvt_emu::first_outside_load = nullptr; cvt_emu::first_outside_store = nullptr;",
                  "}"]
    return "\n".join(lines) + "\n"


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return (text.strip().splitlines() or ["(no message)"])[-1][:300]


def _nvcc() -> str:
    from torch.utils import cpp_extension

    home = cpp_extension.CUDA_HOME
    found = (str(Path(home) / "bin" / "nvcc") if home and (Path(home) / "bin" / "nvcc").is_file()
             else shutil.which("nvcc"))
    if not found:
        raise CompileError("no nvcc found (CUDA_HOME, PATH): a CUDA submission needs the toolkit")
    return found


def compile_library(path: Path, signature: str, device: str, workdir: Path,
                    include: str = "", arch: str = "") -> Path:
    """The submission and its entry compiled into a shared library (not loaded): nvcc for
    `arch` (default: this GPU's) where device is "cuda", g++ and the emulator elsewhere.
    The submission is compiled as a copy in `workdir`, so that the headers it includes in
    quotes are the lab's (`include`: the lab's folder, e.g. lab 6's cvt_lab_mma.cuh), not
    copies beside it."""
    name, params = parse_signature(signature)
    source = Path(path).read_text()
    workdir.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256((source + signature + device + arch).encode()).hexdigest()[:16]
    lib = workdir / f"lab_{key}.so"
    includes = [f"-I{include}"] if include else []
    if device == "cuda":
        if not arch:
            import torch

            major, minor = torch.cuda.get_device_capability()
            arch = f"sm_{major}{minor}{'a' if major == 9 else ''}"
        (workdir / "submission.cu").write_text(source)
        entry = workdir / "entry.cu"
        entry.write_text(entry_source("submission.cu", name, params, gpu=True))
        cmd = [_nvcc(), "-O3", "-lineinfo", "-shared", "-Xcompiler", "-fPIC", f"-arch={arch}",
               "-std=c++17", *includes, str(entry), "-o", str(lib)]
    else:
        from bench.cuda_emulator.emulate import rewrite

        gxx = shutil.which("g++")
        if gxx is None:
            raise CompileError("no g++ found: the CUDA emulator needs a C++20 compiler")
        (workdir / "submission.cu").write_text(counted_kernels(rewrite(source)))
        entry = workdir / "entry.cpp"
        entry.write_text(entry_source("submission.cu", name, params, gpu=False))
        cmd = [gxx, "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-w",
               "-DCVT_EMULATED", f"-I{EMULATOR}", *includes,
               str(entry), "-o", str(lib)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    if done.returncode != 0:
        text = (done.stderr or done.stdout).replace(str(workdir / "submission.cu"),
                                                    Path(path).name)
        raise CompileError(f"compiling it failed: {_first_error(text)}")
    return lib


def build(path: Path, signature: str, device: str, workdir: Path,
          include: str = "") -> ctypes.CDLL:
    """compile_library's library, loaded."""
    return ctypes.CDLL(str(compile_library(path, signature, device, workdir, include)))


class CudaFunction:
    """The student's host function as a function of the op's inputs: out = f(x, y)."""

    def __init__(self, path: Path, spec: dict, arguments: list[str], device: str):
        self.path, self.device, self.arguments = Path(path).resolve(), device, arguments
        self.output = str(spec.get("output", arguments[0]))
        self.name, self.params = parse_signature(spec["signature"])
        source = self.path.read_text()
        self.kernels = kernel_names(source)
        self.constants = tile_constants(source)
        self._tmp = tempfile.TemporaryDirectory(prefix="cvt_lab_")
        self.lib = build(self.path, spec["signature"], device, Path(self._tmp.name),
                         spec.get("include", ""))
        self.lib.cvt_lab_entry.restype = ctypes.c_int
        self.lib.cvt_lab_error.restype = ctypes.c_char_p
        self.last_launches: list[tuple[str, str]] = []
        self.last_counts: dict | None = None
        self.timing = False      # a performance test's loop: no profiler, no synchronize

    def _sizes(self, tensors: list) -> dict:
        first = tensors[0]
        sizes = {"n": first.numel()}
        if first.dim() >= 1:
            sizes["cols"] = first.shape[-1]
            sizes["rows"] = first.numel() // max(first.shape[-1], 1)
        if len(tensors) >= 2 and first.dim() == 2 and tensors[1].dim() == 2:
            sizes.update(M=first.shape[0], K=first.shape[1], N=tensors[1].shape[1])
        return sizes

    def _out(self, names: dict, tensors: list):
        import torch

        first = tensors[0]
        if self.output in names and isinstance(names[self.output], torch.Tensor):
            return torch.empty_like(names[self.output], memory_format=torch.contiguous_format)
        shape = eval(self.output, {"__builtins__": {}}, dict(names))  # noqa: S307 (lab.toml's)
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        return torch.empty(shape, dtype=first.dtype, device=first.device)

    def __call__(self, *inputs):
        import torch

        names = dict(zip(self.arguments, inputs))
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        for arg, x in names.items():
            if isinstance(x, torch.Tensor) and not x.is_contiguous():
                raise ValueError(f"{self.name}: input {arg} is not contiguous")
        names.update(self._sizes(tensors))
        names["out"] = out = self._out(names, tensors)
        for param in self.params:     # the one pointer that is no input's is the output
            if param.kind == "pointer" and param.name not in names:
                names[param.name] = out
        pointers, ints, floats = [], [], []
        for param in self.params:
            if param.name not in names:
                raise ValueError(f"{self.name}: the signature's parameter {param.name} is none "
                                 f"of the op's inputs, out, or {', '.join(SIZES)}")
            value = names[param.name]
            if param.kind == "pointer":
                pointers.append(ctypes.c_void_p(value.data_ptr()))
            elif param.kind == "float":
                floats.append(float(value))
            else:
                ints.append(int(value))
        p = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
        i = (ctypes.c_longlong * max(len(ints), 1))(*ints)
        f = (ctypes.c_double * max(len(floats), 1))(*floats)
        if self.device == "cuda" and self.timing:
            self._raise(self.lib.cvt_lab_entry(p, i, f))
        elif self.device == "cuda":
            self._call_gpu(p, i, f)
        else:
            tensors = {param.name: names[param.name] for param in self.params
                       if param.kind == "pointer"}
            self._call_cpu(p, i, f, tensors)
        return out

    def _raise(self, error: int) -> None:
        if error:
            where = "" if self.device == "cuda" else " (the CPU emulator's check of the launch)"
            raise RuntimeError(f"CUDA error {error} after the call{where}: "
                               f"{self.lib.cvt_lab_error(error).decode()}")

    def _call_cpu(self, p, i, f, tensors: dict) -> None:
        spans = [(name, t.data_ptr(), t.numel() * t.element_size(), tuple(t.shape))
                 for name, t in tensors.items()]
        begin = (ctypes.c_void_p * max(len(spans), 1))(*[s[1] for s in spans])
        size = (ctypes.c_longlong * max(len(spans), 1))(*[s[2] for s in spans])
        self.lib.cvt_lab_extents(begin, size, len(spans))
        before = (ctypes.c_longlong * 10)()
        self.lib.cvt_lab_counts(before)
        error = self.lib.cvt_lab_entry(p, i, f)
        self._raise(error)
        after = (ctypes.c_longlong * 10)()
        self.lib.cvt_lab_counts(after)
        d = [a - b for a, b in zip(after[:8], before[:8])]
        self.last_counts = {"loads": d[0], "stores": d[1], "load_bytes": d[2],
                            "store_bytes": d[3], "escapes": d[4], "launches": d[5],
                            "outside_loads": d[6], "outside_stores": d[7],
                            "first_outside_load": _where(after[8], spans) if d[6] else "",
                            "first_outside_store": _where(after[9], spans) if d[7] else ""}
        self.last_launches = [("a CUDA kernel", str(self.path))] * d[5]

    def _call_gpu(self, p, i, f) -> None:
        import torch
        from torch.profiler import ProfilerActivity, profile

        from bench.grading.guard import Refused

        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            error = self.lib.cvt_lab_entry(p, i, f)
            torch.cuda.synchronize()      # an illegal address raises here (a sticky error)
        self._raise(error)
        names = [e.name for e in prof.events()
                 if getattr(e.device_type, "name", "") == "CUDA"]
        copies = sorted({n for n in names if n.startswith("Memcpy") and "DtoD" not in n})
        if copies:
            raise Refused(f"the call copied memory between the host and the GPU "
                          f"({', '.join(copies)}): the lab's kernels must do the work")
        ran = [kernel_name(n) for n in names if not n.startswith(("Memcpy", "Memset"))]
        self.last_launches = [(k, str(self.path) if k in self.kernels else "elsewhere")
                              for k in ran]
        self.last_counts = None


def _where(address: int, spans) -> str:
    """An address outside every tensor, by the nearest one: "4 bytes past the end of b
    (64x48)" or "8 bytes before the start of a (...)"."""
    best = None
    for name, start, nbytes, shape in spans:
        size = max(nbytes // max(1, math.prod(shape)), 1)
        gap = start - address if address < start else address - (start + nbytes)
        k = gap // size
        where = ((f"{k + 1} elements before the start of {name}" if k else
                  f"just before the start of {name}") if address < start else
                 (f"{k + 1} elements past the end of {name}" if k else
                  f"just past the end of {name}"))
        if best is None or gap < best[0]:
            best = (gap, f"{where} ({'x'.join(map(str, shape)) or 'a scalar'})")
    return best[1] if best else "outside every tensor"
