"""CPU tier: the loads a kernel's header says are in flight together are, in its SASS.

A memory-bound kernel reaches the bandwidth of the bytes it holds in flight over the
memory latency (Little's law), and the source's order is no promise: ptxas moves a load
next to its first use to stay near its register target, and where a vector path and an
element path meet it may unpack a vector right after its load. Either way the next load
waits for the one before (the skinny kernel's loads, in docs/performance/shapes.md). This
test compiles the kernel for sm_90 as the extension does, disassembles it
(the cuobjdump Triton compiles with, bench/wgmma_hazards.py) and counts how many of
the chosen loads are issued before any instruction reads what one of them loaded.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench import wgmma_hazards

# the same on every machine: fast tier without a GPU, slow tier beside one (tests/conftest.py)
pytestmark = pytest.mark.same_everywhere

ROOT = Path(__file__).resolve().parents[2]
NVCC = shutil.which("nvcc")


needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
PREDICATE = re.compile(r"^@!?U?P\w+\s+")
REGISTER = re.compile(r"\bR(\d+)\b")
WIDTH = {"128": 4, "64": 2}     # registers one load of LDG.E.128 / LDG.E.64 writes


def sass(cu: str, function: str, folder: Path) -> list[tuple[str, str]]:
    """(opcode, operands) of every instruction of `function` in cuda/`cu`, built for sm_90
    into `folder` (once per file and folder)."""
    cubin = folder / (Path(cu).stem + ".cubin")
    if not cubin.exists():
        built = subprocess.run([NVCC, "-arch=sm_90", "-O3", "-std=c++17", "-cubin", "-I", "cuda",
                                f"cuda/{cu}", "-o", str(cubin)], capture_output=True, text=True,
                               cwd=ROOT)
        assert built.returncode == 0, built.stderr
    listing = subprocess.run([wgmma_hazards._tool("cuobjdump"), "-sass", "-fun", function,
                              str(cubin)], capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    code = instructions(listing.stdout)
    assert code, f"{function}: no SASS in\n{listing.stdout[:2000]}"
    return code


def instructions(listing: str) -> list[tuple[str, str]]:
    """(opcode, operands) of every instruction of a SASS listing, predicates dropped."""
    out = []
    for _address, text in wgmma_hazards._instructions(listing):
        op, _, operands = PREDICATE.sub("", text).partition(" ")
        out.append((op, operands))
    return out


def most_in_flight(code: list[tuple[str, str]], load: str) -> int:
    """The most loads of opcode prefix `load` issued one after another before an
    instruction reads a register one of them writes (the longest such run in the code)."""
    best = 0
    for start, (op, _) in enumerate(code):
        if not op.startswith(load):
            continue
        pending: set[int] = set()
        count = 0
        for op, operands in code[start:]:
            regs = [int(r) for r in REGISTER.findall(operands)]
            if op.startswith(load):
                first = regs[0]
                width = WIDTH.get(op.split(".")[2], 1) if op.count(".") >= 2 else 1
                # its address registers are read: one of them may be a pending load's
                if pending & set(regs[1:]):
                    break
                pending |= set(range(first, first + width))
                count += 1
            elif pending & set(regs[1:] if not op.startswith(("ST", "RED", "ATOM")) else regs):
                break
            elif op.startswith(("BRA", "BAR", "EXIT", "RET")):
                break
        best = max(best, count)
    return best


# (file, kernel, SASS load opcode prefix, loads the kernel's header puts in flight)
CASES = [
    # M small in 16 bits: a batch of 8 pieces of B (cuda/matmul_skinny.cu, "in flight")
    ("matmul_skinny.cu", "_ZN3cvt25matmul_skinny_kernel_colsI6__halfLi4ELb1EEEvPKT_S4_PS2_Pfilll",
     "LDG.E.128", 8),
    ("matmul_skinny.cu",
     "_ZN3cvt25matmul_skinny_kernel_colsI13__nv_bfloat16Li4ELb1EEEvPKT_S4_PS2_Pfilll",
     "LDG.E.128", 8),
    # N small: a chunk's U * WR = 8 pieces of A
    ("matmul_skinny.cu", "_ZN3cvt25matmul_skinny_kernel_rowsI6__halfLi4ELb1EEEvPKT_S4_PS2_Pfilll",
     "LDG.E.128", 8),
    ("matmul_skinny.cu", "_ZN3cvt25matmul_skinny_kernel_rowsIfLi1ELb1EEEvPKT_S3_PS1_Pfilll",
     "LDG.E.128", 8),
    # ReLU + dropout in 16 bits: a step's kDropUnroll = 4 groups of 4 values (8 bytes each)
    ("relu_dropout.cu", "_ZN3cvt19relu_dropout_kernelI6__halfLb1EEEvPKT_PS2_lffm", "LDG.E.64", 4),
    ("relu_dropout.cu", "_ZN3cvt19relu_dropout_kernelI13__nv_bfloat16Lb1EEEvPKT_PS2_lffm",
     "LDG.E.64", 4),
]


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sass")


def _short(function: str) -> str:
    """A test id from a mangled kernel name: its name and the start of its arguments."""
    return re.sub(r"^_ZN3cvt\d+", "", function)[:34]


@needs_nvcc
@pytest.mark.parametrize("cu,function,load,loads", CASES, ids=[_short(c[1]) for c in CASES])
def test_the_headers_loads_are_in_flight_together(cu, function, load, loads, builds):
    """All but one of the batch (ptxas may issue a batch's last load after the first use of
    the first); the skinny kernels held 1 to 3 before their batches (commit 14b9128), ReLU +
    dropout 1 before its loads shared one branch (commit b0b82fb)."""
    assert most_in_flight(sass(cu, function, builds), load) >= loads - 1


def test_the_count_stops_at_the_first_use():
    """The counter itself, on hand-written SASS: the PRMT waits for the first load only, so
    the second, third and fourth are in flight together until the FFMA reads the third."""
    code = instructions("""
        /*0100*/  LDG.E.128.CONSTANT R4, desc[UR8][R20.64] ;
        /*0110*/  LDG.E.128.CONSTANT R8, desc[UR8][R20.64+0x10] ;
        /*0120*/  PRMT R30, R5, 0x7610, R30 ;
        /*0130*/  LDG.E.128.CONSTANT R12, desc[UR8][R20.64+0x20] ;
        /*0140*/  @!P0 LDG.E.128.CONSTANT R16, desc[UR8][R20.64+0x30] ;
        /*0150*/  FFMA R40, R13, R2, R40 ;
    """)
    assert [op for op, _ in code][:3] == ["LDG.E.128.CONSTANT", "LDG.E.128.CONSTANT", "PRMT"]
    assert most_in_flight(code, "LDG.E.128") == 3
    assert most_in_flight(code[:3], "LDG.E.128") == 2


# N small: B's chunk staged by cp.async in fp32 (LDGSTS, .ca: no BYPASS, so L1 keeps it for
# the SM's other blocks), by loads and stores in 16 bits (cuda/matmul_skinny.cu, "in flight")
COPIES = [
    ("_ZN3cvt25matmul_skinny_kernel_rowsIfLi16ELb1EEEvPKT_S3_PS1_Pfilll", True),
    ("_ZN3cvt25matmul_skinny_kernel_rowsIfLi2ELb1EEEvPKT_S3_PS1_Pfilll", True),
    ("_ZN3cvt25matmul_skinny_kernel_rowsIfLi4ELb0EEEvPKT_S3_PS1_Pfilll", True),
    ("_ZN3cvt25matmul_skinny_kernel_rowsI6__halfLi16ELb1EEEvPKT_S4_PS2_Pfilll", False),
]


@needs_nvcc
@pytest.mark.parametrize("function,copies", COPIES, ids=[_short(c[0]) for c in COPIES])
def test_fp32_skinny_copies_b_through_l1(function, copies, builds):
    """A load and its store of B waited for one L2 round trip after another (about four a
    chunk); the copies are all in flight at once, and through L1 they ran 8192 x 16 x 8192
    fp32 faster than around it (.cg) on the H200 (docs/performance/shapes.md)."""
    ops = [op for op, _ in sass("matmul_skinny.cu", function, builds)]
    staged = [op for op in ops if op.startswith("LDGSTS")]
    assert bool(staged) == copies, ops
    assert not any("BYPASS" in op for op in staged), staged
