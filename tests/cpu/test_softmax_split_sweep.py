"""The split softmax's variants under measurement (cuda/softmax_split.cu) and their sweep
(cuda/driver/softmax_split_sweep.sh), checked in their SASS without a GPU.

CPU tier: every sweep candidate names macros that memory_config.h defines and compiles for
sm_90a without a spill, and each macro does what the sweep says it measures, counted in the
SASS of the float16 kernels with clusters: the lean arithmetic (CVT_SPLIT_LEAN) keeps the
non-ftz exp's fix-up (a compare against -126) out of the per-element loops and has fewer
instructions; the relaxed arrive (CVT_SPLIT_RELAXED_ARRIVE) leaves version 3 one MEMBAR,
predicated for thread 0, of its two, and refill both; the pair reduction
(CVT_SPLIT_PAIR_REDUCE) takes five block barriers where two reductions take eight. (GPU: the sweep itself, and docs/performance/debts/debts_h100.py's checks.)
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bindings import config

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "cuda" / "driver" / "softmax_split_sweep.sh"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
REFILL = "_ZN3cvt24softmax_row_split_kernelI6__halfLi8ELb1ELb1EEEvPKT_PS2_lll"  # fp16, refill, clusters
SPLIT = "_ZN3cvt24softmax_row_split_kernelI6__halfLi8ELb1ELb0EEEvPKT_PS2_lll"   # fp16, version 3


def _candidates() -> dict[str, list[str]]:
    block = re.search(r"^declare -A FLAGS=\((.*?)^\)", SWEEP.read_text(), re.M | re.S).group(1)
    return {name: re.findall(r"-D\w+=\w+", flags)
            for name, flags in re.findall(r'\[(\w+)\]="([^"]*)"', block)}


def test_sweep_candidates_name_real_macros():
    cands = _candidates()
    assert {"lean0", "sync0", "relaxed", "pairs", "default"} <= set(cands)
    assert cands["default"] == []
    defined = set(config.memory_params())
    for name, flags in cands.items():
        for flag in flags:
            assert flag[2:].split("=")[0].removeprefix("CVT_") in defined, (name, flag)
    assert subprocess.run(["bash", "-n", str(SWEEP)]).returncode == 0


def _sass(flags: list[str], tmp_path: Path) -> tuple[dict[str, list[str]], str]:
    from bench import wgmma_hazards as wh

    obj = tmp_path / "split.o"
    r = subprocess.run([NVCC, "-arch=sm_90a", "-O3", "-std=c++17", f"-I{ROOT / 'cuda'}",
                        *flags, "-Xptxas", "-v", "-c", str(ROOT / "cuda" / "softmax_split.cu"),
                        "-o", str(obj)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    code = {}
    for kernel in (REFILL, SPLIT):
        dump = subprocess.run([wh._tool("cuobjdump"), "-sass", "-fun", kernel, str(obj)],
                              capture_output=True, text=True, check=True).stdout
        code[kernel] = [re.sub(r"/\*[0-9a-f]+\*/", "", line).split(";")[0].strip()
                        for line in dump.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", line)]
    return code, r.stderr


@needs_nvcc
@pytest.mark.slow
def test_each_macro_changes_what_it_says(tmp_path):
    cands = _candidates()
    sass = {}
    for name in ("lean0", "sync0", "relaxed", "pairs", "default"):
        code, ptxas = _sass(cands[name], tmp_path)
        assert "0 bytes spill stores" in ptxas and " bytes spill stores" in ptxas
        assert not re.search(r"[1-9]\d* bytes spill", ptxas), (name, ptxas[-1000:])
        sass[name] = code
    count = lambda name, text, kernel=REFILL: sum(text in line for line in sass[name][kernel])
    # the fix-up's compare stays only in the per-row exps of the block and cluster folds
    assert count("sync0", "-126") <= 2 < 16 <= count("lean0", "-126")
    assert len(sass["sync0"][REFILL]) < len(sass["lean0"][REFILL])
    for name in ("sync0", "relaxed", "default"):        # refill keeps both release arrivals
        assert count(name, "MEMBAR.ALL.GPU") == 2, name
    assert count("sync0", "MEMBAR.ALL.GPU", SPLIT) == 2
    for name in ("relaxed", "default"):                 # version 3: thread 0's fence only
        fences = [line for line in sass[name][SPLIT] if "MEMBAR" in line]
        assert len(fences) == 1 and fences[0].startswith("@"), (name, fences)
    for kernel in (REFILL, SPLIT):
        assert count("sync0", "BAR.SYNC", kernel) == 8 and count("relaxed", "BAR.SYNC", kernel) == 8
        assert count("pairs", "BAR.SYNC", kernel) == 5 and count("default", "BAR.SYNC", kernel) == 5
