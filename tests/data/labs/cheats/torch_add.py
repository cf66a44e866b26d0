"""Cheat: torch computes the sum."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

def vector_add(x, y):
    return x + y
