"""GPU tier: the CUDA worked example of docs/plugins.md (docs/examples/my_cuda_matmul.py,
built with torch.utils.cpp_extension.load_inline) is checked by the harness on odd shapes."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow       # a CUDA extension built by load_inline: about a minute
def test_cuda_example_checks(plugin_env, capsys):
    code = cli.main(["check", "-v", "--plugin",
                     str(ROOT / "docs" / "examples" / "my_cuda_matmul.py"),
                     "--kernels", "my_cuda*", "--shapes", "1x1x1,17x13x7,130x129x33",
                     "--exact"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "0 failed" in out and "my_cuda_matmul" in out
