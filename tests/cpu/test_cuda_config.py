"""CPU tier: cuda/matmul_config.h and cuda/memory_config.h are the one source of the CUDA ops'
lists and of the kernels' launch parameters, bindings/config.py reads them as the compiler
does, and no kernel, launcher or Triton wrapper hard-codes an SM count.

The preprocessor itself is the reference: g++ expands the headers here (no GPU, no CUDA
toolkit needed: the two config headers include nothing)."""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import tokenize
from pathlib import Path

import pytest

from bindings import config

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "cuda"
GXX = shutil.which("g++")
needs_gxx = pytest.mark.skipif(GXX is None, reason="g++ not on PATH")

HEADERS = {"matmul_config.h": config.params, "memory_config.h": config.memory_params}
MEMORY_KERNELS = ("vector_add", "copy", "relu_dropout", "softmax_row_sram", "softmax_online",
                  "softmax_split", "rgb_to_grey")


def _gxx(tmp_path: Path, source: str, *flags: str) -> str:
    path = tmp_path / "probe.cpp"
    path.write_text(source)
    out = subprocess.run([GXX, "-std=c++17", f"-I{CUDA}", *flags, str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


# --------------------------------------------------------------------------- the op lists

@needs_gxx
def test_op_lists_are_what_the_preprocessor_expands(tmp_path):
    """MATMUL_OPS and MEMORY_OPS are the X-macro lists as the compiler sees them, in order."""
    out = _gxx(tmp_path, '#include "matmul_config.h"\n#include "memory_config.h"\n'
                         "#define NAME(x) <x>\n"
                         "matmul: CVT_MATMUL_OPS(NAME)\ntensor: CVT_TENSOR_CORE_OPS(NAME)\n"
                         "tf32: CVT_TF32_OPS(NAME)\nskinny: CVT_SKINNY_OPS(NAME)\n"
                         "memory: CVT_MEMORY_OPS(NAME)\n", "-E", "-P")
    lines = {line.split(":")[0]: re.findall(r"<(\w+)>", line) for line in out.splitlines()
             if line.startswith(("matmul:", "tensor:", "tf32:", "skinny:", "memory:"))}
    assert config.MATMUL_OPS == tuple(f"matmul_{v}" for v in lines["matmul"])
    assert config.TENSOR_CORE_OPS == tuple(f"matmul_{v}" for v in lines["tensor"])
    assert config.TF32_OPS == tuple(f"matmul_{v}" for v in lines["tf32"]) and config.TF32_OPS
    assert config.SKINNY_OPS == tuple(f"matmul_{v}" for v in lines["skinny"]) and config.SKINNY_OPS
    assert config.MEMORY_OPS == tuple(lines["memory"])
    assert set(MEMORY_KERNELS) == set(config.MEMORY_OPS)


def test_every_op_has_its_kernel_file():
    for op in (*config.MATMUL_OPS, *config.TENSOR_CORE_OPS, *config.TF32_OPS,
               *config.SKINNY_OPS, *config.MEMORY_OPS):
        assert (CUDA / f"{op}.cu").exists(), f"{op}: no cuda/{op}.cu"


def test_the_lists_are_written_once():
    """The bindings, the launchers' header and the drivers expand the lists: no op name is
    written out in them by hand."""
    for path in ("bindings/matmul_ops.cpp", "cuda/launchers.h", "cuda/driver/matmul_driver.cu"):
        code = _cxx_code((ROOT / path).read_text())
        for op in (*config.MATMUL_OPS, *config.TENSOR_CORE_OPS, *config.TF32_OPS,
                   *config.SKINNY_OPS):
            version = op.removeprefix("matmul_")
            assert not re.search(rf"\b(launch_)?(matmul_)?{version}\b", code), (path, op)
    # the memory ops' wrappers carry their op's name; their schemas and registrations do not
    memory_ops = _cxx_code((ROOT / "bindings/memory_ops.cpp").read_text())
    assert not re.findall(r'm\.(def|impl)\("', memory_ops)
    driver = (ROOT / "cuda/driver/memory_driver.cu").read_text()
    assert "CVT_MEMORY_OPS(CVT_KERNEL_NAME)" in driver


# --------------------------------------------------------------------------- the parameters

@needs_gxx
@pytest.mark.parametrize("header", sorted(HEADERS))
def test_reader_returns_the_values_the_kernels_compile_with(header, tmp_path):
    """Every numeric CVT_ macro the compiler defines is one the reader found, with the value
    the compiler uses (static_assert), and the reader finds nothing else."""
    values = HEADERS[header]()
    assert values, header
    defines = _gxx(tmp_path, f'#include "{header}"\n', "-E", "-dM")
    compiled = {m.group(1) for m in re.finditer(r"^#define CVT_(\w+) ", defines, re.M)}
    assert compiled == set(values), header  # (the X-macro lists take an argument: not here)
    checks = "".join(f'static_assert(CVT_{k} == {v}, "CVT_{k}");\n' for k, v in values.items())
    _gxx(tmp_path, f'#include "{header}"\n{checks}', "-fsyntax-only")


def test_memory_kernels_take_their_constants_from_the_header():
    """No launch parameter of a memory-bound kernel is a literal: each constant of the kernel
    files is bound to a CVT_ macro, and every macro of memory_config.h is used by cuda/."""
    sources = {p.name: _cxx_code(p.read_text())
               for p in [*(CUDA / f"{k}.cu" for k in MEMORY_KERNELS),
                         CUDA / "memory_common.cuh", CUDA / "memory_launchers.h"]}
    for name, code in sources.items():
        literal = re.findall(r"constexpr\s+int(?:64_t)?\s+(k\w+)\s*=\s*\d+\s*;", code)
        assert not literal, f"{name}: {literal} written as numbers, not from memory_config.h"
    used = "\n".join(sources.values())
    unused = [k for k in config.memory_params() if f"CVT_{k}" not in used]
    assert not unused, f"memory_config.h defines {unused}, which no kernel uses"


def test_triton_twins_take_the_cuda_numbers():
    """A program of each twin is its CUDA block (triton_impl/tiles.py reads the header)."""
    from triton_impl import tiles

    h = config.memory_params()
    assert tiles.vector_add() == {"THREADS": h["ADD_THREADS"], "VECTORS_PER_THREAD": h["ADD_UNROLL"],
                                  "VECTORS_PER_THREAD_SMALL": h["ADD_UNROLL_SMALL"],
                                  "num_warps": h["ADD_THREADS"] // 32}
    assert tiles.copy()["THREADS"] * tiles.copy()["VECTORS_PER_THREAD"] == \
        h["COPY_THREADS"] * h["COPY_UNROLL"]
    assert tiles.relu_dropout()["BLOCK"] == h["DROP_THREADS"] * h["DROP_UNROLL"] * 4
    assert tiles.rgb_to_grey()["BLOCK_W"] == h["GREY_BX"] * h["GREY_PX"]
    assert tiles.softmax()["SRAM_MAX_N"] == h["SOFTMAX_SRAM_MAX_N"]
    for module in ("vector_add", "copy", "relu_dropout", "rgb_to_grey", "softmax", "_memory"):
        code = _python_code((ROOT / "triton_impl" / f"{module}.py").read_text())
        for name in ("THREADS", "VECTORS_PER_THREAD", "SRAM_MAX_N", "BLOCK_W", "COLUMNS"):
            assert not re.search(rf"^{name}\b.*=", code, re.M), f"{module}.py: {name} copied"


# --------------------------------------------------------------------------- the SM count

# A name for an SM count given a number (0 is a placeholder filled from the device).
SM_CONSTANT = re.compile(r"\b(k?SMs?|NUM_SMS|sm_count|num_sms)\s*=\s*[1-9]", re.I)
_STRINGS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _cxx_code(text: str) -> str:
    """C++ source without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def _python_code(text: str) -> str:
    """Python source without comments and strings (docstrings included), line by line."""
    lines = text.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT or tok.type in _STRINGS:
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                line = lines[r - 1]
                start = c0 if r == r0 else 0
                end = c1 if r == r1 else len(line)
                lines[r - 1] = line[:start] + " " * (end - start) + line[end:]
    return "\n".join(lines)


def test_no_kernel_or_wrapper_hard_codes_an_sm_count():
    """SM counts come from the device (the H100's 132 may appear in comments that report a
    measurement, never in code). The interpreter's stand-in, _common.INTERPRETER_SM_COUNT,
    is the one documented constant."""
    found = []
    for path in [*CUDA.rglob("*.cu"), *CUDA.rglob("*.cuh"), *CUDA.rglob("*.h")]:
        code = _cxx_code(path.read_text())
        if re.search(r"\b132\b", code) or SM_CONSTANT.search(code):
            found.append(str(path.relative_to(ROOT)))
    for path in (ROOT / "triton_impl").rglob("*.py"):
        code = _python_code(path.read_text())
        if re.search(r"\b132\b", code) or SM_CONSTANT.search(code):
            found.append(str(path.relative_to(ROOT)))
    assert not found, f"a hard-coded SM count in {found}"


def test_the_sm_count_is_asked_of_the_device():
    launchers = _cxx_code((CUDA / "memory_launchers.h").read_text())
    for launcher in ("launch_vector_add", "launch_softmax_row_sram", "launch_softmax_online"):
        declaration = re.search(rf"{launcher}\(([^)]*)\)", launchers).group(1)
        assert "int sms" in declaration, launcher
    for path in ("bindings/memory_ops.cpp", "cuda/driver/memory_driver.cu"):
        assert "cudaDevAttrMultiProcessorCount" in (ROOT / path).read_text(), path


def test_the_interpreter_stand_in_is_used_without_a_gpu(monkeypatch):
    import torch

    from triton_impl import _common

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert _common.sm_count(torch.device("cpu")) == _common.INTERPRETER_SM_COUNT
    monkeypatch.delenv("TRITON_INTERPRET")
    assert _common.sm_count(torch.device("cpu")) == _common.INTERPRETER_SM_COUNT
