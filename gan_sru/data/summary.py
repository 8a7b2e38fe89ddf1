"""The data summary: what was read and what was done with it, printed before training and saved in the
run folder as data_summary.json (for programs) and data_summary.txt (for people).

    summary = describe(dataset, cfg["data"], cfg["seed"])
    print(summary_text(summary))
    write_summary(run_folder, summary)
"""
import json
import os

import numpy as np

from gan_sru.files import atomic_write_text

from .buckets import BucketSpec

JSON_NAME, TEXT_NAME = "data_summary.json", "data_summary.txt"


def _lengths(lengths):
    lengths = np.asarray(lengths)
    if not len(lengths):
        return {"min": 0, "median": 0, "max": 0}
    return {"min": int(lengths.min()), "median": float(np.median(lengths)), "max": int(lengths.max())}


def describe(dataset, data_cfg, seed):
    """A JSON-able dict: source, layout, columns, sequences and lengths as read, features with their ranges
    (data units), missing values and what was done, time spacing, windows, the training set, buckets."""
    info = dataset.info
    spec = BucketSpec.from_lengths(dataset.lengths, data_cfg["num_buckets"])
    plan = dataset.split_plan(data_cfg["holdout_fraction"], seed, data_cfg.get("holdout_split", "random"),
                              data_cfg.get("holdout_blocks", 5))
    counts = np.bincount(spec.buckets_of(dataset.lengths), minlength=spec.num_buckets)
    names = info.get("feature_names") or [f"f{k}" for k in range(dataset.num_features)]
    read_lengths = info.get("lengths_read", dataset.lengths)
    return {
        "source": info.get("source", dataset.source),
        "files": info.get("files", []),
        "layout": info.get("layout"),
        "id_column": info.get("id_column"),
        "time_column": info.get("time_column"),
        "notes": info.get("notes", []),
        "sequences_read": int(info.get("sequences_read", len(dataset))),
        "lengths_read": _lengths(read_lengths),
        "features": [{"name": n, "min": float(lo), "max": float(hi)}
                     for n, lo, hi in zip(names, dataset.scaler.min, dataset.scaler.max)],
        "missing": info.get("missing", {"values": 0, "policy": data_cfg.get("missing", "error"), "first": None,
                                        "action": "nothing to do: no value is missing"}),
        "time": info.get("time", {"kind": None}),
        "window": info.get("window"),
        "encoding": info.get("encoding"),
        "training": {"sequences": len(dataset), "train": len(plan.train), "holdout": len(plan.holdout),
                     "lengths": _lengths(dataset.lengths), "split": plan.how, "blocks": plan.blocks,
                     "left_out": plan.left_out},
        "buckets": [{"length": int(b), "sequences": int(n)} for b, n in zip(spec.boundaries, counts)],
    }


