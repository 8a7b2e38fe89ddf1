"""benchmarks/predictive_steps.py's measure on data whose answer is known: the same process is at the held-out
level; a generator whose first steps are wrong is well above it, at every step (the regressor it trains is
worse throughout, not only where the samples differ)."""
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import predictive_steps  # noqa: E402


def lead_lag(n, seed, length=12, start=None):
    """Feature 0 an AR(1) around 0.5; the last feature follows it one step later; feature 1 noise. start: the
    first 3 steps of feature 0 replaced by this value (a generator whose state has not settled)."""
    rng = np.random.default_rng(seed)
    x = np.empty((n, length, 3))
    a = 0.5 + 0.15 * rng.standard_normal(n)
    for t in range(length):
        a = 0.5 + 0.8 * (a - 0.5) + 0.09 * rng.standard_normal(n)
        x[:, t, 0] = a
    if start is not None:
        x[:, :3, 0] = start
    x[:, :, 1] = rng.uniform(0, 1, (n, length))
    x[:, 0, 2] = 0.5
    x[:, 1:, 2] = x[:, :-1, 0] + 0.01 * rng.standard_normal((n, length - 1))
    return list(np.clip(x, 0, 1).astype(np.float32))


def test_the_same_process_has_no_gap_and_wrong_starts_have_one():
    real, held = lead_lag(300, 0), lead_lag(300, 1)
    same = predictive_steps.measure(real, held, lead_lag(300, 2), seeds=2, iterations=1000)
    assert len(same["generated MAE per step"]) == 11 and len(same["gap per seed (%)"]) == 2
    assert abs(same["generated above held-out (%)"]) < 6
    assert np.isclose(np.mean(same["generated MAE per step"]), same["generated MAE"])  # equal lengths
    stuck = predictive_steps.measure(real, held, lead_lag(300, 2, start=0.5), seeds=2, iterations=1000)
    per = np.asarray(stuck["generated above held-out per step (%)"])
    assert stuck["generated above held-out (%)"] > same["generated above held-out (%)"] + 8
    assert np.all(per > 5)
