"""Kernels compiled for sm_90 from the CPU tier: the tier interprets Triton kernels
(TRITON_INTERPRET=1), and an interpreted kernel cannot be compiled, so the compiles run in a
subprocess without it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def json_from_subprocess(args: list[str], timeout: int = 1800):
    """python ARGS... run from the checkout without TRITON_INTERPRET; its output parsed as
    JSON, or its last line where something was printed before (a failure asserts, with the
    end of its stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return json.loads(r.stdout.strip().splitlines()[-1])
