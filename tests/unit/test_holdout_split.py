"""The held-out split: random sequences, or contiguous blocks with the training windows that share a step with a
held-out window left out, so that no held-out step is also a training step where windows overlap."""
import numpy as np
import pandas as pd
import pytest

from gan_sru import ConfigError, DataError
from gan_sru.config import load_config
from gan_sru.data import Dataset, load_dataset
from gan_sru.data.scaling import MinMaxScaler
from gan_sru.data.summary import describe, summary_text


def series_frame(rows, features=3, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.standard_normal((rows, features)), columns=[f"f{k}" for k in range(features)])


def windowed(rows, window, stride=1, **sets):
    extra = [f"data.{k}={v}" for k, v in sets.items()]
    cfg = load_config(None, ["data.source=file", "data.path=x.parquet", f"data.window={window}",
                             f"data.window_stride={stride}"] + extra)
    return load_dataset(cfg["data"], 0, source=series_frame(rows)), cfg["data"]


def steps_of(ds, indices):
    """{(source, step)} that the sequences at `indices` cover."""
    return {(int(ds.spans[i, 0]), int(ds.spans[i, 1]) + t) for i in indices for t in range(ds.lengths[i])}


def check_plan(ds, plan, fraction):
    """Invariants of every split: disjoint sorted indices, the held-out count, at least one training sequence,
    and with blocks no step shared between a training and a held-out window."""
    n = len(ds)
    assert np.all(np.diff(plan.train) > 0) and np.all(np.diff(plan.holdout) > 0)
    assert not set(plan.train) & set(plan.holdout) and len(plan.train) >= 1
    assert len(plan.train) + len(plan.holdout) + plan.left_out == n
    if fraction > 0 and n >= 2:
        assert 1 <= len(plan.holdout) <= max(1, round(n * fraction))
    if plan.how == "blocks" and ds.spans is not None:
        assert not steps_of(ds, plan.train) & steps_of(ds, plan.holdout)


def test_windows_record_their_source_and_first_step():
    frame = series_frame(30)
    cfg = load_config(None, ["data.source=file", "data.path=x.parquet", "data.window=8", "data.window_stride=3"])
    ds = load_dataset(cfg["data"], 0, source=frame)
    assert ds.spans.tolist() == [[0, s] for s in range(0, 23, 3)]
    scaled = ds.scaler.transform(frame.to_numpy()).astype(np.float32)
    for seq, (_, start) in zip(ds.sequences, ds.spans):
        np.testing.assert_array_equal(seq, scaled[start:start + 8])
    assert ds.subset([2, 0]).spans.tolist() == [[0, 6], [0, 0]]


def test_blocks_hold_out_contiguous_runs_and_leave_out_overlapping_training_windows():
    ds, cfg = windowed(1000, 24, holdout_split="blocks")
    assert cfg["holdout_split"] == "blocks" and cfg["holdout_blocks"] == 5
    plan = ds.split_plan(0.1, 0, "blocks", 5)
    assert plan.how == "blocks" and plan.blocks == 5 and len(plan.holdout) == round(977 * 0.1)
    check_plan(ds, plan, 0.1)
    runs = np.split(plan.holdout, np.flatnonzero(np.diff(plan.holdout) > 1) + 1)
    assert len(runs) == 5
    edges = np.round(np.arange(6) * len(ds) / 5)
    assert all(edges[j] <= r[0] and r[-1] < edges[j + 1] for j, r in enumerate(runs))  # one in each fifth
    # each run costs the 23 windows on either side of it (fewer at the series' ends), nothing more
    expected = sum(min(23, r[0]) + min(23, len(ds) - 1 - r[-1]) for r in runs)
    assert plan.left_out == expected
    train, holdout = ds.split(0.1, 0, "blocks", 5)
    assert len(train) == len(plan.train) and holdout.spans.tolist() == ds.spans[plan.holdout].tolist()
    again = ds.split_plan(0.1, 0, "blocks", 5)  # deterministic in the seed
    assert np.array_equal(again.train, plan.train) and np.array_equal(again.holdout, plan.holdout)
    other = ds.split_plan(0.1, 1, "blocks", 5)
    assert not np.array_equal(other.holdout, plan.holdout)  # the seed places the blocks


