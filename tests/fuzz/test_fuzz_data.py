"""Fuzzing the data readers: CSV text and bytes, Parquet tables and bytes, .npy / .npz arrays and bytes, and
folders of mixed files. Every input must load (and keep the readers' promises) or raise a DataError."""
import datetime
import gzip
import io
import os

import hypothesis.extra.numpy as hnp
import numpy as np
import pandas as pd
from fuzz_outcomes import call, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from gan_sru.config import load_config
from gan_sru.data import load_dataset, read_sequences

text_chars = st.characters(blacklist_categories=("Cs",))  # no lone surrogates: they cannot be written as UTF-8


def promised(sequences):
    """What read_sequences promises: float64 (L_i, C) arrays, one C >= 1, L_i >= 2, values within float32."""
    assert sequences and all(s.dtype == np.float64 and s.ndim == 2 for s in sequences)
    assert len({s.shape[1] for s in sequences}) == 1 and sequences[0].shape[1] >= 1
    assert all(len(s) >= 2 for s in sequences)
    x = np.concatenate(sequences)
    assert np.all(np.isfinite(x)) and np.all(np.abs(x) <= np.finfo(np.float32).max)


def scaled(dataset):
    x = np.concatenate(dataset.sequences)
    assert x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1


def read_and_load(family, path, missing="error", **kwargs):
    """read_sequences, then (when it loaded) the whole load_dataset path with the same file."""
    if call(family, read_sequences, path, missing=missing, check=promised, **kwargs) is not None:
        cfg = load_config(None, ["data.source=file", f"data.path={path}", f"data.missing={missing}"])["data"]
        call(family + " (dataset)", load_dataset, cfg, 0, check=scaled)


# ---------------------------------------------------------------- CSV

CELLS = st.one_of(st.integers(-3, 3).map(str), st.floats().map(str), st.text(text_chars, max_size=4),
                  st.sampled_from(["q", "r", "", " 1 ", "2024-01-01", "2024-13-01", "2024-01-01T00:00:00+05:00",
                                   "1e308", "-1e39", "3.4e38", "1e400", "nan", "-inf", "NA", '"', '"a,b"', "1_0",
                                   "0x1", "\0", "\ufeff"]))
COLUMNS = st.sampled_from(["id", "time", "a", "b", "", " id", "c", "time ", "ID"])
MISSING = st.sampled_from(["error", "drop", "interpolate"])


@st.composite
def csv_texts(draw):
    """Long- or wide-format CSV text with random headers and cells, mostly well formed, or random text."""
    mode = draw(st.integers(0, 7))
    if mode == 0:
        return draw(st.text(text_chars, max_size=160))
    header = draw(st.lists(st.one_of(COLUMNS, st.text(text_chars, max_size=3)), max_size=5))
    if mode >= 3:
        header = [*draw(st.sampled_from([["id", "time"], ["id", "time"], ["id"], ["time"], []])),
                  *draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))]
    width = len(header)
    if mode >= 3:  # a well-formed body: ids and times that make real sequences
        number = st.floats(-1e6, 1e6).map(str)
        cell = number if mode >= 5 else st.one_of(number, number, number, CELLS)
        rows = []
        for t in range(draw(st.integers(2, 12))):
            row = [draw(cell) for _ in range(width)]
            if header[:1] == ["id"]:
                row[0] = draw(st.sampled_from(["q", "r", "007"]))
            if "time" in header:
                row[header.index("time")] = draw(st.sampled_from([str(t), str(t), f"2024-01-{t + 1:02d}", "x"]))
            rows.append(row)
    else:
        rows = draw(st.lists(st.lists(CELLS, min_size=max(0, width - 1), max_size=width + 1), max_size=12))
    newline = draw(st.sampled_from(["\n", "\r\n", "\n\n"]))
    return newline.join(",".join(row) for row in [header, *rows])


@fuzz_settings(40, 1500)
@given(text=csv_texts(), missing=MISSING,
       columns=st.one_of(st.none(), st.none(), st.lists(COLUMNS, min_size=1, max_size=3, unique=True)))
def test_csv_text(tmp_path_factory, text, missing, columns):
    path = tmp_path_factory.mktemp("csv") / "data.csv"
    path.write_text(text, encoding="utf-8")
    if columns is None:
        read_and_load("csv: text", path, missing)
    else:
        call("csv: text", read_sequences, path, missing=missing, feature_columns=columns, check=promised)


