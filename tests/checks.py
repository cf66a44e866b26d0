"""The correctness assertion shared by the matmul test files (see bench/problems.py for the
error measure and its bound)."""
from bench.problems import matmul_error, matmul_tolerance


def assert_correct(out, a, b, precision: str, exact: bool) -> None:
    """exact: the error must be 0 (small-integer inputs); else within the bound."""
    err = matmul_error(out, a, b)
    if exact:
        assert err == 0.0, f"exact mode: error {err}"
    else:
        bound = matmul_tolerance(precision, a.shape[1])
        assert err <= bound, f"error {err:.3e} > bound {bound:.3e}"
