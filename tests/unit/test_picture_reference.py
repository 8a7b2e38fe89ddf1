"""Which real sequences the pictures show: sampling.json's reference and generate's real_vs_generated.png draw
theirs at random over the data with a fixed seed (picture_indices, as training's sample pictures), not the first
ones, which for windows of one long series are neighbours."""
from types import SimpleNamespace

import numpy as np

from gan_sru.commands.generate import PICTURE_REAL, picture_real
from gan_sru.data.summary import picture_indices, sampling_record


class Split(SimpleNamespace):
    def __len__(self):
        return len(self.sequences)


def windows(n, length=24, width=5):
    """n windows whose every value is the window's index: a reference sequence names where it came from."""
    seqs = [np.full((length, width), i / n, np.float32) for i in range(n)]
    attrs = np.arange(n, dtype=np.float32)[:, None]
    return SimpleNamespace(train=Split(sequences=seqs, lengths=np.full(n, length), attributes=attrs))


def reference_indices(record, n):
    return [int(round(s[0][0] * n)) for s in record["reference"]["sequences"]]


def test_the_sampling_reference_is_spread_over_the_split_and_fixed_by_its_seed(tmp_path):
    n = 5000
    record = sampling_record(windows(n), {"source": "sines"}, str(tmp_path))
    idx = reference_indices(record, n)
    assert len(idx) == 200 and idx == sorted(set(idx))  # at most 200, each once, in the split's order
    assert idx != list(range(200)) and idx[-1] - idx[0] > n / 2  # not the first 200 neighbours
    assert np.histogram(idx, bins=4, range=(0, n))[0].min() > 20  # every quarter of the series is in it
    assert [a[0] for a in record["reference"]["attributes"]] == idx  # each sequence keeps its attribute row
    assert reference_indices(sampling_record(windows(n), {"source": "sines"}, str(tmp_path)), n) == idx
    other = reference_indices(sampling_record(windows(n), {"source": "sines"}, str(tmp_path), seed=1), n)
    assert other != idx
    few = reference_indices(sampling_record(windows(30), {"source": "sines"}, str(tmp_path)), 30)
    assert few == list(range(30))  # fewer than the reference holds: all of them


def test_the_generate_picture_draws_real_sequences_at_random_with_the_runs_seed():
    ref = [np.full((4, 2), i, np.float32) for i in range(200)]
    picked = [int(s[0, 0]) for s in picture_real(ref, seed=7)]
    assert len(picked) == PICTURE_REAL == len(set(picked))
    assert picked != list(range(PICTURE_REAL)) and max(picked) > 150 and min(picked) < 50  # spread, not the first
    assert picked == picture_indices(200, 7, PICTURE_REAL).tolist()  # training's choice of picture sequences
    assert [int(s[0, 0]) for s in picture_real(ref, seed=7)] == picked  # deterministic for a seed
    assert [int(s[0, 0]) for s in picture_real(ref, seed=8)] != picked
    assert sorted(int(s[0, 0]) for s in picture_real(ref[:10], seed=7)) == list(range(10))  # fewer: each once
