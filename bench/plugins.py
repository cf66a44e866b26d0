"""Your own kernels in the harness: a file of yours, outside the repository, whose kernels
`check`, `time`, `model`, `profile`, `plot` and `report` run beside the built-in ones.

    python -m bench check --plugin my_kernels.py --kernels 'my_*,triton_v3*'
    python -m bench report --plugin my_kernels.py --kernels 'my_*,@ladder' --out results/mine
    CVT_PLUGINS=my_kernels.py:other.py python -m bench ...       (the same, for every command)

An installed package can bring kernels too, through the entry point group
``cuda_vs_triton.kernels`` (each entry a module that defines kernels, or a function that
returns a list of bench.registry.Kernel).

A plugin file defines kernels with the `kernel` decorator (docs/plugins.md has a worked
example, docs/examples/ the files the tests run):

    from bench.plugins import kernel

    @kernel(op="matmul", backend="triton", precisions=("fp32",),
            summary="my blocked matmul", twin="cuda_v3_smem_tiling")
    def my_matmul(a, b):
        ...                       # launch a Triton kernel (or a CUDA one built with
        return c                  # torch.utils.cpp_extension), return the output

The function takes the op's arguments (bench.kernels documents them: matmul a, b; softmax
x, dim; ...) and, if it has a parameter named `precision`, the precision label. A traffic
model (`model=`, a function of (shape, params) like those of bench/families/*/models.py,
with `params=` its tile parameters) makes `model` and `profile` compare it with the
counters. The --plugin paths travel in CVT_PLUGINS, so the processes the harness starts
(Nsight Compute's, the sanitizer's) see the same kernels.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path

ENV = "CVT_PLUGINS"
ENTRY_POINTS = "cuda_vs_triton.kernels"

_collecting: list | None = None     # the kernels a plugin module defines while it loads


class PluginError(ValueError):
    """A plugin that cannot be loaded or defines a bad kernel (one line: file and why)."""


def kernel(op: str, backend: str, precisions, summary: str, name: str | None = None,
           version: str = "plugin", twin: str | None = None, model=None, params=None,
           runs_on_cpu: bool | None = None, formula: str = "",
           min_capability: tuple[int, int] | None = None, needs: str = "",
           refuses=None):
    """Declares the decorated function a kernel of the suite (see the module doc).

    runs_on_cpu defaults to True for a Triton kernel (the interpreter runs it without a
    GPU) and False otherwise. refuses (shape -> reason, or ""): the shapes of its op it does
    not take, skipped with the reason by check, time and profile (Kernel.refuses). The
    registry (bench/registry.py) turns the declaration into its record and checks it: a
    known op, precisions and backend, a name of its own."""

    def declare(fn):
        source = inspect.getsourcefile(fn) or "<plugin>"
        takes_precision = "precision" in inspect.signature(fn).parameters
        if takes_precision:
            def loader(precision, fn=fn):
                return lambda *inputs: fn(*inputs, precision=precision)
        else:
            def loader(precision, fn=fn):
                return fn
        fixed = dict(params or {})
        record = dict(
            name=name or fn.__name__, op=op, backend=backend, version=version,
            summary=summary, source=_display(source), precisions=tuple(precisions),
            loader=loader, params=lambda precision=None: fixed, model=model, twin=twin,
            runs_on_cpu=(backend == "triton") if runs_on_cpu is None else runs_on_cpu,
            formula=formula, needs=needs, refuses=refuses,
            **({"min_capability": tuple(min_capability)} if min_capability else {}))
        fn.cvt_kernel = record          # what the harness would register
        if _collecting is not None:     # loaded by the harness (--plugin, CVT_PLUGINS, entry
            _collecting.append(record)  # points); imported any other way, e.g. to debug it,
        return fn                       # the file's functions are plain functions

    return declare


def _display(path: str) -> str:
    """The plugin's path as result files show it: relative to the working folder if inside."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def paths() -> list[str]:
    """The plugin files named in CVT_PLUGINS, in order."""
    return [p for p in os.environ.get(ENV, "").split(os.pathsep) if p]


def use(files) -> None:
    """Adds plugin files (made absolute, checked to exist) to CVT_PLUGINS for this process
    and the ones it starts (the registry reads CVT_PLUGINS again when it changes).
    PluginError if one is missing."""
    added = []
    for f in files:
        path = Path(f).expanduser().resolve()
        if not path.is_file():
            raise PluginError(f"--plugin {f}: no such file")
        added.append(str(path))
    os.environ[ENV] = os.pathsep.join(dict.fromkeys(paths() + added))


def import_file(path: str, module_name: str):
    """The module of a Python file given by its path, registered in sys.modules under
    `module_name` (dataclasses and pickling look it up); ImportError if it is no Python
    file. Plugin files and the labs' submissions (bench/grading/sandbox.py) load this way."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError("not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _load_file(path: str) -> list:
    global _collecting
    from bench import device

    device.setup()        # without a GPU, Triton's interpreter: before the file's @triton.jit
    module_name = f"cvt_plugin_{Path(path).stem}_{abs(hash(path)) % 10**8}"
    previous, _collecting = _collecting, []
    try:
        import_file(path, module_name)
        found = _collecting
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"plugin {path}: {type(exc).__name__}: {exc}") from exc
    finally:
        _collecting = previous
    if not found:
        raise PluginError(f"plugin {path}: defines no kernel (decorate a function with "
                          f"bench.plugins.kernel)")
    return found


def _load_entry_points() -> list:
    global _collecting
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=ENTRY_POINTS):
        previous, _collecting = _collecting, []
        try:
            loaded = ep.load()
            found += _collecting + (list(loaded()) if callable(loaded) else [])
        except Exception as exc:
            raise PluginError(f"entry point {ep.name} ({ep.value}): {type(exc).__name__}: "
                              f"{exc}") from exc
        finally:
            _collecting = previous
    return found


def records() -> list:
    """Every kernel the plugins define: the files of CVT_PLUGINS, then the entry points;
    each a dict of bench.registry.Kernel's fields (from @kernel) or a Kernel (from an entry
    point's function)."""
    found = []
    for path in paths():
        found += _load_file(path)
    return found + _load_entry_points()
