"""Reading sequences from the user's data, unscaled, with errors that name the place.

Files: .csv and .csv.gz (pyarrow's CSV reader), .parquet (pandas + pyarrow), .npy and .npz (NumPy); a
folder (every data file in it, sorted by name) or a glob pattern ('data/*.csv') reads several files, which
must hold the same features and be all tables or all arrays. Only regular files are read (a FIFO or a
device would block or never end), each at most max_file_bytes long (data.max_file_bytes). Tables (CSV,
Parquet, DataFrames) go through gan_sru.data.tables: long format (an id column) or wide format (no id
column: the file is one sequence), an optional time column.
pandas and pyarrow are imported on first use, so `import gan_sru.data` stays light.
"""
import csv
import glob
import gzip
import os
import re
import stat
import zlib

from gan_sru import DataError

from .raw import RowNames, merge, one_line

SUFFIXES = (".csv", ".csv.gz", ".parquet", ".npy", ".npz")  # the config schema takes these
TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet")
TABLE, ARRAY = "a table (named columns)", "a NumPy array (no column names)"
KINDS = {".csv": TABLE, ".csv.gz": TABLE, ".parquet": TABLE, ".npy": ARRAY, ".npz": ARRAY}
MAX_FILE_BYTES = 4 * 2**30  # data.max_file_bytes' default: larger files are refused unless the user raises it
# pandas' default missing-value markers (pandas._libs.parsers.STR_NA_VALUES): empty, NA, NaN, null, ...
NA_VALUES = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
             "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


def suffix_of(path):
    """'.csv.gz' for 'x.CSV.gz', else the last suffix in lower case."""
    lower = str(path).lower()
    return next((s for s in SUFFIXES if lower.endswith(s)), os.path.splitext(lower)[1])


def read_sequences(path, id_column="id", time_column="time", feature_columns=None, missing="error",
                   max_file_bytes=MAX_FILE_BYTES):
    """Read sequences from a data file (or a folder or glob pattern of them), unscaled.

    .npy: an (N, L, C) numeric array (object arrays are refused: they are pickled).
    .npz: the array named 'data' or 'sequences', else the first; with a 'lengths' (N,) array beside
          'data'/'sequences', sequence i is data[i, :lengths[i]].
    .csv, .csv.gz, .parquet: one row per time step: an id column (long format; without one the file is one
          sequence), a time column (numbers or ISO dates; without one row order is time order), feature
          columns (feature_columns, or all other columns). Rows are sorted by time within a sequence.
    missing: 'error', 'drop' (sequences with a missing value are left out) or 'interpolate'.
    Returns a list of float64 arrays (L_i, C). Raises DataError naming the file and the first bad place.
    """
    from .missing import apply_missing

    raw = read_data(path, id_column, time_column, feature_columns, max_file_bytes=max_file_bytes)
    return apply_missing(raw, missing, str(path)).raw.arrays


def read_data(path, id_column="id", time_column="time", feature_columns=None, extra=None,
              max_file_bytes=MAX_FILE_BYTES):
    """Like read_sequences, as a checked RawData (NaN = missing) with times, names and the reader's notes.
    extra: attribute and categorical columns to read too (gan_sru.data.columns.wanted_columns), tables only."""
    files = data_files(path)
    check_one_kind(files, str(path))
    parts = [read_file(f, id_column, time_column, feature_columns, extra, max_file_bytes) for f in files]
    raw = parts[0] if len(parts) == 1 else merge(parts, str(path))
    raw.info["files"] = files
    return raw.check(str(path))


def data_files(path):
    """The data files that `path` names: itself, the data files in a folder, or a glob pattern's matches."""
    path = str(path)
    if os.path.isdir(path):
        files = sorted(os.path.join(path, n) for n in os.listdir(path)
                       if not n.startswith(".") and suffix_of(n) in SUFFIXES
                       and os.path.isfile(os.path.join(path, n)))
        if not files:
            raise DataError(f"{path}: is a folder with no data files (expected files ending in "
                            f"{', '.join(SUFFIXES)})")
        return files
    if not os.path.exists(path) and glob.has_magic(path):
        files = sorted(f for f in glob.glob(path) if os.path.isfile(f))
        if not files:
            raise DataError(f"{path}: no file matches this pattern")
        return files
    return [path]


