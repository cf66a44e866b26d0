"""The split softmax's shared-memory path (triton_impl/softmax_split_smem.py, Gluon + TMA)
where Triton interprets its kernels: Gluon does not run there, so _softmax_split(smem=True)
says the shared-memory kernel is not available and runs the register kernels, correctly.
(Its plans and its compiled code: tests/cpu/test_softmax_split_smem.py; on the H100:
tests/gpu/test_softmax_split_smem.py.)"""
from __future__ import annotations


def test_the_interpreter_runs_the_register_kernels():
    import torch

    from triton_impl import softmax_split, softmax_split_smem

    x = torch.randn(3, 4096, dtype=torch.bfloat16)
    assert not softmax_split_smem.available(x)
    y = softmax_split._softmax_split(x, smem=True)
    assert (y.double() - torch.softmax(x.double(), -1)).abs().max() < 1e-2
