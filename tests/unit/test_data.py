"""gan_sru.data: built-in sines, file loaders and their refusals, scaler, split, buckets, batches."""
import json
import os
import re

import numpy as np
import pandas as pd
import pytest

from gan_sru import DataError
from gan_sru.config import load_config
from gan_sru.data import (
    Batch,
    BucketSpec,
    Dataset,
    MinMaxScaler,
    load_dataset,
    make_sines,
    make_windows,
    pad_batch,
    read_sequences,
    sample_batch,
    save_sequences,
)
from gan_sru.data.arrays import array_sequences

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def data_cfg(*overrides):
    return load_config(None, list(overrides))["data"]


def ragged(lengths, num_features=3, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, num_features)) for n in lengths]


# ---------------------------------------------------------------- built-in sines

def test_sines_shape_range_and_determinism():
    cfg = data_cfg("data.num_sequences=500")
    ds = load_dataset(cfg, seed=3)
    assert len(ds) == 500 and ds.num_features == 5 and ds.source == "sines"
    x = np.stack(ds.sequences)
    assert x.shape == (500, 24, 5) and x.dtype == np.float32
    assert x.min() == 0.0 and x.max() == 1.0  # the scaler is fitted on this data
    np.testing.assert_allclose(x.min(axis=(0, 1)), 0.0)
    np.testing.assert_allclose(x.max(axis=(0, 1)), 1.0)
    again = np.stack(load_dataset(cfg, seed=3).sequences)
    other = np.stack(load_dataset(cfg, seed=4).sequences)
    assert np.array_equal(x, again)
    assert not np.allclose(x, other)


def test_sines_follow_timegan_formula():
    raw = np.stack(make_sines(2000, 24, 5, seed=0))
    # x_0 = sin(phase) with phase ~ U(0, 0.1); the argument freq*t + phase stays in [0, 2.4]
    assert 0 <= raw[:, 0].min() and raw[:, 0].max() <= np.sin(0.1)
    assert raw.min() >= 0 and raw.max() <= 1
    # freq = arcsin difference recovers values in (0, 0.1)
    freq = np.arcsin(raw[:, 1]) - np.arcsin(raw[:, 0])
    assert 0 <= freq.min() and freq.max() <= 0.1 + 1e-12
    assert freq.mean() == pytest.approx(0.05, abs=0.005)


def test_sines_varlen_lengths_and_prefixes():
    cfg = data_cfg("data.source=sines_varlen", "data.num_sequences=3000", "data.min_len=5", "data.seq_len=12")
    ds = load_dataset(cfg, seed=1)
    assert ds.lengths.min() == 5 and ds.lengths.max() == 12
    assert set(ds.lengths.tolist()) == set(range(5, 13))
    fixed = make_sines(3000, 12, 5, seed=1)
    varlen = make_sines(3000, 12, 5, seed=1, min_len=5)
    assert all(np.array_equal(v, f[:len(v)]) for v, f in zip(varlen, fixed))


# ---------------------------------------------------------------- scaler

def test_scaler_inverse_of_transform():
    seqs = ragged([5, 7, 3], num_features=4)
    scaler = MinMaxScaler().fit(seqs)
    for s in seqs:
        y = scaler.transform(s)
        assert y.min() >= 0 and y.max() <= 1
        np.testing.assert_allclose(scaler.inverse(y), s, rtol=1e-12, atol=1e-12)
    batch = np.zeros((6, 2, 4), dtype=np.float32)  # (L, B, C) works too and keeps float32
    assert scaler.inverse(batch).dtype == np.float32
    np.testing.assert_allclose(scaler.inverse(batch)[0, 0], scaler.min, rtol=1e-6)


def test_scaler_constant_feature_and_json_round_trip():
    seqs = [np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])]
    scaler = MinMaxScaler().fit(seqs)
    with np.errstate(all="raise"):
        y = scaler.transform(seqs[0])
    np.testing.assert_array_equal(y[:, 1], 0.0)
    np.testing.assert_array_equal(y[:, 0], [0.0, 0.5, 1.0])
    back = MinMaxScaler.from_dict(json.loads(json.dumps(scaler.to_dict())))
    np.testing.assert_array_equal(back.inverse(y), seqs[0])