def _count(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def _duration(seconds):
    """Seconds as a short human duration: '90 s', '15 min', '1 h', '2.5 d'."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if abs(seconds) >= size:
            return f"{seconds / size:.4g} {unit}"
    return f"{seconds:.4g} s"


def _time_text(t):
    if t.get("kind") is None:
        return "no time column: row order is time order, one step per row"
    show = _duration if t["kind"] == "dates" else (lambda v: f"{v:.6g}")
    if "step" not in t:
        return f"{t['kind']}: no two consecutive times"
    text = f"{t['kind']}, step {show(t['step'])} (median)"
    if t["irregular"]:
        text += (f", IRREGULAR: {t['irregular_gaps']} of {t['gaps']} steps differ (from {show(t['min_step'])} to "
                 f"{show(t['max_step'])}); the model sees the rows in order, one step each")
    else:
        text += ", regular"
    return text


def summary_text(s):
    """The summary as a few lines of text."""
    layout = {"long": "long format", "wide": "wide format (each file one sequence)", "array": "arrays",
              "built-in": "built-in"}.get(s["layout"], s["layout"] or "")
    columns = ", ".join(f"{what} {s[key]!r}" for what, key in (("id", "id_column"), ("time", "time_column"))
                        if s.get(key))
    lines = [f"data: {s['source']} ({layout}{'; ' + columns if columns else ''})"]
    if len(s["files"]) > 1:
        lines.append(f"  files: {len(s['files'])} ({os.path.basename(s['files'][0])} ... "
                     f"{os.path.basename(s['files'][-1])})")
    r = s["lengths_read"]
    lines.append(f"  read: {_count(s['sequences_read'], 'sequence')}, lengths {r['min']} / {r['median']:g} / "
                 f"{r['max']} (min / median / max)")
    feats = ", ".join(f"{f['name']} [{f['min']:.6g}, {f['max']:.6g}]" for f in s["features"][:12])
    more = f", ... ({len(s['features'])} in all)" if len(s["features"]) > 12 else ""
    lines.append(f"  features (data units): {feats}{more}")
    m = s["missing"]
    if m["values"]:
        lines.append(f"  missing values: {m['values']} in {_count(m.get('sequences', 0), 'sequence')} (first at "
                     f"{m['first']}); data.missing: {m['policy']}: {m['action']}")
    else:
        lines.append("  missing values: none")
    lines.append(f"  time: {_time_text(s['time'])}")
    if s["window"]:
        w = s["window"]
        lines.append(f"  reshaped: cut into windows of {w['length']} steps every {w['stride']} "
                     f"({w.get('reason', 'data.window')})")
    enc = s.get("encoding") or {}
    for c in enc.get("categorical", []):
        labels = ", ".join(str(v) for v in c["labels"][:8]) + (", ..." if len(c["labels"]) > 8 else "")
        lines.append(f"  reshaped: categorical column {c['name']!r} as {len(c['labels'])} one-hot channels "
                     f"(labels {labels}); generated tables give the labels back")
    for a in enc.get("attributes", []):
        lines.append(f"  reshaped: attribute column {a['name']!r} as one value per sequence (data.attributes)")
    t = s["training"]
    lines.append(f"  training data: {_count(t['sequences'], 'sequence')} ({t['train']} train, {t['holdout']} held "
                 f"out), lengths {t['lengths']['min']} / {t['lengths']['median']:g} / {t['lengths']['max']}")
    if t.get("split") == "blocks" and t.get("blocks"):
        lines.append(f"  held out: {_count(t['blocks'], 'contiguous block')} (data.holdout_split: blocks); "
                     f"{_count(t['left_out'], 'training window')} that share steps with them left out")
    lines.append("  buckets: " + ", ".join(f"<= {b['length']} steps: {b['sequences']}" for b in s["buckets"]))
    lines += [f"  note: {n}" for n in s["notes"]]
    return "\n".join(lines)


def write_summary(folder, summary):
    """data_summary.json and data_summary.txt in `folder`, each written atomically. Returns both paths."""
    paths = os.path.join(folder, JSON_NAME), os.path.join(folder, TEXT_NAME)
    atomic_write_text(paths[0], json.dumps(summary, indent=2) + "\n")
    atomic_write_text(paths[1], summary_text(summary) + "\n")
    return paths


def read_summary(folder):
    """The data_summary.json of a run folder, or None where there is none."""
    path = os.path.join(folder, JSON_NAME)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------- what sampling needs, without the data

SAMPLING_NAME = "sampling.json"
REFERENCE_VALUES = 50_000  # values of real training sequences kept for generate's pictures (at most 200 sequences)


def fingerprint(path):
    """{"files": [{"name", "size", "sha256"}], "size", "sha256"} of the data files `path` names (a file, a
    folder or a glob pattern; gan_sru.data.readers.data_files), names relative to the folder that holds them.
    Two fingerprints are the same data when their "sha256" (over every file's name, size and hash) agree."""
    import hashlib

    from .readers import data_files

    files = data_files(path)
    base = os.path.commonpath([os.path.dirname(os.path.abspath(f)) for f in files])
    entries, total = [], hashlib.sha256()
    for name in files:
        digest = hashlib.sha256()
        with open(name, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        entry = {"name": os.path.relpath(os.path.abspath(name), base), "size": os.path.getsize(name),
                 "sha256": digest.hexdigest()}
        entries.append(entry)
        total.update(f"{entry['size']} {entry['sha256']}\n".encode())
    return {"files": entries, "size": sum(e["size"] for e in entries), "sha256": total.hexdigest()}


def picture_indices(n, seed, k=16):
    """The training sequences a sample picture shows: k of the n drawn at random without replacement (the
    same for every frame of a run), so windows cut from one long series come from all over it rather than
    from one stretch of neighbours. Returns an int array of min(k, n) indices."""
    return np.random.default_rng(seed).choice(n, size=min(k, n), replace=False)


def sampling_record(data, data_cfg, run_path, seed=0):
    """The JSON-able record that sampling reads instead of the data: where the data was (absolute path, the
    path relative to the run folder when it lies inside it, its fingerprint), the training split's lengths
    (N,) and encoded attribute rows (N, W) or None, and a reference of training sequences for the pictures
    (scaled [0, 1], (L_i, C + K) with one-hot blocks, at most 200 and REFERENCE_VALUES values): drawn at random
    over the whole split with `seed` (picture_indices), in their order there."""
    train = data.train
    record = {"format": 1, "data": {"source": data_cfg["source"], "path": None, "in_run": None, "fingerprint": None},
              "lengths": [int(n) for n in train.lengths],
              "attributes": None if train.attributes is None else train.attributes.astype(float).tolist()}
    if data_cfg["source"] == "file":
        path = os.path.abspath(str(data_cfg["path"]))
        inside = os.path.relpath(path, os.path.abspath(run_path))
        record["data"].update(path=path, fingerprint=fingerprint(path),
                              in_run=None if inside.startswith(os.pardir) else inside)
    width = train.sequences[0].shape[1] if len(train) else 1
    count = max(1, min(200, REFERENCE_VALUES // max(1, int(np.mean(train.lengths)) * width))) if len(train) else 0
    picked = np.sort(picture_indices(len(train), seed, count))
    record["reference"] = {
        "sequences": [np.asarray(train.sequences[i], np.float64).tolist() for i in picked],
        "attributes": None if train.attributes is None else train.attributes[picked].astype(float).tolist()}
    return record


def write_sampling(folder, record):
    """sampling.json in `folder`, atomically."""
    return atomic_write_text(os.path.join(folder, SAMPLING_NAME), json.dumps(record) + "\n")


def read_sampling(folder):
    """The sampling.json of a run folder, or None for a run written before it existed."""
    path = os.path.join(folder, SAMPLING_NAME)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)
