"""The memorisation check: nearest-training distances against a direct computation, copies found, independent
samples at the held-out level, and the evaluate section's warning where held-out windows share steps."""
import importlib

import numpy as np
import pytest

from gan_sru import DataError, metrics
from gan_sru.commands.evaluate_memorisation import memorisation_markdown, memorisation_section, shares_steps

memorisation = importlib.import_module("gan_sru.metrics.memorisation")  # the module (the package exports the function)


def brute(queries, references):
    """A query of length l against the references of at least l steps, cut to l; longer than every reference:
    cut to the longest reference length."""
    longest = max(len(r) for r in references)
    out = []
    for q in queries:
        n = min(len(q), longest)
        out.append(min(np.sqrt(np.mean((np.asarray(q[:n], float) - np.asarray(r[:n], float)) ** 2))
                       for r in references if len(r) >= n))
    return np.array(out)


def test_nearest_distances_match_a_direct_computation_with_ragged_lengths(monkeypatch):
    rng = np.random.default_rng(0)
    refs = [rng.uniform(0, 1, (n, 3)) for n in rng.integers(4, 9, 40)]
    queries = [rng.uniform(0, 1, (n, 3)) for n in rng.integers(2, 12, 300)]  # some longer than every reference
    np.testing.assert_allclose(metrics.nearest_distances(queries, refs), brute(queries, refs), rtol=1e-9,
                               atol=1e-9)
    monkeypatch.setattr(memorisation, "REF_CHUNK", 7)  # references a few at a time: the same minimum
    monkeypatch.setattr(memorisation, "CHUNK", 5)
    np.testing.assert_allclose(metrics.nearest_distances(queries, refs), brute(queries, refs), rtol=1e-9,
                               atol=1e-9)
    assert metrics.nearest_distances([refs[3]], refs)[0] == pytest.approx(0.0, abs=1e-7)
    with pytest.raises(DataError, match="0 queries and 40 references"):
        metrics.nearest_distances([], refs)
    with pytest.raises(DataError, match="queries have 2 features, references 3"):
        metrics.nearest_distances([rng.uniform(0, 1, (5, 2))], refs)


def test_copies_are_found_and_independent_samples_sit_at_the_floor():
    rng = np.random.default_rng(1)
    sample = lambda n: list(rng.uniform(0, 1, (n, 12, 4)))  # noqa: E731
    training, held = sample(600), sample(400)
    fresh = metrics.memorisation(training, sample(400), held)
    assert 0.9 < fresh["median_ratio"] < 1.1 and fresh["closer_than_holdout_q05"] < 0.12
    assert len(fresh["distances"]["generated"]) == 400 and len(fresh["distances"]["holdout"]) == 400
    copies = [training[i] + 0.001 * rng.standard_normal((12, 4)) for i in range(200)] + sample(200)
    copied = metrics.memorisation(training, copies, held)
    assert copied["closer_than_holdout_q05"] == pytest.approx(0.5, abs=0.06)  # the 200 near-copies, about
    assert copied["generated"]["q05"] < 0.01 < fresh["generated"]["q05"]
    alone = metrics.memorisation(training, sample(10), held[:1])  # one held-out sequence: no floor
    assert alone["holdout"] is None and alone["median_ratio"] is None and alone["distances"]["holdout"] is None


def test_the_section_writes_its_picture_and_warns_where_held_out_windows_share_steps(tmp_path):
    rng = np.random.default_rng(2)
    training, fake, held = (list(rng.uniform(0, 1, (n, 8, 3))) for n in (50, 20, 20))
    data = {"window": 8, "window_stride": 1, "holdout_split": "random"}
    section = memorisation_section(training, fake, held, data, str(tmp_path), 7)
    assert (tmp_path / "memorisation.png").exists() and section["references"] == 50 and section["shared_steps"]
    text = memorisation_markdown(section)
    assert "no floor for this check" in text and "data.holdout_split: blocks" in text
    assert not shares_steps(dict(data, holdout_split="blocks")) and not shares_steps(dict(data, window=None))
    assert not shares_steps(dict(data, window_stride=8))
    quiet = memorisation_section(training, fake, held[:1], dict(data, window=None), str(tmp_path), 7)
    text = memorisation_markdown(quiet)
    assert "no floor" not in text and "held-out real (floor)" not in text
