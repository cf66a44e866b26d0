"""CPU tier: bench.kernels, the Python API: one function per registry kernel, named as the
registry names it, with its op's arguments, a precision keyword, help() that lists them,
and docs/api.md's table kept current."""
from __future__ import annotations

import inspect
import pydoc
from pathlib import Path

import pytest

from bench import kernels, problems, registry
from bench.problem_base import REQUIRED

ROOT = Path(__file__).resolve().parents[2]


def test_every_registry_kernel_has_a_function():
    assert kernels.names() == [k.name.replace(".", "_") for k in registry.kernels()]
    for k in registry.kernels():
        fn = kernels.get(k.name)
        assert fn is getattr(kernels, k.name.replace(".", "_"))
        assert fn.kernel is k
        params = list(inspect.signature(fn).parameters.values())
        assert [p.name for p in params[:-1]] == [n for n, _ in problems.get(k.op).arguments]
        assert params[-1].name == "precision" and params[-1].kind is params[-1].KEYWORD_ONLY
        assert k.summary in fn.__doc__ and k.source in fn.__doc__


def test_arguments_of_every_op_match_its_inputs():
    """The API's argument list has as many entries as the op's inputs, so a runner gets
    exactly what the harness gives it."""
    for problem in problems.problems().values():
        shape = problem.parse_shapes(problem.check_shapes["cpu"])[0]
        precision = next(k.precisions[0] for k in registry.kernels() if k.op == problem.name)
        inputs = problem.inputs(shape, precision)
        assert len(inputs) == len(problem.arguments), problem.name
        assert problem.arguments[0][1] is REQUIRED


def test_help_lists_every_kernel():
    text = pydoc.render_doc(kernels, renderer=pydoc.plaintext)
    for name in kernels.names():
        assert f"{name}(" in text, name
    assert "cuda_v3_smem_tiling(a, b, *, precision=None)" in text
    assert "triton_softmax_online(x, dim=-1, *, precision=None)" in text


def test_unknown_names_and_wrong_dtypes_say_what_would_work():
    torch = pytest.importorskip("torch")
    with pytest.raises(AttributeError, match="did you mean triton_v3_smem_tiling"):
        kernels.triton_v3_smem_tilng
    a = torch.ones(2, 2, dtype=torch.float16)
    with pytest.raises(TypeError, match=r"triton_v3_smem_tiling: inputs of dtype float16 fit "
                                        r"none of its precisions: fp32 \(float32\)"):
        kernels.triton_v3_smem_tiling(a, a)
    with pytest.raises(ValueError, match="precision 'bf16' is not supported"):
        kernels.triton_v3_smem_tiling(a.float(), a.float(), precision="bf16")
    with pytest.raises(TypeError, match="missing a required argument: 'b'"):
        kernels.triton_v3_smem_tiling(a.float())


def test_a_kernel_of_one_precision_takes_its_dtype():
    """cuda_t4_tf32 has only tf32, stored as float32: float32 inputs mean tf32 for it (the
    precision is still named in every result); other dtypes say what would work."""
    torch = pytest.importorskip("torch")
    kernel = registry.get("cuda_t4_tf32")
    assert kernel.precisions == ("tf32",)
    assert kernels._precision_of(kernel, [torch.ones(2, 2)], None) == "tf32"
    with pytest.raises(TypeError, match=r"cuda_t4_tf32: inputs of dtype float16 fit none of "
                                        r"its precisions: tf32 \(float32\)"):
        kernels._precision_of(kernel, [torch.ones(2, 2, dtype=torch.float16)], None)
    # kernels of several precisions keep float32 = fp32 (IEEE), asked for or refused
    persistent = registry.get("triton_persistent")
    with pytest.raises(TypeError, match="fit none of its precisions"):
        kernels._precision_of(persistent, [torch.ones(2, 2)], None)


def test_docs_api_table_is_current():
    text = (ROOT / "docs" / "api.md").read_text()
    assert kernels.markdown() in text, ("docs/api.md is stale: replace its table with "
                                        "`python -m bench list --markdown`")
