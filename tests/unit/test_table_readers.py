"""Reading user data through pandas/pyarrow: every format gives the same arrays, long and wide layouts,
times, folders of files, and each refusal's message (file, row or line, column, value, the fix)."""
import os
import re

import numpy as np
import pandas as pd
import pytest

from gan_sru import ConfigError, DataError
from gan_sru.config import DATA_SUFFIXES, load_config
from gan_sru.data import SUFFIXES, load_dataset, read_data, read_frame, read_sequences


def ragged(lengths=(5, 9, 3, 7), num_features=3, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, num_features)) * 10.0 ** rng.integers(-3, 4) for n in lengths]


def long_frame(seqs, names=("a", "b", "c"), ids=None, shuffle=True):
    ids = ids or [f"s{i}" for i in range(len(seqs))]
    df = pd.DataFrame({"id": np.repeat(ids, [len(s) for s in seqs]),
                       "time": np.concatenate([np.arange(len(s)) * 2.5 for s in seqs]),
                       **{n: np.concatenate(seqs)[:, k] for k, n in enumerate(names)}})
    if not shuffle:
        return df
    df = df.sample(frac=1, random_state=0)  # rows in any order within a sequence: the reader sorts by time
    return df.iloc[np.argsort([ids.index(i) for i in df["id"]], kind="stable")]  # sequences in the order given


def data_cfg(path, *overrides):
    return load_config(None, ["data.source=file", f"data.path={path}", *overrides])["data"]


def refused(pattern, call, *args, **kwargs):
    with pytest.raises(DataError, match=pattern) as info:
        call(*args, **kwargs)
    return str(info.value)


def test_config_and_reader_agree_on_suffixes():
    assert SUFFIXES == DATA_SUFFIXES == (".csv", ".csv.gz", ".parquet", ".npy", ".npz")
    cfg = load_config(None, ["data.source=file", "data.path=x.csv.gz", "data.csv_id_column=null",
                             "data.csv_time_column=null"])
    assert cfg["data"]["csv_id_column"] is None and cfg["data"]["csv_time_column"] is None
    assert load_config(None, ["data.source=file", "data.path=d/*.parquet"])["data"]["path"] == "d/*.parquet"
    with pytest.raises(ConfigError, match=r"data.path: got 'x.txt'; expected a file \(or glob pattern\) ending in "
                                          r"\.csv, \.csv\.gz, \.parquet, \.npy, \.npz, or a folder"):
        load_config(None, ["data.source=file", "data.path=x.txt"])
    with pytest.raises(ConfigError, match=r"data.missing: got 'fill' \(str\); expected one of 'error', 'drop', "
                                          r"'interpolate'"):
        load_config(None, ["data.missing=fill"])


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
def test_each_format_reads_the_same_arrays_as_npz(tmp_path, suffix):
    seqs = ragged()
    padded = np.zeros((4, 9, 3))
    for i, s in enumerate(seqs):
        padded[i, :len(s)] = s
    np.savez(tmp_path / "ref.npz", data=padded, lengths=[len(s) for s in seqs])
    path = tmp_path / f"data{suffix}"
    if suffix == ".parquet":
        long_frame(seqs).to_parquet(path)  # with pandas' (unnamed, shuffled) index stored: dropped
    else:
        long_frame(seqs).to_csv(path, index=False)  # repr-exact floats; pandas compresses .csv.gz by suffix
    expected = read_sequences(tmp_path / "ref.npz")
    got = read_sequences(path)
    assert len(got) == len(expected) == 4
    for a, b in zip(got, expected):
        assert a.dtype == np.float64
        np.testing.assert_array_equal(a, b)  # bit for bit: pyarrow parses floats exactly


def test_wide_and_long_forms_give_the_same_sequences(tmp_path):
    seqs = ragged()
    df = long_frame(seqs)
    df.to_csv(tmp_path / "long.csv", index=False)
    folder = tmp_path / "wide"
    folder.mkdir()
    for seq_id, part in df.groupby("id"):  # one wide file per sequence, rows shuffled, time column kept
        part.drop(columns="id").to_csv(folder / f"{seq_id}.csv", index=False)
    part.drop(columns=["id", "time"]).sort_index().to_parquet(tmp_path / "one.parquet")
    long, wide = read_sequences(tmp_path / "long.csv"), read_sequences(folder)
    assert len(long) == len(wide) == 4
    for a, b in zip(long, wide):  # files in name order = ids in order here
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(read_sequences(tmp_path / "one.parquet")[0], seqs[3])  # row order = time order
    np.testing.assert_array_equal(read_sequences(folder / "*.csv")[2], seqs[2])  # a glob pattern