def check_one_kind(files, source):
    """Refuse tables (CSV, Parquet) read together with arrays (.npy, .npz): an array's columns have no names to
    match the table's by (tables are matched by column name, arrays by position)."""
    first = {}
    for f in files:
        first.setdefault(KINDS.get(suffix_of(f)), f)
    if len(first) > 1:
        (kind_a, a), (kind_b, b) = list(first.items())[:2]
        raise DataError(f"{source}: mixes file types: {a} is {kind_a} and {b} is {kind_b}; expected tables only "
                        "or arrays only (move the others out, or name the files with a glob pattern)")


def check_regular_file(path, max_file_bytes=MAX_FILE_BYTES):
    """Refuse what is not a regular file (a FIFO would block, a device never end), or one over max_file_bytes.
    Follows symbolic links and names their target. Returns the size in bytes."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise DataError(f"{path}: data file not found") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None
    target = f" (a link to {os.path.realpath(path)})" if os.path.islink(path) else ""
    if stat.S_ISDIR(info.st_mode):
        raise DataError(f"{path}: is a folder{target}; expected a data file")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else "a character device"
                if stat.S_ISCHR(info.st_mode) else "a block device" if stat.S_ISBLK(info.st_mode) else
                "a socket" if stat.S_ISSOCK(info.st_mode) else "not a regular file")
        raise DataError(f"{path}: is {kind}{target}; expected a regular data file")
    if max_file_bytes is not None and info.st_size > max_file_bytes:
        raise DataError(f"{path}: {info.st_size} bytes, over the limit of {max_file_bytes} "
                        f"(data.max_file_bytes); raise it to read this file")
    return info.st_size


def read_file(path, id_column="id", time_column="time", feature_columns=None, extra=None,
              max_file_bytes=MAX_FILE_BYTES):
    """One data file -> RawData (unchecked)."""
    suffix = suffix_of(path)
    if suffix not in SUFFIXES:
        raise DataError(f"{path}: unsupported file type {suffix or '(none)'!r}; expected {', '.join(SUFFIXES)}")
    check_regular_file(path, max_file_bytes)
    if suffix in (".csv", ".csv.gz"):
        return read_csv(path, id_column, time_column, feature_columns, extra)
    if suffix == ".parquet":
        return read_parquet(path, id_column, time_column, feature_columns, extra)
    if extra:
        raise DataError(f"{path}: data.attributes and data.categorical name columns of a table (.csv, .parquet, a "
                        f"DataFrame); {suffix} files have none")
    from .arrays import read_npy, read_npz

    return read_npy(path) if suffix == ".npy" else read_npz(path)


def read_frame(df, id_column="id", time_column="time", feature_columns=None, name="DataFrame", extra=None):
    """An in-memory pandas DataFrame (one row per time step) -> checked RawData; rows are named 'row N'
    (N = position, from 0)."""
    from .tables import frame_sequences

    return frame_sequences(df, name, id_column, time_column, feature_columns, RowNames("row"), extra).check(name)


# ---------------------------------------------------------------- CSV

def _open_text(path, errors="strict"):
    opener = gzip.open if str(path).lower().endswith(".gz") else open
    return opener(path, "rt", encoding="utf-8-sig", newline="", errors=errors)


def _csv_header(path):
    """(header cells, its line number), or (None, 0) for a file without a non-blank line."""
    try:
        with _open_text(path) as f:
            reader = csv.reader(f)
            for row in reader:
                if row:
                    return row, reader.line_num
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except csv.Error as e:
        raise DataError(f"{path}: line 1: CSV error: {e}") from None
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(f"{path}: cannot read ({e.strerror if isinstance(e, OSError) and e.strerror else e})") \
            from None
    return None, 0


def _data_lines(path):
    """Physical line numbers of the non-blank lines (header first), as pyarrow's reader counts rows."""
    with open(path, "rb") if not str(path).lower().endswith(".gz") else gzip.open(path, "rb") as f:
        return [i for i, line in enumerate(f, 1) if line.rstrip(b"\r\n")]


