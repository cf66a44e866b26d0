"""Cheat: an einsum (torch).
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

def vector_add(x, y):
    return torch.einsum("i,i->i", x, torch.ones_like(y)) + y
