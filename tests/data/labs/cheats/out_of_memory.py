"""Accident: asks for far more memory than the machine has."""
import torch


def vector_add(x, y):
    return torch.empty(1 << 50, dtype=torch.uint8)
