"""Privacy scores: AUC and adversarial accuracy against direct scipy computations, and known cases: a generator
that returns its training sequences is caught, one that returns held-out (unseen) data is not."""
import numpy as np
import pytest
from scipy.spatial.distance import cdist
from scipy.stats import mannwhitneyu

from gan_sru import DataError
from gan_sru.metrics import privacy as pv


def walks(rng, n, length=12, c=3):
    return [np.clip(0.5 + np.cumsum(rng.normal(0, 0.05, (length, c)), axis=0), 0, 1) for _ in range(n)]


def test_auc_matches_mann_whitney():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.3, 1, 40).round(1), rng.normal(0, 1, 55).round(1)  # rounded: ties
    u = mannwhitneyu(a, b).statistic
    assert pv.auc(a, b) == pytest.approx(u / (40 * 55))
    assert pv.auc([1, 2], [0, -1]) == 1.0 and pv.auc([0, 0], [0, 0]) == 0.5


def test_adversarial_accuracy_matches_scipy():
    rng = np.random.default_rng(1)
    t, g = rng.random((30, 8)), rng.random((30, 8))
    d_tg, d_tt, d_gg = cdist(t, g), cdist(t, t), cdist(g, g)
    np.fill_diagonal(d_tt, np.inf)
    np.fill_diagonal(d_gg, np.inf)
    want = 0.5 * (np.mean(d_tg.min(1) > d_tt.min(1)) + np.mean(d_tg.min(0) > d_gg.min(1)))
    assert pv._aa(t, g) == pytest.approx(want)
    assert np.allclose(pv.pairwise_distances(t, g), d_tg)


def test_copies_caught_unseen_not():
    rng = np.random.default_rng(2)
    train, held, fresh = walks(rng, 120), walks(rng, 120), walks(rng, 120)
    copies = pv.privacy_scores(train, held, [s.copy() for s in train], seed=0)
    mia, aa = copies["membership_inference"], copies["adversarial_accuracy"]
    assert mia["auc"] == 1.0 and mia["interval"][0] > 0.4
    assert aa["aa_train_synthetic"] == 0.0 and aa["privacy_loss"] > 0.3
    for fake in (fresh, held):  # fresh draws, and the held-out data itself: neither says who was in training
        res = pv.privacy_scores(train, held, fake, seed=0)
        assert res["membership_inference"]["interval"][0] <= 0.0
        assert res["adversarial_accuracy"]["privacy_loss"] <= 0.05
    fair = pv.privacy_scores(train, held, fresh, seed=0)
    lo, hi = fair["membership_inference"]["interval"]
    assert lo <= 0.0 <= hi and abs(fair["adversarial_accuracy"]["aa_train_synthetic"] - 0.5) < 0.15


def test_small_holdout_warns_and_none():
    rng = np.random.default_rng(3)
    res = pv.privacy_scores(walks(rng, 20), walks(rng, 5), walks(rng, 20))
    assert "at least 10" in res["membership_inference"]["warning"]
    none = pv.privacy_scores(walks(rng, 20), walks(rng, 1), walks(rng, 20))
    assert none["membership_inference"] is None and none["adversarial_accuracy"] is None
    assert "1 held-out" in none["note"]


def test_variable_lengths_cut_and_feature_mismatch():
    rng = np.random.default_rng(4)
    flat = pv.flatten_common([rng.random((9, 2))], [rng.random((5, 2)), rng.random((7, 2))])
    assert flat[0].shape == (1, 10) and flat[1].shape == (2, 10)
    with pytest.raises(DataError, match="feature count"):
        pv.flatten_common([rng.random((5, 2))], [rng.random((5, 3))])


def test_tpr_at_fpr_known_cases():
    neg = np.arange(200) / 200.0  # 0 .. 0.995
    # k = 2 negatives allowed: the threshold is the second highest negative, 0.99; only 0.995 is above it
    assert pv.tpr_at_fpr([0.999, 0.992, 0.5, 0.1], neg) == (0.5, 0.005)
    assert pv.tpr_at_fpr([2.0], [0.0, 1.0]) == (1.0, 0.0)  # fewer negatives than 1 / fpr: above all of them
    assert pv.tpr_at_fpr([0.5, 0.7], [0.1, 0.5, 0.7], fpr=0.5) == (0.0, 0.0)  # ties are not flagged


def test_a_few_copies_among_many_show_at_low_fpr():
    """A generator that copies 10% of a large training set: the AUC moves a little, the low-FPR rate a lot."""
    rng = np.random.default_rng(5)
    train, held = walks(rng, 1000), walks(rng, 200)
    fake = [train[i].copy() for i in rng.choice(1000, 100, replace=False)] + walks(rng, 100)
    mia = pv.membership_inference(train, held, fake, seed=0)
    assert mia["advantage"] < 0.15 and mia["low_fpr"] <= 0.01
    assert mia["tpr_at_low_fpr"] > 0.05 > 5 * mia["low_fpr"]
    for unseen in (walks(rng, 200), held):  # fresh draws, or the held-out data itself: nothing flagged
        assert pv.membership_inference(train, held, unseen, seed=0)["tpr_at_low_fpr"] <= 0.03
