"""How long reading a big wide file takes: a 1-million-row CSV (and the same table as .csv.gz and Parquet)
with a date column and 20 float features, read through the project's reader (gan_sru.data.read_data:
parse, check every cell, sort by time, the data as float64 arrays), against plain pandas for scale.

    .venv/bin/python benchmarks/read_speed.py [--rows 1000000] [--features 20] [--repeats 3]

The files go to a temporary folder (removed afterwards). Prints a table and writes
benchmarks/results/read_speed.json (medians and all timings, file sizes, CPU).
"""
import argparse
import json
import os
import platform
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        return platform.processor() or "?"


def write_files(folder, rows, features):
    """The table (date, f0..f{features-1}) as .csv, .csv.gz and .parquet, written by pyarrow."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    stamps = np.datetime64("2020-01-01T00:00:00") + np.arange(rows).astype("timedelta64[m]")
    columns = {"date": pa.array(np.datetime_as_string(stamps, unit="s"))}
    columns.update({f"f{k}": pa.array(rng.normal(size=rows) * 10 ** (k % 4)) for k in range(features)})
    table = pa.table(columns)
    paths = {"csv": os.path.join(folder, "wide.csv"), "csv.gz": os.path.join(folder, "wide.csv.gz"),
             "parquet": os.path.join(folder, "wide.parquet")}
    pacsv.write_csv(table, paths["csv"])
    with pa.CompressedOutputStream(paths["csv.gz"], "gzip") as out:
        pacsv.write_csv(table, out)
    pq.write_table(table, paths["parquet"])
    return paths


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return sorted(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results", "read_speed.json"))
    args = parser.parse_args()

    import numpy as np
    import pandas as pd

    from gan_sru.data import read_data
    from gan_sru.files import atomic_write_text

    results = []
    with tempfile.TemporaryDirectory(prefix="read_speed-") as folder:
        t0 = time.perf_counter()
        paths = write_files(folder, args.rows, args.features)
        print(f"wrote {args.rows} rows x (date + {args.features} features) in {time.perf_counter() - t0:.1f} s")
        for kind, path in paths.items():
            times, raw = timed(lambda p=path: read_data(p), args.repeats)
            assert len(raw.arrays) == 1 and raw.arrays[0].shape == (args.rows, args.features)
            assert raw.info["time_column"] == "date" and np.isfinite(raw.arrays[0]).all()
            results.append({"file": f"wide.{kind}", "reader": "gan_sru.data.read_data", "seconds": times,
                            "median_s": times[len(times) // 2], "bytes": os.path.getsize(path)})
        # for scale: pandas alone, no checks, no sorting (its default C parser, and its pyarrow engine)
        for engine in ("c", "pyarrow"):
            times, df = timed(lambda e=engine: pd.read_csv(paths["csv"], engine=e), args.repeats)
            assert df.shape == (args.rows, args.features + 1)
            results.append({"file": "wide.csv", "reader": f"pandas.read_csv(engine={engine!r})", "seconds": times,
                            "median_s": times[len(times) // 2], "bytes": os.path.getsize(paths["csv"])})

    print(f"\n{'file':<14} {'reader':<36} {'MB':>8} {'median s':>9} {'Mrows/s':>8}")
    for r in results:
        print(f"{r['file']:<14} {r['reader']:<36} {r['bytes'] / 1e6:>8.1f} {r['median_s']:>9.2f} "
              f"{args.rows / r['median_s'] / 1e6:>8.2f}")
    import pyarrow

    report = {"rows": args.rows, "features": args.features, "repeats": args.repeats, "results": results,
              "cpu": cpu_model(), "cores": os.cpu_count(), "pandas": pd.__version__, "pyarrow": pyarrow.__version__,
              "what": "read_data: parse (pyarrow CSV / Parquet), check every cell, parse and sort the dates, "
                      "float64 (rows, features) array"}
    atomic_write_text(args.out, json.dumps(report, indent=2) + "\n", make_dirs=True)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
