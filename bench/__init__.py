"""The harness of cuda-vs-triton: registry, correctness, timing, traffic models, plots, report.

Run `python -m bench --help`. Importing the package does nothing else.
"""
