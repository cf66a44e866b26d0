"""GPU tier: needs a CUDA GPU (skipped without one)."""
