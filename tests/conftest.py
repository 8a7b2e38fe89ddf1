import gan_sru  # noqa: F401, I001  (first, before numpy: it picks OpenBLAS's kernels, see gan_sru/__init__.py)
import os

import nnabla as nn
import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def fresh_nnabla_state():
    """Every test starts on the CPU context with no parameters and a fixed seed."""
    nn.clear_parameters()
    nn.set_default_context(nn.Context(["cpu:float"], "CpuCachedArray", "0"))
    nn.set_auto_forward(False)
    np.random.seed(0)
    yield
    nn.clear_parameters()


def max_rel_err(actual, expected):
    """Normwise relative error: max |a - e| / max |e| (elementwise ratios are ill-posed near zero)."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    scale = max(np.abs(expected).max(), 1e-12)
    return float(np.abs(actual - expected).max() / scale)
