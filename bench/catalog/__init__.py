"""Registry records, one module per family of kernels (see bench/registry.py)."""
