"""CPU tier: bench.device.interpreter_numpy_compat. Triton 3.6's interpreter turns a scalar
(a one-element array) into a Python int with int(array): numpy 1.25 to 2.3 warn (DeprecationWarning)
and numpy 2.4 refuses, which broke every kernel with `range(0, K, BLOCK_K)` under the
interpreter on the GPU machines (numpy 2.4): the labs' counted-traffic tests run there on
the CPU. With the warning made an error, an older numpy behaves as 2.4 does."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = '''
import os, warnings
os.environ["TRITON_INTERPRET"] = "1"
import numpy as np, torch, triton, triton.language as tl
from bench import device

@triton.jit
def row_sums(x_ptr, out_ptr, K, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        ks = k0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + ks, mask=ks < K, other=0.0)
    tl.store(out_ptr, tl.sum(acc))

if {patched}:
    device.interpreter_numpy_compat()
    device.interpreter_numpy_compat()          # twice: wrapped once
warnings.simplefilter("error", DeprecationWarning)   # numpy 2.3 as 2.4
x, out = torch.arange(100, dtype=torch.float32), torch.empty(1)
row_sums[(1,)](x, out, 100, BLOCK=16)
print(out.item())
'''


def _run(patched: bool):
    return subprocess.run([sys.executable, "-c", KERNEL.format(patched=patched)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
                               "CUDA_VISIBLE_DEVICES": ""})


def test_a_k_loop_runs_under_the_interpreter_with_numpys_stricter_scalars():
    done = _run(True)
    assert done.returncode == 0 and done.stdout.strip() == "4950.0", done.stderr[-2000:]


def test_without_it_the_same_loop_fails_there():
    """(So the test above tests something: numpy's strictness is in force.)"""
    done = _run(False)
    said = done.stderr + done.stdout
    assert done.returncode != 0 and ("0-dimensional" in said or "ndim > 0" in said), said