# ---------------------------------------------------------------- split

def test_split_deterministic_disjoint_complete():
    ds = load_dataset(data_cfg("data.num_sequences=101"), seed=0)
    train, hold = ds.split(0.1, seed=5)
    assert len(train) == 91 and len(hold) == 10
    train2, hold2 = ds.split(0.1, seed=5)
    ids = {id(s): i for i, s in enumerate(ds.sequences)}
    train_ids = {ids[id(s)] for s in train.sequences}
    hold_ids = {ids[id(s)] for s in hold.sequences}
    assert train_ids.isdisjoint(hold_ids) and train_ids | hold_ids == set(range(101))
    assert hold_ids == {ids[id(s)] for s in hold2.sequences}
    _, hold3 = ds.split(0.1, seed=6)
    assert hold_ids != {ids[id(s)] for s in hold3.sequences}
    assert hold.scaler is ds.scaler and hold.num_features == 5
    assert len(ds.split(0.0, 0)[1]) == 0 and len(ds.split(0.001, 0)[1]) == 1


# ---------------------------------------------------------------- files: round trips

@pytest.mark.parametrize("suffix", [".npy", ".npz", ".csv", ".csv.gz", ".parquet"])
@pytest.mark.parametrize("lengths", [[6, 6, 6, 6], [3, 9, 2, 5]])
def test_save_then_read_round_trip(tmp_path, suffix, lengths):
    if suffix == ".npy" and len(set(lengths)) > 1:
        pytest.skip("ragged sequences go to .npz: a ragged .npy is a pickled object array")
    seqs = ragged(lengths)
    path = tmp_path / f"data{suffix}"
    save_sequences(seqs, path)
    back = read_sequences(path)
    assert len(back) == len(seqs)
    for a, b in zip(seqs, back):
        assert b.dtype == np.float64
        np.testing.assert_array_equal(a, b)
    assert os.listdir(tmp_path) == [f"data{suffix}"]


def test_npy_fixed_arrays_and_object_arrays_refused(tmp_path):
    x = np.arange(2 * 4 * 3, dtype=np.int32).reshape(2, 4, 3)
    np.save(tmp_path / "a.npy", x)
    assert [s.tolist() for s in read_sequences(tmp_path / "a.npy")] == x.tolist()
    obj = np.empty(2, dtype=object)
    obj[:] = [np.ones((3, 2), np.float32), [[1, 2], [3, 4]]]
    # a pickled object array is refused unread, with the pickle-free layout for ragged data
    refused(npy(tmp_path, obj, "b.npy"), r"holds Python objects \(a pickled object array\).*"
            r"\.npz with 'data' \(N, L_max, C\) zero-padded and 'lengths' \(N,\)")
    np.savez(tmp_path / "b.npz", data=obj)
    refused(tmp_path / "b.npz", r"array 'data' holds Python objects")
    np.savez(tmp_path / "c.npz", data=np.zeros((2, 3, 1)), lengths=obj)
    refused(tmp_path / "c.npz", r"array 'lengths' holds Python objects")
    # the layout the message names reads back the ragged sequences
    save_sequences(list(obj), tmp_path / "b2.npz")
    back = read_sequences(tmp_path / "b2.npz")
    assert back[0].shape == (3, 2) and back[1].tolist() == [[1, 2], [3, 4]]
    # in memory (the API's ragged lists) object arrays still work: no pickle involved
    assert array_sequences(obj, None, "array").check("array").arrays[1].tolist() == [[1, 2], [3, 4]]


def test_npz_array_choice(tmp_path):
    a, b = np.zeros((1, 2, 1)), np.ones((2, 3, 1))
    np.savez(tmp_path / "first.npz", zzz=b)
    np.savez(tmp_path / "named.npz", aaa=a, data=b)
    np.savez(tmp_path / "seqs.npz", aaa=a, sequences=b)
    np.savez(tmp_path / "lens.npz", data=np.ones((2, 4, 1)), lengths=np.array([2, 4]))
    for name in ("first", "named", "seqs"):
        assert len(read_sequences(tmp_path / f"{name}.npz")) == 2
    assert [len(s) for s in read_sequences(tmp_path / "lens.npz")] == [2, 4]


