"""The online softmax's one-chunk rows (triton_impl/softmax.py, its default up to SRAM_MAX_N)
under the interpreter give the reference's answer on small, awkward shapes, and the answer of
the chunked loops."""
from __future__ import annotations

import pytest
import torch

from tests.support.checks import softmax_error, softmax_rows

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning")]


@pytest.mark.parametrize("shape", [(3, 100), (5, 1000), (2, 3001), (4, 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_online_one_chunk_rows_are_the_softmax(shape, dtype):
    from triton_impl import softmax

    x = softmax_rows(shape, dtype)
    y = softmax.softmax(x, -1, "online")
    err, bound = softmax_error(y, x, "fp32" if dtype == torch.float32 else "fp16")
    assert err <= bound


def test_online_one_chunk_rows_equal_the_chunked_kernel(monkeypatch):
    """A row up to SRAM_MAX_N is one chunk by default; the chunked loops (forced by
    ONE_CHUNK_MAX_N = 0) give the same softmax within the bound."""
    from triton_impl import softmax

    x = softmax_rows((3, 20000))                  # float32: one chunk, where 16384-element chunks took 2
    y = softmax.softmax(x, -1, "online")
    monkeypatch.setattr(softmax, "ONE_CHUNK_MAX_N", 0)
    y_chunks = softmax.softmax(x, -1, "online")
    torch.testing.assert_close(y, y_chunks, rtol=1e-5, atol=1e-9)
    err, bound = softmax_error(y, x, "fp32")
    assert err <= bound
