"""The attribution of compute-sanitizer's reports to kernels, by the marker lines the target
prints (tests/support/sanitize_target.py); the sanitizer itself runs in
tests/gpu/test_sanitizer.py."""
from __future__ import annotations

from tests.support.sanitize_target import errors_by_kernel


def test_error_attribution():
    log = "\n".join(["== triton_copy 1000 fp32", "========= Invalid __global__ read of size 4",
                     "== cuda_copy 1000 fp32", "========= ERROR SUMMARY: 1 error"])
    assert errors_by_kernel(log) == {"triton_copy": 1}