def test_csv_string_ids_unsorted_rows_and_columns(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("time, id ,b,a,note\n"
                    "2,x,20,2,0\n"
                    "0,y,-1,-10,0\n"
                    "0,x,0,0,0\n"
                    "\n"
                    "1,x,10,1,0\n"
                    "1,y,-2,-20,0\n")
    seqs = read_sequences(path, feature_columns=["a", "b"])
    assert [s.tolist() for s in seqs] == [[[0, 0], [1, 10], [2, 20]], [[-10, -1], [-20, -2]]]
    assert read_sequences(path)[0].shape == (3, 3)  # every column but id and time


def test_csv_iso_dates_sort_as_times(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,time,v\n"
                    "a,2024-01-02,2\n"
                    "a,2024-01-01T12:00:00+00:00,1\n"
                    "a,2023-12-31,0\n")
    assert read_sequences(path)[0][:, 0].tolist() == [0, 1, 2]


def test_user_data_config_loads_example_file(monkeypatch):
    monkeypatch.chdir(REPO)
    cfg = load_config("configs/user_data.yaml")
    ds = load_dataset(cfg["data"], cfg["seed"])
    assert ds.num_features == 3 and len(ds) == 16 and ds.lengths.min() >= 2
    x = np.concatenate(ds.sequences)
    assert x.min() == 0 and x.max() == 1
    raw = read_sequences("samples/data/example_sequences.csv")
    np.testing.assert_allclose(ds.scaler.inverse(ds.sequences[3]), raw[3], rtol=1e-5)


def test_windows(tmp_path):
    path = tmp_path / "long.npy"
    np.save(path, np.arange(2 * 10 * 1, dtype=np.float64).reshape(2, 10, 1))
    cfg = data_cfg("data.source=file", f"data.path={path}", "data.window=4", "data.window_stride=3")
    ds = load_dataset(cfg, seed=0)
    assert len(ds) == 2 * 3 and set(ds.lengths.tolist()) == {4}
    assert [len(w) for w in make_windows([np.zeros((3, 1)), np.zeros((5, 1))], 4)] == [3, 4, 4]


# ---------------------------------------------------------------- files: refusals

def npy(tmp_path, array, name="bad.npy"):
    path = tmp_path / name
    np.save(path, array, allow_pickle=True)
    return path


def text(tmp_path, content, name="bad.csv"):
    path = tmp_path / name
    path.write_text(content)
    return path


def in_memory_refused(array, pattern):
    """An in-memory object array (the API's ragged lists) refused by array_sequences + check."""
    with pytest.raises(DataError, match="array: (.*)?" + pattern):
        array_sequences(array, None, "array").check("array")


def refused(path, pattern, **kwargs):
    with pytest.raises(DataError, match=re.escape(str(path)) + ": (.*)?" + pattern):
        read_sequences(path, **kwargs)


def test_refuse_missing_and_unsupported(tmp_path):
    refused(tmp_path / "none.npy", r"data file not found")
    refused(text(tmp_path, "x", "a.txt"), r"unsupported file type '.txt'")
    os.mkdir(tmp_path / "dir.csv")
    refused(tmp_path / "dir.csv", r"is a folder")


def test_refuse_empty_files(tmp_path):
    refused(text(tmp_path, ""), r"empty file")
    refused(text(tmp_path, "id,time,a\n"), r"holds no sequences")
    refused(text(tmp_path, "", "e.npy"), r"not a .npy file")
    refused(npy(tmp_path, np.zeros((0, 5, 2))), r"holds no sequences")
    refused(text(tmp_path, "", "e.npz"), r"not a .npz file")
    np.savez(tmp_path / "none.npz")
    refused(tmp_path / "none.npz", r"the .npz archive holds no arrays")


def test_refuse_nan_and_inf_naming_place(tmp_path):
    x = np.zeros((3, 4, 2))
    x[1, 2, 1] = np.nan
    # NaN is a missing value (data.missing, default error): the count and the first place
    refused(npy(tmp_path, x), r"1 missing value in 1 of 3 sequences; the first at sequence 1, step 2, feature 1")
    x[1, 2, 1] = 0
    x[2, 0, 0] = -np.inf
    np.savez(tmp_path / "bad.npz", data=x)
    refused(tmp_path / "bad.npz", r"sequence 2, step 0, feature 0: value -inf is not finite")
    refused(text(tmp_path, "id,time,a,b\nq,0,1,2\nq,1,1,inf\n"),
            r"line 3, column 'b' \(sequence 'q'\): value 'inf' is not finite")
    refused(text(tmp_path, "id,time,a\nq,nan,1\n"), r"line 2, column 'time' \(sequence 'q'\): missing time")
    refused(text(tmp_path, "id,time,a\nq,inf,1\n"), r"line 2, column 'time' \(sequence 'q'\): time 'inf' is not "
                                                      r"finite")


def test_refuse_wrong_rank_and_dtype(tmp_path):
    refused(npy(tmp_path, np.zeros((4, 3))), r"the array has shape \(4, 3\); expected rank 3")
    refused(npy(tmp_path, np.zeros((2, 4, 3, 1))), r"has shape \(2, 4, 3, 1\); expected rank 3")
    np.savez(tmp_path / "r.npz", data=np.zeros(5))
    refused(tmp_path / "r.npz", r"array 'data' has shape \(5,\); expected rank 3")
    refused(npy(tmp_path, np.full((2, 3, 1), "a")), r"the array holds <U1 values; expected numbers")
    refused(npy(tmp_path, np.zeros((2, 3, 1), complex)), r"the array holds complex128 values")
    obj = np.empty(2, dtype=object)
    obj[:] = [np.zeros((3, 2)), np.zeros(3)]
    in_memory_refused(obj, r"sequence 1 has shape \(3,\); expected \(steps, features\)")
    obj[:] = [np.zeros((3, 2)), "text"]
    in_memory_refused(obj, r"sequence 1 holds <U4 values; expected numbers")
    obj[:] = [np.zeros((3, 2)), [[1, 2], [3]]]
    in_memory_refused(obj, r"sequence 1 holds values that are not numbers")


def test_refuse_inconsistent_features_and_short_sequences(tmp_path):
    obj = np.empty(3, dtype=object)
    obj[:] = [np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((4, 3))]
    in_memory_refused(obj, r"sequence 2 has 3 features; the first sequence has 2")
    obj[:] = [np.zeros((3, 2)), np.zeros((1, 2)), np.zeros((4, 2))]
    in_memory_refused(obj, r"sequence 1 has 1 step\(s\); expected at least 2")
    np.savez(tmp_path / "s.npz", data=np.zeros((2, 4, 1)), lengths=np.array([4, 1]))
    refused(tmp_path / "s.npz", r"sequence 1 has 1 step\(s\); expected at least 2")
    refused(npy(tmp_path, np.zeros((2, 3, 0))), r"sequences have 0 features")
    refused(text(tmp_path, "id,time,a\nq,0,1\nq,1,2\nr,0,1\n"),
            r"sequence 'r' \(first row at line 4\) has 1 step\(s\); expected at least 2")
    np.savez(tmp_path / "l.npz", data=np.zeros((2, 4, 1)), lengths=np.array([2, 5]))
    refused(tmp_path / "l.npz", r"lengths\[1\] = 5; expected 0..4")


def test_refuse_bad_csv_cells_and_columns(tmp_path):
    refused(text(tmp_path, "id,time,a\nq,0,1\nq,1,abc\n"), r"line 3, column 'a' \(sequence 'q'\): 'abc' is not a "
                                                         r"number")
    # an empty cell is a missing value (data.missing, default error)
    refused(text(tmp_path, "id,time,a\nq,0,\nq,1,2\n"), r"1 missing value in 1 of 1 sequence; the first at line 2, "
                                                       r"column 'a' \(sequence 'q'\)")
    refused(text(tmp_path, "id,time,a\nq,x,1\n"), r"line 2, column 'time' \(sequence 'q'\): 'x' is not a number or "
                                                  r"an ISO date")
    refused(text(tmp_path, "id,time,a\nq,0,1\nq,2024-01-01,1\n"), r"line 3, column 'time'.*mixes dates and numbers")
    refused(text(tmp_path, "id,time,a\nq,0,1,2\n"), r"line 2: 4 cells; the header has 3")
    refused(text(tmp_path, "id,time,a\n,0,1\n"), r"line 2, column 'id': empty sequence id")
    refused(text(tmp_path, "id,time,a\nq,0,1\nq,0,2\n"), r"sequence 'q': time 0 appears twice \(lines 2 and 3\)")
    # without the default 'id' column the file is one sequence: a column of text is named, with the fix
    refused(text(tmp_path, "ident,time,a\nq,0,1\n"), r"line 2, column 'ident': 'q' is not a number \(the column "
                                                     r"holds no numbers\); if it names the sequences, set "
                                                     r"data.csv_id_column: ident")
    refused(text(tmp_path, "ident,time,a\nq,0,1\n"), r"line 1 \(header\): missing column 'key' "
                                                     r"\(data.csv_id_column\); found columns \['ident', 'time', 'a'\]",
            id_column="key")
    refused(text(tmp_path, "id,time,a\nq,0,1\n"), r"line 1 \(header\): missing column 'b'", feature_columns=["b"])
    refused(text(tmp_path, "id,time\nq,0\n"), r"no feature columns besides 'id' and 'time'")
    refused(text(tmp_path, ",id,time,a\n0,q,0,1\n"), r"column 1 has no name")
    refused(text(tmp_path, "id,time,a,a\nq,0,1,1\n"), r"column 'a' appears 2 times")
    refused(text(tmp_path, 'id,time,a\nq,0,1\nq,1,"2\nq,2,3\n'),
            r"line 3, column 'a' \(sequence 'q'\): '2\\nq,2,3\\n' is not a number \(an unclosed quote\?\)")
    refused(text(tmp_path, "id,time,a\nq,0,1\nq,1\n"), r"line 3: 2 cells; the header has 3")
    refused(text(tmp_path, "id,time,a\n0,\0"), r"line 2: 2 cells; the header has 3")  # a NUL byte (fuzz-found)
    path = tmp_path / "bin.csv"
    path.write_bytes(b"id,time,a\nq,0,\xff\n")
    refused(path, r"not UTF-8 text")
    path.write_bytes(b"id,time,a,b\n\xc2")  # a short row of a cut UTF-8 character (fuzz-found)
    refused(path, r"line 2: 1 cells; the header has 4")


def test_refuse_damaged_numpy_files(tmp_path):
    path = npy(tmp_path, np.zeros((20, 10, 3)))
    path.write_bytes(path.read_bytes()[:200])
    refused(path, r"truncated .npy file")
    path = tmp_path / "bad.npz"
    np.savez(path, data=np.zeros((20, 10, 3)))
    path.write_bytes(path.read_bytes()[:300])
    refused(path, r"cannot read .npz file")


def test_refuse_values_beyond_float32(tmp_path):
    """The model computes in float32: a value beyond its range is refused at read time, named by file, line
    (or step) and column, before it could become inf in training or in the samples."""
    path = npy(tmp_path, np.array([[[-1e308], [1e308]]]))
    cfg = data_cfg("data.source=file", f"data.path={path}")
    with pytest.raises(DataError, match=re.escape(str(path)) + r": sequence 0, step 0, feature 0: value -1e\+308 "
                                        r"is outside float32's range"):
        load_dataset(cfg, 0)
    refused(text(tmp_path, "id,time,a,b\nq,0,1,2\nq,1,3,1e308\nq,2,4,5\n"),
            r"line 3, column 'b' \(sequence 'q'\): value 1e\+308 is outside float32's range")
    # the largest float32 itself is read
    big = float(np.finfo(np.float32).max)
    assert read_sequences(npy(tmp_path, np.array([[[-big], [big]]]), "ok.npy"))[0].tolist() == [[-big], [big]]


def test_refuse_mixed_file_types_in_a_folder(tmp_path):
    """A folder holds tables or arrays, not both: a CSV's column names are never applied to an array file."""
    folder = tmp_path / "data"
    folder.mkdir()
    save_sequences(ragged([4, 4]), folder / "a.csv")
    save_sequences(ragged([4, 4]), folder / "b.npy")
    with pytest.raises(DataError, match=re.escape(str(folder)) + r": mixes file types: .*a\.csv is a table \(named "
                                        r"columns\) and .*b\.npy is a NumPy array \(no column names\)"):
        read_sequences(folder)
    with pytest.raises(DataError, match=r"mixes file types: .*a\.csv is a table .*b\.npy is a NumPy array"):
        read_sequences(str(folder / "*"))
    os.remove(folder / "b.npy")
    save_sequences(ragged([5]), folder / "c.parquet")  # tables of several formats match by column name
    assert len(read_sequences(folder)) == 3


def test_refuse_fifo_device_and_oversized_files(tmp_path):
    """A FIFO and a link to /dev/zero are refused at once (before any open could block or never end); a file
    over data.max_file_bytes is refused with the limit, and the key raises it."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    refused(fifo, r"is a FIFO \(named pipe\); expected a regular data file")
    link = tmp_path / "zero.npy"
    os.symlink("/dev/zero", link)
    refused(link, r"is a character device \(a link to /dev/zero\); expected a regular data file")
    path = tmp_path / "x.npy"
    np.save(path, np.zeros((2, 3, 1)))
    size = os.path.getsize(path)
    refused(path, rf"{size} bytes, over the limit of 100 \(data.max_file_bytes\)", max_file_bytes=100)
    assert len(read_sequences(path, max_file_bytes=size)) == 2
    cfg = data_cfg("data.source=file", f"data.path={path}", "data.max_file_bytes=100")
    with pytest.raises(DataError, match=r"over the limit of 100 \(data.max_file_bytes\)"):
        load_dataset(cfg, 0)
    cfg = data_cfg("data.source=file", f"data.path={path}", f"data.max_file_bytes={size}")
    assert len(load_dataset(cfg, 0)) == 2


def test_constant_feature_comes_back_constant(tmp_path):
    """A zero-range feature maps back to exactly its value, whatever the generator outputs for it."""
    x = np.stack([np.linspace(0, 1, 6), np.full(6, 0.001)], axis=1)
    scaler = MinMaxScaler().fit([x, x + [1.0, 0.0]])
    fake = np.random.default_rng(0).uniform(size=(3, 6, 2)).astype(np.float32)
    back = scaler.inverse(fake)
    assert back.dtype == np.float32 and np.all(back[..., 1] == np.float32(0.001))
    assert np.all(scaler.inverse(fake.astype(np.float64))[..., 1] == 0.001)
    np.testing.assert_allclose(back[..., 0], fake[..., 0] * 2.0, rtol=1e-6)
    assert scaler.inverse_scale.tolist() == [2.0, 0.0]
    assert np.all(scaler.transform(x)[:, 1] == 0)


# ---------------------------------------------------------------- buckets and batches

def dataset_of(lengths, num_features=2):
    """Sequence i is filled with i + 1 so that batches show which sequence they hold."""
    seqs = [np.full((n, num_features), i + 1, dtype=np.float32) for i, n in enumerate(lengths)]
    return Dataset(seqs, MinMaxScaler(np.zeros(num_features), np.ones(num_features)), "test")


def test_bucket_boundaries():
    assert BucketSpec.from_lengths([24] * 100, 3).boundaries == (24,)
    spec = BucketSpec.from_lengths(np.arange(8, 25).repeat(10), 3)
    assert spec.num_buckets == 3 and spec.boundaries[-1] == 24
    assert spec.boundaries == tuple(sorted(set(spec.boundaries)))
    assert BucketSpec.from_lengths([2, 2, 2, 9], 4).boundaries == (2, 9)
    assert spec.buckets_of([8, 24]).tolist() == [0, 2]
    assert spec.buckets_of([spec.boundaries[0], spec.boundaries[0] + 1]).tolist() == [0, 1]
    assert BucketSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    with pytest.raises(DataError, match=r"sequence length 25 exceeds the longest bucket \(24\)"):
        spec.buckets_of([25])


def test_every_sequence_fits_its_bucket():
    lengths = np.random.default_rng(0).integers(2, 40, size=500)
    spec = BucketSpec.from_lengths(lengths, 5)
    buckets = spec.buckets_of(lengths)
    bounds = np.array(spec.boundaries)
    lower = np.concatenate([[0], bounds[:-1]])
    assert np.all(bounds[buckets] >= lengths) and np.all(lower[buckets] < lengths)
    assert np.all(np.bincount(buckets, minlength=5) > 0)


def test_sample_batch_padding_and_mask():
    lengths = [3, 4, 5, 9, 10, 12, 12, 2]
    ds = dataset_of(lengths)
    spec = BucketSpec.from_lengths(ds.lengths, 3)
    for step in range(30):
        batch = sample_batch(ds, spec, 6, seed=1, step=step)
        assert isinstance(batch, Batch)
        L = spec.boundaries[batch.bucket]
        assert batch.x.shape == (L, 6, 2) and batch.x.dtype == np.float32
        assert batch.mask.shape == (L, 6) and batch.mask.dtype == np.float32
        assert np.all(batch.lengths <= L) and np.all(spec.buckets_of(batch.lengths) == batch.bucket)
        for j, n in enumerate(batch.lengths):
            assert batch.mask[:n, j].tolist() == [1] * n and not batch.mask[n:, j].any()
            assert not batch.x[n:, j].any()
            assert lengths[int(batch.x[0, j, 0]) - 1] == n  # the right sequence, unshifted


def test_sample_batch_pure_in_seed_and_step():
    ds = load_dataset(data_cfg("data.source=sines_varlen", "data.num_sequences=400"), seed=0)
    spec = BucketSpec.from_lengths(ds.lengths, 3)
    a = sample_batch(ds, spec, 32, seed=7, step=11)
    sample_batch(ds, spec, 32, seed=7, step=12)  # no hidden state between calls
    b = sample_batch(ds, spec, 32, seed=7, step=11)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.mask, b.mask) and a.bucket == b.bucket
    assert not np.array_equal(a.x, sample_batch(ds, spec, 32, seed=7, step=12).x)
    assert not np.array_equal(a.x, sample_batch(ds, spec, 32, seed=8, step=11).x)
    seen = {sample_batch(ds, spec, 8, seed=0, step=s).bucket for s in range(40)}
    assert seen == {0, 1, 2}


def test_sample_batch_replacement_only_when_needed():
    ds = dataset_of([5] * 10)
    spec = BucketSpec.from_lengths(ds.lengths, 1)
    ids = sample_batch(ds, spec, 10, seed=0, step=0).x[0, :, 0]
    assert sorted(ids.tolist()) == list(range(1, 11))  # bucket == batch: each once
    assert sample_batch(ds, spec, 25, seed=0, step=0).x.shape == (5, 25, 2)


def test_bucket_choice_proportional_to_size():
    ds = dataset_of([2] * 300 + [10] * 100)
    spec = BucketSpec.from_lengths(ds.lengths, 2)
    picks = np.array([sample_batch(ds, spec, 4, seed=3, step=s).bucket for s in range(800)])
    assert (picks == 0).mean() == pytest.approx(0.75, abs=0.05)


def test_pad_batch():
    x, mask, lengths = pad_batch([np.ones((2, 3)), np.ones((4, 3))])
    assert x.shape == (4, 2, 3) and lengths.tolist() == [2, 4]
    assert mask.T.tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]] and x[2:, 0].sum() == 0


def test_constant_column_is_sampled_exactly_constant(tmp_path):
    """End to end through training and the saved checkpoint's scaler: a column that is 0.001 on every row
    comes back 0.001 on every generated row."""
    from gan_sru import SequenceGAN

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": np.repeat(np.arange(12), 6), "time": np.tile(np.arange(6), 12),
                       "a": rng.normal(size=72), "b": 0.001})
    model = SequenceGAN(steps=2, batch_size=8, generator_hidden_size=8, discriminator_hidden_size=8,
                        checkpoint_every=2, sample_every=1000, log_every=2, progress=False).fit(df)
    samples = model.sample(num_sequences=5, seed=1)
    assert (samples["b"] == 0.001).all() and samples["a"].nunique() > 1
