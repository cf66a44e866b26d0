"""CPU tier: the TMA rungs' staging in one pass each way (cuda/staging.cu, used by
bindings/matmul_ops.cpp where TMA cannot take the operands as they are), on the CPU emulator
with AddressSanitizer: the padded buffer holds the source's values and zeros around them,
every element written (it starts as 0xFF bytes), from sources off 16-byte alignment; the
unpadded copy equals the source, wherever it starts, and writes nothing past it; 2- and
4-byte elements; sizes and pointers the launcher must refuse. The GPU tier checks the staged
products themselves (tests/gpu/test_shape_paths.py, tests/gpu/test_matmul_cuda.py)."""
from __future__ import annotations

from tests.support import emulated

# (rows, cols, rows_p, cols_p, offset): K or N one past a multiple of 8 (the pad is 7 wide),
# already a multiple (nothing to pad, a pointer off alignment), one value, rows padded too
# (B's K rows), an empty source, and more pieces than one block of threads
SHAPES = [(3, 9, 3, 16, 0), (5, 17, 5, 24, 1), (4, 16, 4, 16, 3), (1, 1, 1, 8, 0),
          (7, 13, 9, 16, 2), (300, 41, 301, 48, 1)]


def test_pad_and_unpad_on_the_emulator(tmp_path):
    runner = emulated.build(tmp_path, "runner_staging.cpp", "staging_kernels.inc")
    out = emulated.run_built(runner, SHAPES)
    assert out.count(" ok") == len(SHAPES), out
