import numpy as np
import pytest

import mimorx
from mimorx import lattice


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batched_lll_gives_reduced_bases_of_the_same_lattice(rng, dtype):
    b, n, m = 6, 8, 6
    basis = rng.integers(-50, 50, (b, n, m)).astype(np.float64)
    work = mimorx.column_major(basis.astype(dtype))
    red, t, status = lattice.Lll(n, m)(work)
    assert red is work
    assert (status == 0).all()
    for i in range(b):
        np.testing.assert_allclose(basis[i] @ t[i], red[i], rtol=0, atol=1e-6 * np.abs(basis).max() * 10 if dtype == np.float32 else 1e-9)
        assert round(abs(np.linalg.det(t[i].astype(np.float64)))) == 1
        eps = (0.01, 1e-3) if dtype == np.float32 else (1e-6, 1e-9)
        rep = lattice.check(np.asfortranarray(red[i].astype(np.float64)), eps_mu=eps[0],
                            eps_delta=eps[1])
        assert rep["reduced"], rep["message"]


def test_single_basis_convenience_and_singular_status(rng):
    b = rng.standard_normal((5, 4))
    red, t, status = lattice.lll(b)
    assert status == "reduced"
    np.testing.assert_allclose(b @ t, red, atol=1e-9)
    dep = np.zeros((1, 4, 3))
    dep[0, :, 0] = [1, 2, 3, 4]
    dep[0, :, 1] = [2, 4, 6, 8]
    dep[0, :, 2] = [0, 1, 0, 1]
    _, _, st = lattice.Lll(4, 3)(mimorx.column_major(dep))
    assert lattice.STATUS[int(st[0])] == "singular"


def test_lll_errors():
    with pytest.raises(ValueError, match="^basis: "):
        lattice.Lll(4, 4)(np.zeros((2, 4, 4)))  # row-major
    with pytest.raises(ValueError):
        lattice.Lll(3, 4)
    with pytest.raises(ValueError, match="method"):
        lattice.Lll(4, 4, method="fast")
