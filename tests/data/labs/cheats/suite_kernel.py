"""Cheat: calls this suite's own Triton kernel."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from triton_impl import vector_add as suite  # noqa: E402


def vector_add(x, y):
    return suite.vector_add(x, y)
