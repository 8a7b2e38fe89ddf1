"""benchmarks/window_covariance.py's measures on series whose answers are known."""
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import window_covariance  # noqa: E402


def var1(rng, N, A, L=12):
    """A VAR(1) process x_t = x_t-1 A^T + e_t, started at its stationary law (approximately: 50 burn-in steps)."""
    x = np.zeros((N, L + 50, A.shape[0]))
    for t in range(1, L + 50):
        x[:, t] = x[:, t - 1] @ A.T + rng.standard_normal((N, A.shape[0]))
    return x[:, 50:]


def test_the_same_process_is_at_the_held_out_level_and_a_reversed_lead_lag_is_not():
    rng = np.random.default_rng(0)
    A = np.array([[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.6, 0.0, 0.3]])  # feature 0 leads the last one
    train, holdout, same = var1(rng, 3000, A), var1(rng, 1000, A), var1(rng, 1000, A)
    r = window_covariance.measure(train, holdout, same)
    for lags in (0, 1, 2):
        assert r[f"lag {lags}, generated: |M - I|^2 / D"] < 3 * r[f"lag {lags}, held-out: |M - I|^2 / D"] + 1e-3
    assert abs(r["linear predictor, generated above real (%)"]) < 2.0
    # the last feature leads feature 0 instead: lag-0 moments nearly alike, the windows and the predictor not
    reversed_lead = var1(rng, 1000, np.array([[0.3, 0.0, 0.6], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5]]))
    bad = window_covariance.measure(train, holdout, reversed_lead)
    assert bad["lag 1, generated: |M - I|^2 / D"] > 10 * r["lag 1, generated: |M - I|^2 / D"]
    assert bad["linear predictor, generated above real (%)"] > 10.0
    lo, hi = bad["lag 1, generated: eigenvalues"]
    assert lo < 0.8 and hi > 1.2