def test_wide_file_is_cut_into_windows_like_the_same_long_sequence(tmp_path):
    series = ragged([50], 2)[0]
    pd.DataFrame(series, columns=["x", "y"]).to_csv(tmp_path / "wide.csv", index=False)
    long_frame([series], names=("x", "y"), shuffle=True).to_csv(tmp_path / "long.csv", index=False)
    a = load_dataset(data_cfg(tmp_path / "wide.csv", "data.window=8", "data.window_stride=3"), 0)
    b = load_dataset(data_cfg(tmp_path / "long.csv", "data.window=8", "data.window_stride=3"), 0)
    assert len(a) == len(b) == 15 and a.info["layout"] == "wide" and b.info["layout"] == "long"
    for x, y in zip(a.sequences, b.sequences):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_allclose(a.scaler.inverse(a.sequences[1]), series[3:11], rtol=1e-5)  # float32 in [0, 1]


def test_dataframe_and_array_sources_match_files(tmp_path):
    seqs = ragged([6, 6, 6])
    df = long_frame(seqs)
    raw = read_frame(df)
    for a, b in zip(raw.arrays, seqs):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(read_frame(df.set_index(["id", "time"])).arrays[1], seqs[1])  # index as columns
    ds = load_dataset(data_cfg("x.npy"), 0, source=np.stack(seqs))
    ds2 = load_dataset(data_cfg("x.csv"), 0, source=df)
    for a, b in zip(ds.sequences, ds2.sequences):
        np.testing.assert_array_equal(a, b)


def test_times_dates_and_numbers(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,time,v\n"
                    "a,2024-01-02,2\n"
                    "a,2024-01-01T12:00:00+00:00,1\n"
                    "a,2024-01-01T05:00:00-06:00,1.5\n"  # 11:00 UTC
                    "b,2024-01-01,0\nb,2024-01-01 00:00:01,5\n")
    raw = read_data(path)
    assert raw.info["time_kind"] == "dates" and raw.arrays[0][:, 0].tolist() == [1.5, 1, 2]
    assert np.diff(raw.times[0]).tolist() == [3600.0, 43200.0]
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 1)))
    epoch = pd.DataFrame({"id": [1, 1, 1], "time": [1.7e9 + 2, 1.7e9, 1.7e9 + 1], "v": [3.0, 1.0, 2.0]})
    assert read_frame(epoch).arrays[0][:, 0].tolist() == [1, 2, 3]
    stamps = pd.DataFrame({"t": pd.date_range("2024-03-01", periods=4, freq="15min", tz="Europe/Berlin"),
                           "v": [4.0, 3.0, 2.0, 1.0]}).iloc[::-1]
    raw = read_frame(stamps, time_column="t")
    assert raw.arrays[0][:, 0].tolist() == [4, 3, 2, 1] and raw.info["time_kind"] == "dates"


