import os
import shutil

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """Fresh random inputs per test, with the seed printed on failure (MIMORX_TEST_SEED)."""
    seed = int(os.environ.get("MIMORX_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
    print(f"MIMORX_TEST_SEED={seed}")
    return np.random.default_rng(seed)


@pytest.fixture
def cli():
    """The mimorx CLI of the same tree (MIMORX_CLI, set by scripts/test), else skip."""
    path = os.environ.get("MIMORX_CLI") or shutil.which("mimorx")
    if not path or not os.path.exists(path):
        pytest.skip("the mimorx CLI is not built (set MIMORX_CLI)")
    return path
