"""Scores on mixed data (numeric features first, then categorical one-hot blocks): the predictive score predicts
a numeric feature from all the others, one-hots included, and equals the direct computation with that feature
moved last; the correlation of a one-hot column is the point-biserial correlation."""
import numpy as np
import pytest
from scipy.stats import pointbiserialr

from gan_sru import DataError
from gan_sru.commands.evaluate import predictive_target
from gan_sru.data.attributes import Encoding
from gan_sru.metrics import correlation_matrix, predictive_score


def mixed(rng, n=40, length=12):
    """(n, length, 4): two numeric features, then a 2-category one-hot block; numeric 1 follows the category."""
    cat = rng.integers(0, 2, (n, length))
    x0 = rng.random((n, length))
    x1 = np.clip(0.2 + 0.6 * np.roll(cat, 1, axis=1) + rng.normal(0, 0.05, (n, length)), 0, 1)
    return np.stack([x0, x1, cat == 0, cat == 1], axis=-1).astype(np.float32)


KW = dict(iterations=40, batch_size=16, hidden_size=4, seed=3, progress=False)


def test_predictive_target_is_a_numeric_feature_and_matches_direct():
    rng = np.random.default_rng(0)
    real, fake = mixed(rng), mixed(rng)
    got = predictive_score(fake, real, target=1, **KW)
    order = [0, 2, 3, 1]  # the target moved last, the others in their order: the default task
    direct = predictive_score(fake[..., order], real[..., order], **KW)
    assert got["mae"] == pytest.approx(direct["mae"], rel=1e-6)
    noise = rng.random(fake.shape).astype(np.float32)
    bad = predictive_score(noise, real, target=1, **KW)
    assert bad["mae"] > got["mae"] > 0  # not constant: training on noise predicts worse
    with pytest.raises(DataError, match="target feature 4; expected 0 to 3"):
        predictive_score(fake, real, target=4, **KW)


def test_predictive_target_of_an_encoding():
    assert predictive_target(None) is None
    assert predictive_target(Encoding([], [["a", "b"]], 2)) == 1  # the last numeric feature, not a one-hot
    assert predictive_target(Encoding([], [["a", "b"]], 0)) == -1  # no numeric feature: no predictive score
    assert predictive_target(Encoding([{"name": "k", "kind": "numeric"}], [], 3)) is None


def test_correlation_of_a_one_hot_column_is_point_biserial():
    rng = np.random.default_rng(1)
    x = mixed(rng)
    flat = x.reshape(-1, 4).astype(np.float64)
    r = pointbiserialr(flat[:, 3], flat[:, 1]).statistic
    n = len(flat)
    assert correlation_matrix(x)[3, 1] == pytest.approx(r * (n - 1) / n, rel=1e-5)
