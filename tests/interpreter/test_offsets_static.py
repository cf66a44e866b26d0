"""No Triton kernel builds a pointer offset from a 32-bit product that can wrap.

tests/support/int32_offsets.py runs every registry kernel once through the interpreter,
records each launch's specialisation, compiles it for sm_90 with every integer argument typed
i32 (the worst case) and reads the TTIR: an `arith.muli` on i32 that flows into a `tt.addptr`
offset is a finding, and so are an i32 loop counter stepping by more than one towards a
size (`range(0, K, BLOCK_K)`) and an i32 size plus a constant (`tl.cdiv(M, BLOCK_M)`), which
wrap when the size is within a block of 2^31. A finding is allowed only where the source
line carries `i32 ok: <the bound>`.
The detector itself is tested on hand-written TTIR in tests/cpu/test_offsets_static.py; the
same kernels run at shapes past 2^31 on the GPU in tests/gpu/test_large_offsets.py.
"""
from __future__ import annotations

import pytest

from tests.support import int32_offsets as io

pytestmark = pytest.mark.slow   # ~30 s: interpreter runs, then ~40 compiles


@pytest.fixture(scope="module")
def scanned():
    return io.scan_in_subprocess()


def test_no_unproven_32_bit_offset(scanned):
    _launches, rows = scanned
    bad = [f"{r['file']}:{r['line']} ({r['kernel']}): {r['source']}" for r in rows
           if not r["allowed"]]
    assert not bad, ("32-bit products reach pointer offsets (use int64, or state the bound "
                     "with 'i32 ok: ...' on the line):\n" + "\n".join(bad))


def test_every_allowance_states_its_bound(scanned):
    _launches, rows = scanned
    for r in rows:
        assert len(r["why"]) >= 3, f"{r['file']}:{r['line']}: 'i32 ok:' without a bound"


def test_every_kernel_is_compiled_and_scanned(scanned):
    launches, _rows = scanned
    recorded = {l["kernel"] for l in launches if not l["skip"]}
    wrong = {k for k in io.jit_kernels() if "_bug_" in k}    # the guide's wrong copies
    missing = set(io.jit_kernels()) - recorded - set(io.NOT_RECORDED) - wrong
    assert not missing, f"kernels never recorded, so never scanned: {sorted(missing)}"