def _csv_rownames(path, header_line):
    lines = []

    def line_of(row):
        if not lines:
            lines.extend(_data_lines(path))
        start = lines.index(header_line) if header_line in lines else 0
        i = start + 1 + row
        return lines[i] if i < len(lines) else f"{row + 2}?"

    return RowNames("line", f"line {header_line} (header)", line_of)


def _first_bad_width(path, width):
    """(line number, cells) of the first non-blank line after the header whose cell count is not `width`.
    Bytes that are not UTF-8 count as one character each: only the commas matter here."""
    with _open_text(path, errors="replace") as f:
        seen_header = False
        for number, line in enumerate(f, 1):
            if not line.rstrip("\r\n"):
                continue
            cells = next(csv.reader([line.replace("\0", "")]), [])  # Python 3.10's csv refuses a NUL byte
            if seen_header and len(cells) != width:
                return number, len(cells)
            seen_header = True
    return None


def read_csv(path, id_column="id", time_column="time", feature_columns=None, extra=None):
    """A .csv or .csv.gz table -> RawData, read by pyarrow (multithreaded; exact float parsing)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from .tables import frame_sequences

    header, header_line = _csv_header(path)
    if header is None:
        raise DataError(f"{path}: empty file; expected a header row and one row per time step")
    # ids as text: '007' stays '007'
    types = {raw: pa.string() for raw in header if id_column is not None and raw.strip() == id_column}
    options = pacsv.ConvertOptions(column_types=types, null_values=NA_VALUES, strings_can_be_null=True,
                                   quoted_strings_can_be_null=True)
    try:
        table = pacsv.read_csv(path, convert_options=options)
        df = table.to_pandas(date_as_object=False)
    except pa.ArrowInvalid as e:
        raise DataError(_arrow_csv_message(path, str(e), header)) from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except (pa.ArrowException, OSError, EOFError, zlib.error, ValueError) as e:
        raise DataError(f"{path}: cannot read CSV file ({type(e).__name__}: {one_line(e)})") from None
    return frame_sequences(df, path, id_column, time_column, feature_columns, _csv_rownames(path, header_line),
                           extra)


def _arrow_csv_message(path, message, header):
    width = re.search(r"Expected (\d+) columns, got (\d+)", message)
    if width:
        found = _first_bad_width(path, int(width.group(1)))
        if found:
            return f"{path}: line {found[0]}: {found[1]} cells; the header has {len(header)}"
        return f"{path}: a row has {width.group(2)} cells; the header has {width.group(1)}"
    utf8 = re.search(r"CSV column #(\d+): CSV conversion error to \w+: invalid UTF8", message)
    if utf8:
        k = int(utf8.group(1))
        return f"{path}: column {header[k].strip() if k < len(header) else k!r}: not UTF-8 text"
    if "Empty CSV file" in message:
        return f"{path}: empty file; expected a header row and one row per time step"
    return f"{path}: cannot read CSV file ({one_line(message)})"


# ---------------------------------------------------------------- Parquet

def read_parquet(path, id_column="id", time_column="time", feature_columns=None, extra=None):
    """A .parquet table -> RawData; rows are named 'row N' (from 0)."""
    import pandas as pd
    import pyarrow as pa

    from .tables import frame_sequences

    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:  # unreadable (permissions, an I/O error)
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None
    if not magic:
        raise DataError(f"{path}: empty file; expected a Parquet table")
    if magic != b"PAR1":
        raise DataError(f"{path}: not a Parquet file (no PAR1 header)")
    try:
        df = pd.read_parquet(path, engine="pyarrow")
    except (pa.ArrowException, OSError, ValueError, TypeError, KeyError) as e:
        raise DataError(f"{path}: cannot read Parquet file ({type(e).__name__}: {one_line(e)})") from None
    return frame_sequences(df, path, id_column, time_column, feature_columns, RowNames("row"), extra)
