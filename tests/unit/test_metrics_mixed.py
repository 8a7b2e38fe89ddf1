"""Scores on mixed data (numeric features first, then categorical one-hot blocks): the predictive score predicts
every numeric feature from all features, one-hots included as inputs only, and equals a direct computation;
the correlation of a one-hot column is the point-biserial correlation."""
import numpy as np
import pytest
from scipy.stats import pointbiserialr

from gan_sru import DataError
from gan_sru.commands.evaluate import predictive_numeric, score_sets
from gan_sru.data.attributes import Encoding
from gan_sru.metrics import correlation_matrix, predictive_score
from gan_sru.metrics.common import batch_index
from gan_sru.metrics.gru import Adam, GRUModel


def mixed(rng, n=40, length=12):
    """(n, length, 4): two numeric features, then a 2-category one-hot block; numeric 1 follows the category."""
    cat = rng.integers(0, 2, (n, length))
    x0 = rng.random((n, length))
    x1 = np.clip(0.2 + 0.6 * np.roll(cat, 1, axis=1) + rng.normal(0, 0.05, (n, length)), 0, 1)
    return np.stack([x0, x1, cat == 0, cat == 1], axis=-1).astype(np.float32)


KW = dict(iterations=40, batch_size=16, hidden_size=4, seed=3, progress=False)


def direct_score(train, test, numeric, iterations, batch_size, hidden_size, seed, learning_rate=1e-2):
    """The predictive score written out for equal lengths: a GRU reads all features at steps 0..t and
    predicts the first `numeric` ones at t+1; the MAE over those columns only."""
    C = train.shape[2]
    rng = np.random.RandomState([seed, 0])
    model = GRUModel(C, hidden_size, "steps", rng, num_outputs=numeric)
    solver = Adam(model.params, learning_rate)
    steps = np.full(len(train), train.shape[1] - 1)
    for _ in range(iterations):
        idx = np.arange(len(train))[batch_index(rng, len(train), batch_size)]
        solver.update(model.loss_and_grads(train[idx, :-1], steps[idx], train[idx, 1:, :numeric])[1])
    pred = model.predict(test[:, :-1], np.full(len(test), test.shape[1] - 1))
    return float(np.mean(np.abs(pred.astype(np.float64) - test[:, 1:, :numeric])))


def test_predictive_score_of_mixed_data_predicts_the_numeric_features_and_matches_direct():
    rng = np.random.default_rng(0)
    real, fake = mixed(rng), mixed(rng)
    got = predictive_score(fake, real, numeric=2, **KW)
    assert len(got["mae_per_feature"]) == 2  # the one-hot columns are inputs, never targets
    assert got["mae"] == pytest.approx(direct_score(fake, real, 2, 40, 16, 4, 3), rel=1e-5)
    noise = rng.random(fake.shape).astype(np.float32)
    bad = predictive_score(noise, real, numeric=2, **KW)
    assert bad["mae"] > got["mae"] > 0  # not constant: training on noise predicts worse
    flipped = real.copy()
    flipped[..., 2:] = real[..., :1:-1]  # the other category: the inputs matter to the numeric prediction
    assert predictive_score(fake, flipped, numeric=2, **KW)["mae"] != got["mae"]
    with pytest.raises(DataError, match="5 numeric features of 4; expected 1 to 4"):
        predictive_score(fake, real, numeric=5, **KW)


def test_predictive_numeric_of_an_encoding():
    assert predictive_numeric(None) is None
    assert predictive_numeric(Encoding([], [["a", "b"]], 2)) == 2  # the numeric features, not the one-hots
    assert predictive_numeric(Encoding([], [["a", "b"]], 0)) == 0  # no numeric feature: no predictive score
    assert predictive_numeric(Encoding([{"name": "k", "kind": "numeric"}], [], 3)) is None


def test_score_sets_passes_the_numeric_count_and_skips_data_without_one():
    rng = np.random.default_rng(2)
    real, fake = mixed(rng), mixed(rng)
    settings = {"discriminative": dict(iterations=2, batch_size=16, hidden_size=4),
                "predictive": dict(iterations=40, batch_size=16, hidden_size=4)}
    out = score_sets(real, fake, 1, 3, settings, 0.0, progress=False, numeric=2)
    assert out["predictive"] == predictive_score(fake, real, numeric=2, **KW)
    assert score_sets(real, fake, 1, 3, settings, 0.0, progress=False, numeric=0)["predictive"] is None


def test_correlation_of_a_one_hot_column_is_point_biserial():
    rng = np.random.default_rng(1)
    x = mixed(rng)
    flat = x.reshape(-1, 4).astype(np.float64)
    r = pointbiserialr(flat[:, 3], flat[:, 1]).statistic
    n = len(flat)
    assert correlation_matrix(x)[3, 1] == pytest.approx(r * (n - 1) / n, rel=1e-5)