def valid_csv(gz):
    text = "id,time,a,b\n" + "".join(f"{s},{t},{t * 0.5 + k},{-t}\n" for k, s in enumerate("qr") for t in range(5))
    data = text.encode()
    return gzip.compress(data, mtime=0) if gz else data


def damaged(data, draw):
    """data with random byte flips, a cut and junk appended."""
    data = bytearray(data)
    for i, byte in draw(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6)):
        data[i % len(data)] = byte
    cut = draw(st.integers(0, len(data)))
    junk = draw(st.binary(max_size=40))
    return bytes(data[:cut]) + junk if draw(st.booleans()) else bytes(data)


@fuzz_settings(20, 800)
@given(gz=st.booleans(), data=st.data())
def test_csv_bytes(tmp_path_factory, gz, data):
    raw = data.draw(st.one_of(st.binary(max_size=300), st.just(None)))
    raw = damaged(valid_csv(gz), data.draw) if raw is None else raw
    path = tmp_path_factory.mktemp("csvb") / ("data.csv.gz" if gz else "data.csv")
    path.write_bytes(raw)
    call("csv: bytes", read_sequences, path, check=promised)


# ---------------------------------------------------------------- Parquet

VALUES = {
    "float": st.lists(st.one_of(st.floats(-1e6, 1e6), st.floats(), st.sampled_from([1e308, -1e39, 3.4e38])),
                      min_size=1, max_size=12),
    "int": st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=12),
    "small int": st.lists(st.integers(0, 4), min_size=1, max_size=12),
    "bool": st.lists(st.booleans(), min_size=1, max_size=12),
    "text": st.lists(st.text(text_chars, max_size=4), min_size=1, max_size=12),
    "nullable": st.lists(st.one_of(st.none(), st.floats(-10, 10)), min_size=1, max_size=12),
    "date": st.lists(st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1)), min_size=1,
                     max_size=12),
}


