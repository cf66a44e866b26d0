"""Interpreter tier: the functions of bench.kernels run the Triton kernels and the torch
references on the CPU and give the reference's answer."""
from __future__ import annotations

import torch

from bench import kernels


def test_matmul_twins_and_precision_from_the_dtype():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(17, 13, generator=g), torch.randn(13, 7, generator=g)
    ref = a.double() @ b.double()
    for name in ("triton_v1_naive", "triton_v3_smem_tiling", "triton_grouped"):
        c = getattr(kernels, name)(a, b)
        assert c.dtype == torch.float32 and torch.allclose(c.double(), ref, atol=1e-5), name
    c16 = kernels.triton_grouped(a.half(), b.half())
    assert c16.dtype == torch.float16
    assert torch.allclose(c16.double(), a.half().double() @ b.half().double(), rtol=1e-2,
                          atol=1e-2)


def test_memory_ops_with_their_keyword_arguments():
    x = torch.randn(5, 300)
    assert torch.allclose(kernels.triton_softmax_online(x, dim=0), torch.softmax(x, 0),
                          atol=1e-6)
    assert torch.allclose(kernels.triton_softmax_row_sram(x), torch.softmax(x, -1), atol=1e-6)
    y = kernels.triton_relu_dropout(x, p=0.0)
    assert torch.equal(y, torch.relu(x))
    assert torch.equal(kernels.triton_relu_dropout(x, seed=3), kernels.triton_relu_dropout(x, 0.5, 3))
    assert torch.equal(kernels.triton_vector_add(x, x), x + x)
    assert torch.equal(kernels.torch_copy(x), x)