def test_duplicate_times_name_the_sequence_and_time(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,time,v\nq,2024-01-01,1\nr,2024-01-01,1\nq,2024-01-02,2\n\nq,2024-01-01T00:00:00Z,3\n")
    refused(re.escape(f"{path}: sequence 'q': time 2024-01-01T00:00:00+00:00 appears twice (lines 2 and 6)"),
            read_sequences, path)
    df = pd.DataFrame({"time": [0, 1, 1], "v": [1.0, 2.0, 3.0]})
    refused(r"^DataFrame: time 1 appears twice \(rows 1 and 2\)$", read_frame, df)


def test_default_id_and_time_columns_apply_only_where_present(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("date,x,y\n2024-01-01 02:00,3,30\n2024-01-01 00:00,1,10\n2024-01-01 01:00,2,20\n")
    raw = read_data(path)
    assert raw.info["layout"] == "wide" and raw.info["time_column"] == "date"
    assert raw.arrays[0].tolist() == [[1, 10], [2, 20], [3, 30]]
    assert any("'date' holds dates" in n for n in raw.info["notes"])
    assert read_data(path, id_column=None, time_column=None, feature_columns=["x"]).arrays[0][:, 0].tolist() == \
        [3, 1, 2]  # no time column: row order
    refused(r"line 1 \(header\): missing column 'sensor' \(data.csv_id_column\); found columns \['date', 'x', 'y'\]",
            read_data, path, id_column="sensor")
    refused(r"missing column 'ts' \(data.csv_time_column\)", read_data, path, time_column="ts")
    path.write_text("a,b,v\n2024-01-01,2024-01-02,1\n2024-01-02,2024-01-03,2\n")
    refused(r"columns \['a', 'b'\] all hold dates; set data.csv_time_column", read_data, path)


# ---------------------------------------------------------------- refusals the issue lists

def test_refuse_empty_files(tmp_path):
    for name in ("e.csv", "e.csv.gz", "e.parquet"):
        (tmp_path / name).write_bytes(b"")
        refused(re.escape(str(tmp_path / name)) + r": empty file", read_sequences, tmp_path / name)
    (tmp_path / "blank.csv").write_text("\n\n  \n")
    refused(r"blank.csv: line 3 \(header\): column 1 has no name", read_sequences, tmp_path / "blank.csv")
    pd.DataFrame({"id": [], "v": []}).to_parquet(tmp_path / "rows.parquet")
    refused(r"rows.parquet: holds no sequences", read_sequences, tmp_path / "rows.parquet")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    refused(r"bad.parquet: cannot read Parquet file", read_sequences, tmp_path / "bad.parquet")


def test_refuse_no_numeric_column_and_non_numeric_cells(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("name,city\nab,cd\nef,gh\n")
    refused(re.escape(f"{path}: no numeric column: ['name', 'city'] hold text, not numbers; expected at least one "
                      "column of numbers"), read_sequences, path)
    path.write_text("id,time,a,b\nq,0,1,2\nq,1,1.5,x7\n")
    refused(re.escape(f"{path}: line 3, column 'b' (sequence 'q'): 'x7' is not a number"), read_sequences, path)
    df = pd.DataFrame({"v": [1.0, 2.0, 3.0], "w": ["1", "2", "zz"]})
    refused(r"^DataFrame: row 2, column 'w': 'zz' is not a number$", read_frame, df)
    df = pd.DataFrame({"v": [1.0, 2.0], "when": pd.to_datetime(["2024-01-01", "2024-01-02"]), "u": [1, 2]})
    refused(r"column 'when': holds dates or times .*set data.csv_time_column: when", read_frame, df, time_column="u")


def test_refuse_mixed_feature_sets_across_files(tmp_path):
    pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}).to_csv(tmp_path / "1.csv", index=False)
    pd.DataFrame({"b": [1.0, 2.0], "a": [3.0, 4.0]}).to_parquet(tmp_path / "2.parquet")  # same set, other order
    seqs = read_sequences(tmp_path)
    assert seqs[1].tolist() == [[3, 1], [4, 2]]  # reordered to the first file's columns
    pd.DataFrame({"a": [1.0, 2.0], "c": [3.0, 4.0]}).to_csv(tmp_path / "3.csv", index=False)
    refused(re.escape(f"{tmp_path / '3.csv'}: feature columns ['a', 'c'] differ from those of {tmp_path / '1.csv'} "
                      "['a', 'b'] (missing ['b'], extra ['c'])"), read_sequences, tmp_path)
    os.mkdir(tmp_path / "none")
    refused(r"none: is a folder with no data files", read_sequences, tmp_path / "none")
    refused(r"no file matches this pattern", read_sequences, tmp_path / "*.npz")


def test_window_one_long_series_and_refuse_one_shorter_than_the_window(tmp_path):
    path = tmp_path / "w.csv"
    pd.DataFrame({"x": np.arange(10.0)}).to_csv(path, index=False)
    auto = load_dataset(data_cfg(path), 0)  # one series, no data.window: windows of min(24, half its length)
    assert set(auto.lengths.tolist()) == {5} and len(auto) == 6
    assert "one series of 10 steps: cut automatically" in auto.info["window"]["reason"]
    refused(re.escape(f"{path}: the file is one sequence of 10 rows (wide format), shorter than data.window (24)"),
            load_dataset, data_cfg(path, "data.window=24"), 0)
    assert len(load_dataset(data_cfg(path, "data.window=10"), 0)) == 1


def test_refuse_missing_sequence_index(tmp_path):
    df = pd.DataFrame({"id": ["a", "a", "b"], "t": [0.0, None, 0.0], "v": [1.0, 2.0, 3.0]})
    refused(r"^DataFrame: row 1, column 't' \(sequence 'a'\): missing time \(the sequence index must be given on "
            r"every row\)$", read_frame, df, time_column="t")
    path = tmp_path / "m.csv"
    path.write_text("id,time,v\na,0,1\na,,2\n")
    refused(re.escape(f"{path}: line 3, column 'time' (sequence 'a'): missing time"), read_sequences, path)
    df = pd.DataFrame({"id": [None, "a"], "v": [1.0, 2.0]})
    refused(r"row 0, column 'id': empty sequence id", read_frame, df)


def test_damaged_parquet_error_is_one_line(tmp_path):
    """Arrow's message for a damaged page header spans lines; the DataError puts it on one (fuzz-found)."""
    path = tmp_path / "damaged.parquet"
    pd.DataFrame({"id": ["q"] * 4 + ["r"] * 4, "time": list(range(4)) * 2, "a": np.arange(8.0)}).to_parquet(
        path, index=False)
    data = bytearray(path.read_bytes())
    data[30] = 0
    path.write_bytes(bytes(data))
    message = refused(r"damaged.parquet: cannot read Parquet file", read_sequences, path)
    assert "\n" not in message