@st.composite
def frames(draw):
    """DataFrames of random column kinds, often with id / time columns of their own kinds."""
    n = draw(st.integers(0, 12))
    columns = {}
    if draw(st.booleans()):  # mostly valid: id, time and float features, now and then a special value
        n = max(n, 4)
        columns["id"] = ["p" if i < n // 2 else draw(st.sampled_from(["p", "q"])) for i in range(n)]
        columns["time"] = list(range(n)) if draw(st.booleans()) else pd.date_range("2024-01-01", periods=n)
        for name in draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True)):
            values = [draw(st.floats(-1e6, 1e6)) for _ in range(n)]
            if draw(st.integers(0, 3)) == 0:
                values[draw(st.integers(0, n - 1))] = draw(st.sampled_from([np.nan, np.inf, 1e308, -3.5e38, 0.0]))
            columns[name] = values
        return pd.DataFrame(columns)
    names = draw(st.lists(st.sampled_from(["id", "time", "a", "b", "c", "", "0"]), max_size=5, unique=True))
    for name in names:
        kind = draw(st.sampled_from(sorted(VALUES)))
        values = draw(VALUES[kind])
        columns[name] = (values * (n // len(values) + 1))[:n]
        if kind == "date":
            columns[name] = pd.to_datetime(columns[name])
        elif kind == "nullable":
            columns[name] = pd.array(columns[name], dtype="Float64")
    if "id" in columns and draw(st.booleans()):
        columns["id"] = [draw(st.sampled_from(["p", "q"])) for _ in range(n)]
    if "time" in columns and draw(st.booleans()):
        columns["time"] = list(range(n))
    return pd.DataFrame(columns)


@fuzz_settings(30, 1200)
@given(frame=frames(), missing=MISSING)
def test_parquet_tables(tmp_path_factory, frame, missing):
    path = tmp_path_factory.mktemp("pq") / "data.parquet"
    try:
        frame.to_parquet(path, index=False)
    except (ValueError, TypeError, OverflowError):  # a frame pyarrow cannot store: not an input to us
        return
    read_and_load("parquet: tables", path, missing)


@fuzz_settings(15, 500)
@given(data=st.data())
def test_parquet_bytes(tmp_path_factory, data):
    buffer = io.BytesIO()
    pd.DataFrame({"id": ["q"] * 4 + ["r"] * 4, "time": list(range(4)) * 2, "a": np.arange(8.0)}).to_parquet(
        buffer, index=False)
    path = tmp_path_factory.mktemp("pqb") / "data.parquet"
    path.write_bytes(damaged(buffer.getvalue(), data.draw))
    call("parquet: bytes", read_sequences, path, check=promised)


# ---------------------------------------------------------------- NumPy

DTYPES = st.sampled_from(["f2", "f4", "f8", "g", "i1", "i8", "u8", "?", "c8", "U3", "S2", "M8[D]", "m8[s]",
                          [("a", "f4"), ("b", "i2")]])
ODD_ARRAYS = hnp.arrays(DTYPES.map(np.dtype), hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
NEAR_VALID = hnp.arrays(st.sampled_from(["f2", "f4", "f8", "i2", "u1"]).map(np.dtype),
                        st.tuples(st.integers(1, 3), st.integers(1, 6), st.integers(1, 3)))
ARRAYS = st.one_of(ODD_ARRAYS, NEAR_VALID, NEAR_VALID)


@st.composite
def object_arrays(draw):
    """1-D object arrays (pickled when saved): ragged sequences, strings, None. Always refused unread."""
    items = draw(st.lists(st.one_of(st.none(), st.text(text_chars, max_size=3),
                                    hnp.arrays(np.float64, st.tuples(st.integers(0, 5), st.just(2)))), max_size=4))
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array


@fuzz_settings(30, 1200)
@given(array=st.one_of(ARRAYS, object_arrays()), missing=MISSING)
def test_npy_arrays(tmp_path_factory, array, missing):
    path = tmp_path_factory.mktemp("npy") / "data.npy"
    with open(path, "wb") as f:
        np.save(f, array, allow_pickle=True)
    read_and_load("npy: arrays", path, missing)


@fuzz_settings(20, 800)
@given(arrays=st.dictionaries(st.sampled_from(["data", "sequences", "lengths", "x", "arr_0"]),
                              st.one_of(ARRAYS, object_arrays(), hnp.arrays(np.int64, st.integers(0, 4))),
                              max_size=3))
def test_npz_arrays(tmp_path_factory, arrays):
    path = tmp_path_factory.mktemp("npz") / "data.npz"
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    call("npz: arrays", read_sequences, path, check=promised)


@fuzz_settings(20, 800)
@given(suffix=st.sampled_from([".npy", ".npz"]), data=st.data())
def test_numpy_bytes(tmp_path_factory, suffix, data):
    buffer = io.BytesIO()
    x = np.random.default_rng(0).normal(size=(4, 5, 2))
    np.save(buffer, x) if suffix == ".npy" else np.savez(buffer, data=x, lengths=np.array([5, 4, 3, 2]))
    path = tmp_path_factory.mktemp("npb") / f"data{suffix}"
    path.write_bytes(damaged(buffer.getvalue(), data.draw))
    call("npy/npz: bytes", read_sequences, path, check=promised)


# ---------------------------------------------------------------- folders

def write_file(path, kind, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 4, 2))
    if kind == ".npy":
        np.save(path, x)
    elif kind == ".npz":
        np.savez(path, data=x)
    else:
        names = ["a", "b"] if seed % 3 else ["b", "c"]
        df = pd.DataFrame({"id": np.repeat([0, 1], 4), "time": np.tile(np.arange(4), 2),
                           names[0]: x[..., 0].ravel(), names[1]: x[..., 1].ravel()})
        if kind == ".parquet":
            df.to_parquet(path, index=False)
        else:
            df.to_csv(path, index=False)


@fuzz_settings(15, 400)
@given(files=st.lists(st.tuples(st.sampled_from([".csv", ".csv.gz", ".parquet", ".npy", ".npz", ".txt"]),
                                st.integers(0, 5)), min_size=0, max_size=4),
       pattern=st.sampled_from([None, "*", "*.csv", "*.np?", "[ab]*"]))
def test_folders(tmp_path_factory, files, pattern):
    folder = tmp_path_factory.mktemp("folder")
    for i, (kind, seed) in enumerate(files):
        path = folder / f"{'ab'[i % 2]}{i}{kind}"
        if kind == ".txt":
            path.write_text("not data")
        elif kind == ".csv.gz":
            write_file(folder / "tmp.csv", ".csv", seed)
            path.write_bytes(gzip.compress((folder / "tmp.csv").read_bytes()))
            os.remove(folder / "tmp.csv")
        else:
            write_file(path, kind, seed)
    call("folders and globs", read_sequences, str(folder if pattern is None else folder / pattern), check=promised)
