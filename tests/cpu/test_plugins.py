"""CPU tier: kernels from a file outside the harness (bench/plugins.py), and what a failed
check says about where it fails (bench/check.py: where_wrong)."""
from __future__ import annotations

import math
import textwrap

import torch

from bench import check, cli, plugins, registry



def _write(tmp_path, text, name="mine.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


GOOD = """
    from bench.plugins import kernel

    @kernel(op="copy", backend="torch", precisions=("fp32",), summary="x.clone(), mine",
            runs_on_cpu=True)
    def my_copy(x):
        return x.clone()
"""


def test_a_plugin_kernel_joins_the_registry_and_runs(plugin_env, tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    assert cli.main(["check", "-v", "--plugin", str(path), "--kernels", "my_*,torch_copy",
                     "--shapes", "1000"]) == 0
    out = capsys.readouterr().out
    assert "my_copy" in out and "torch_copy" in out and "4 passed" in out
    k = registry.get("my_copy")
    assert k.source.endswith("mine.py") and k.version == "plugin"
    import os

    assert str(path) in os.environ[plugins.ENV]     # the processes it starts see it too


def test_plugin_mistakes_are_one_line_with_exit_2(plugin_env, tmp_path, capsys):
    cases = {
        "missing": (tmp_path / "nope.py", "no such file"),
        "op": (_write(tmp_path, GOOD.replace('op="copy"', 'op="gemm"'), "op.py"),
               "op 'gemm' is no op of the suite"),
        "precision": (_write(tmp_path, GOOD.replace('("fp32",)', '("fp64",)'), "p.py"),
                      "unknown precision 'fp64'"),
        "twice": (_write(tmp_path, GOOD.replace("def my_copy", "def torch_copy"), "t.py"),
                  "kernel names defined twice: torch_copy"),
        "empty": (_write(tmp_path, "x = 1\n", "e.py"), "defines no kernel"),
        "raises": (_write(tmp_path, "raise ImportError('no module named foo')\n", "r.py"),
                   "ImportError: no module named foo"),
    }
    for what, (path, message) in cases.items():
        registry.forget()
        plugin_env.setenv(plugins.ENV, "")
        assert cli.main(["list", "--plugin", str(path)]) == 2, what
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, (what, err)


def test_a_plugin_file_imported_to_debug_it_gives_plain_functions():
    """Imported as any module (a student debugging it), @kernel registers nothing and hands
    the function back, its declaration attached."""
    fn = plugins.kernel(op="copy", backend="torch", precisions=("fp32",), summary="s")(
        lambda x: x + 1)
    assert fn(1) == 2 and fn.cvt_kernel["op"] == "copy"


def test_a_plugins_bug_in_its_name_is_selected_by_its_glob(plugin_env, tmp_path):
    """The '_bug_' rule leaves out the catalog's deliberately wrong kernels, never a
    plugin's: 'my_*' selects my_matmul_bug_kmask."""
    f = tmp_path / "mine.py"
    f.write_text("from bench.plugins import kernel\n\n\n"
                 "@kernel(op='copy', backend='torch', precisions=('fp32',), summary='s')\n"
                 "def my_copy_bug_kmask(x):\n    return x.clone()\n")
    registry.forget()
    plugin_env.setenv(plugins.ENV, str(f))
    assert [k.name for k in registry.select("my_*")] == ["my_copy_bug_kmask"]
    assert "my_copy_bug_kmask" in [k.name for k in registry.select("*")]
    # the catalog's own stay out of a glob that does not ask for bugs
    assert not any("_bug_" in k.name for k in registry.select("triton_*"))


def test_entry_points_bring_kernels(plugin_env, monkeypatch):
    from bench.registry import Kernel

    record = Kernel(name="ep_copy", op="copy", backend="torch", version="plugin",
                    summary="from an entry point", source="pkg", precisions=("fp32",),
                    loader=lambda p: (lambda x: x.clone()), runs_on_cpu=True)

    class EntryPoint:
        name, value = "mine", "pkg:kernels"

        def load(self):
            return lambda: [record]

    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: [EntryPoint()] if group == plugins.ENTRY_POINTS else [])
    assert registry.get("ep_copy") is record


def test_precision_reaches_a_function_that_asks_for_it(plugin_env, tmp_path):
    path = _write(tmp_path, """
        from bench.plugins import kernel

        @kernel(op="matmul", backend="torch", precisions=("fp32", "tf32"), summary="s",
                runs_on_cpu=True)
        def my_mm(a, b, precision):
            return (a @ b) if precision == "fp32" else (a @ b) * 0 + 7
    """)
    plugins.use([path])
    k = registry.get("my_mm")
    a = torch.ones(2, 3)
    assert torch.equal(k.runner("fp32")(a, a.T), a @ a.T)
    assert torch.equal(k.runner("tf32")(a, a.T), torch.full((2, 2), 7.0))


# --- where a failed check fails ------------------------------------------------------------

def _bad(shape, where):
    err, out = torch.zeros(shape, dtype=torch.float64), torch.zeros(shape)
    where(err, out)
    return check.where_wrong(err, 1e-6, out)


def test_where_wrong_names_the_pattern():
    def last_col(e, o):
        e[:, -1] = math.inf
        o[:, -1] = math.nan

    text = _bad((300, 200), last_col)
    assert text.startswith("300 of 60000 elements wrong (0.5%), first at [0, 199]")
    assert "all NaN: never written" in text and "the last column (199)" in text

    def tail(e, o):
        e[256:, :] = 1

    text = _bad((300, 200), tail)
    assert "whole rows: the last 44 rows (256-299): they start at 256, a multiple of 256" in text

    def stride(e, o):
        e[:, 31::32] = 1

    assert "every column with index % 32 == 31" in _bad((100, 256), stride)

    def scattered(e, o):
        e[5, 7] = e[100, 3] = 1

    assert "in rows 5, 100; in columns 3, 7" in _bad((300, 200), scattered)
    assert _bad((10,), lambda e, o: e.fill_(1)).endswith("every element")
    assert _bad((4, 4), lambda e, o: None) == ""


def test_a_failed_check_row_carries_the_diagnosis():
    from bench import problems

    class Forgetful:
        name, op, backend, runs_on_cpu = "forgetful", "matmul", "torch", True
        precisions = ("fp32",)
        min_capability = registry.ARCH_FLOOR

        def runner(self, precision):
            def run(a, b):
                c = torch.empty(a.shape[0], b.shape[1])
                c[:-1] = a[:-1] @ b                   # the last row is never written
                return c
            return run

    problem = problems.get("matmul")
    r = check.check_one(Forgetful(), problem, problem.parse_shape("33x31x19"), "fp32")
    assert r.status == "FAIL" and "whole rows: the last row (32)" in r.note
    assert "all NaN" in r.note


def test_a_plugin_kernel_may_refuse_shapes(plugin_env, tmp_path, capsys):
    """refuses: check skips the shapes the kernel does not take, with its reason."""
    path = _write(tmp_path, """
        from bench.plugins import kernel

        @kernel(op="copy", backend="torch", precisions=("fp32",), summary="short copies only",
                runs_on_cpu=True, refuses=lambda s: "over 5000 elements" if s.numel > 5000 else "")
        def my_short_copy(x):
            assert x.numel() <= 5000, "called on a shape it refuses"
            return x.clone()
    """)
    assert cli.main(["check", "-v", "--plugin", str(path), "--kernels", "my_*",
                     "--shapes", "1000,9000"]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 0 failed, 1 skipped" in out and "elements" in out   # numbers folded
