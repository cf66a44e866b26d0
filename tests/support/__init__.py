"""Helpers and data shared by the test folders; not tests."""
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"   # stored samples: result set, ncu CSV