def test_random_is_the_split_it_always_was_and_the_default():
    ds, cfg = windowed(200, 10)
    assert cfg["holdout_split"] == "random"
    plan = ds.split_plan(0.2, 3, "random")
    assert plan.how == "random" and plan.left_out == 0 and plan.blocks == 0
    order = np.random.default_rng([3, 0x5917]).permutation(len(ds))
    np.testing.assert_array_equal(plan.holdout, np.sort(order[:round(191 * 0.2)]))
    seqs = [np.full((5, 2), i, np.float32) for i in range(10)]  # whole sequences: no spans
    plain = Dataset(seqs, MinMaxScaler(np.zeros(2), np.ones(2)), "test")
    assert plain.spans is None
    forced = plain.split_plan(0.3, 0, "blocks", 1)  # blocks of whole sequences: one run, nothing left out
    assert forced.how == "blocks" and forced.left_out == 0
    assert np.all(np.diff(forced.holdout) == 1) and len(forced.holdout) == 3
    check_plan(plain, forced, 0.3)
    with pytest.raises(ValueError, match="holdout split 'auto': expected one of random, blocks"):
        plain.split_plan(0.3, 0, "auto")


def test_windows_of_different_sequences_do_not_leave_each_other_out():
    frame = pd.concat([series_frame(40, seed=s).assign(id=f"s{s}") for s in range(3)], ignore_index=True)
    cfg = load_config(None, ["data.source=file", "data.path=x.parquet", "data.window=10", "data.csv_id_column=id",
                             "data.csv_time_column=null"])["data"]
    ds = load_dataset(cfg, 0, source=frame)
    assert sorted(set(ds.spans[:, 0].tolist())) == [0, 1, 2] and len(ds) == 93
    plan = ds.split_plan(0.1, 0, "blocks", 3)
    check_plan(ds, plan, 0.1)
    held = set(map(tuple, ds.spans[plan.holdout].tolist()))
    for i in np.flatnonzero(~np.isin(np.arange(len(ds)), np.concatenate([plan.train, plan.holdout]))):
        src, start = ds.spans[i]
        assert any(s == src and abs(h - start) < 10 for s, h in held)  # left out only beside its own series' block


def test_a_series_too_short_for_blocks_is_refused_naming_the_fix():
    ds, _ = windowed(30, 24)  # 7 windows, every one overlapping every other
    with pytest.raises(DataError, match=r"x\.parquet|DataFrame") as e:
        ds.split_plan(0.2, 0, "blocks", 1)
    assert "leaves no training window" in str(e.value) and "data.holdout_split: random" in str(e.value)
    assert ds.split_plan(0.2, 0, "random").how == "random"


def test_missing_value_drop_keeps_the_spans_aligned():
    frame = series_frame(60)
    frame.iloc[20, 1] = np.nan
    cfg = load_config(None, ["data.source=file", "data.path=x.parquet", "data.window=8", "data.missing=drop"])
    ds = load_dataset(cfg["data"], 0, source=frame)
    starts = ds.spans[:, 1].tolist()
    assert starts == [s for s in range(53) if not s <= 20 < s + 8]
    scaled = ds.scaler.transform(frame.to_numpy()).astype(np.float32)
    for seq, start in zip(ds.sequences, starts):
        np.testing.assert_array_equal(seq, scaled[start:start + 8])
    check_plan(ds, ds.split_plan(0.1, 0, "blocks", 2), 0.1)


def test_the_summary_says_how_the_data_was_held_out():
    ds, cfg = windowed(500, 24, holdout_split="blocks")
    s = describe(ds, cfg, 0)
    plan = ds.split_plan(cfg["holdout_fraction"], 0, "blocks", 5)
    assert s["training"]["split"] == "blocks" and s["training"]["left_out"] == plan.left_out > 0
    assert s["training"]["train"] == len(plan.train)
    assert (f"held out: 5 contiguous blocks (data.holdout_split: blocks); {plan.left_out} training windows that "
            "share steps with them left out") in summary_text(s)
    ds, cfg = windowed(500, 24)
    s = describe(ds, cfg, 0)
    assert s["training"]["split"] == "random" and "held out:" not in summary_text(s)


def test_the_config_refuses_an_unknown_split():
    with pytest.raises(ConfigError, match="holdout_split"):
        load_config(None, ["data.holdout_split=auto"])
    with pytest.raises(ConfigError, match="holdout_blocks"):
        load_config(None, ["data.holdout_blocks=0"])

