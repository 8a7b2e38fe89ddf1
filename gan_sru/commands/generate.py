"""`gan-sru generate`: samples of a trained run in the data's own units, as files and pictures.

    gan-sru generate --run runs/sines [--checkpoint STEP] [--num 1000] [--length L] [--seed 0] [--out DIR]

Writes into DIR (default RUN/generated), every file a pure function of (run, checkpoint, num, length, seed):
    samples.npy            (N, L, C) float32 when all lengths are equal, else a 1-D object array of (L_i, C)
                           float32 arrays (pickled: np.load(..., allow_pickle=True))
    samples.npz            'data' (N, L_max, C) zero-padded and 'lengths' (N,): the same without pickle
    samples.csv            long format: id, time (0..L_i-1), one column per feature (the training CSV's
                           feature names when the run was trained on a CSV file, else f0, f1, ...)
    generate.json          what produced the files: run, checkpoint step, num, seed, lengths
    samples.png            grid of the first 16 generated sequences
    real_vs_generated.png  training sequences (blue) and generated ones (orange), one panel and axis per
                           feature (at most 8: the highest-variance ones of wider data)
    correlation.png        feature correlations of the training split and of the samples, and their
                           difference (data with 2 or more features)
    training.gif           16 sequences with fixed noise (--seed) from every checkpoint kept in the run folder
All three data files are read back by gan_sru.data.read_sequences (and so can train another run).

Lengths: --length L gives every sequence L steps. Otherwise a run trained on sequences of one length
generates that length, and a run trained on varying lengths draws each length from the training split's
lengths (seeded by --seed); the generator runs once at the longest length with a per-sequence mask and
each sequence is cut to its length.
"""
import csv
import json
import os

import numpy as np

from gan_sru import ConfigError
from gan_sru.data import save_sequences
from gan_sru.files import atomic_write_text
from gan_sru.sampling import check_run_path, draw_lengths, generate_cut, training_split

GIF_ITEMS = 16
SAMPLE_FILES = ("samples.npy", "samples.npz", "samples.csv")


def feature_names(cfg, num_features):
    """Feature column names for samples.csv: the training CSV's, else None (f0, f1, ...)."""
    data = cfg["data"]
    names = data.get("csv_feature_columns")
    path = data.get("path")
    if not names and data["source"] == "file" and str(path).lower().endswith(".csv") and os.path.isfile(path):
        try:
            with open(path, encoding="utf-8-sig", newline="") as f:
                header = next((row for row in csv.reader(f) if row), [])
        except (OSError, UnicodeDecodeError, csv.Error):
            header = []
        skip = (data["csv_id_column"], data["csv_time_column"], *(data.get("attributes") or []),
                *(data.get("categorical") or []))
        names = [h.strip() for h in header if h.strip() not in skip]
    return list(names) if names and len(names) == num_features else None


# ---------------------------------------------------------------- the command

def check_args(args):
    if args.num < 1:
        raise ConfigError(f"--num {args.num}: expected at least 1 sequence")
    if args.length is not None and args.length < 2:
        raise ConfigError(f"--length {args.length}: expected at least 2 steps")


def main(args):
    from gan_sru.context import set_context

    check_args(args)
    set_context(args)
    paths = generate(args.run, step=args.checkpoint, num=args.num, length=args.length, seed=args.seed,
                     out=args.out, progress=not args.no_progress, conditions=getattr(args, "conditions", None),
                     condition=getattr(args, "condition", None))
    print(f"generated {paths['num']} sequences from {args.run}, checkpoint step {paths['step']}:")
    for key in ("samples.npy", "samples.npz", "samples.csv", "generate.json", "samples.png",
                "real_vs_generated.png", "correlation.png", "per_class.png", "categories.png", "training.gif"):
        if key in paths:
            print(f"  {paths[key]}")
    return 0


def attribute_rows(run, train, num, seed, conditions=None, condition=None):
    """A conditional run's (N, A) attribute rows to generate for: a conditions file's rows, --condition
    key=value items (the rest drawn from matching training rows), or resampled from the training split;
    None for a run without attributes (refusing conditions then)."""
    from gan_sru.conditional.conditions import ConditionError, draw_attribute_rows, parse_conditions, read_conditions

    enc = run.encoding
    if enc is None or not enc.attributes:
        if conditions or condition:
            raise ConditionError(f"{run.folder.path}: the run has no attributes (data.attributes) to condition on")
        return None
    if conditions and condition:
        raise ConditionError("--conditions and --condition: give one of them")
    if conditions:
        return read_conditions(conditions, enc)
    if condition:
        return parse_conditions(condition, enc, train.attributes, num, seed)
    return draw_attribute_rows(enc, train.attributes, num, seed)


def generate(run_path, step=None, num=1000, length=None, seed=0, out=None, progress=True, conditions=None,
             condition=None):
    """Write the files listed in the module docstring; returns {file name: path, "step": checkpoint step,
    "num": sequences}. conditions: a conditions file; condition: a list of 'key=value' (conditional runs)."""
    from tqdm import tqdm

    from gan_sru import plots
    from gan_sru.sampling import TrainedRun

    check_run_path(run_path)
    run = TrainedRun(run_path, step)
    cfg = run.cfg
    out = out or os.path.join(run.folder.path, "generated")
    train, _ = training_split(cfg)
    if length is not None and length > run.max_len:
        print(f"note: --length {length} is longer than the run's training sequences ({run.max_len} steps); "
              "the generator's time feature runs past the range it was trained on")

    rows = attribute_rows(run, train, num, seed, conditions, condition)
    num = num if rows is None else len(rows)
    attrs = None if rows is None else run.encoding.encode_attributes(rows)
    lengths = draw_lengths(train.lengths, num, seed, length)
    samples = [run.scaler.inverse(s) for s in generate_cut(run, lengths, seed, attrs)]
    os.makedirs(out, exist_ok=True)
    paths = {"step": run.step, "num": num}
    columns, full = None, samples
    if run.encoding is not None:  # continuous features in the files, labels and attributes beside them
        from gan_sru.conditional.conditions import sample_columns

        samples, columns = sample_columns(full, run.encoding, rows)
    names = feature_names(cfg, len(samples[0][0]))
    for name in SAMPLE_FILES:
        paths[name] = os.path.join(out, name)
        save_sequences(samples, paths[name], feature_names=names if name.endswith(".csv") else None,
                       columns=columns)
    varying = len(np.unique(train.lengths)) > 1
    info = {"run": run.folder.path, "checkpoint_step": run.step, "num": num, "seed": seed,
            "length": length, "num_features": run.num_features,
            "lengths": ("--length" if length is not None else
                        "drawn from the training split's lengths" if varying else "the training length"),
            "distinct_lengths": sorted(int(n) for n in np.unique(lengths)),
            "scale": "data units (the run's min-max scaler inverted)", "feature_names": names,
            "conditioning": None if run.encoding is None else {
                "encoding": run.encoding.to_dict(),
                "attributes": ("--conditions " + str(conditions) if conditions else
                               "--condition " + " ".join(condition) if condition else
                               "resampled from the training split's attribute rows" if rows is not None else None),
                "categorical": "a categorical draw per step (Gumbel-max of the generator's logits)"}}
    paths["generate.json"] = os.path.join(out, "generate.json")
    atomic_write_text(paths["generate.json"], json.dumps(info, indent=2, sort_keys=True) + "\n")

    name = cfg["name"]
    paths["samples.png"] = plots.sample_grid(samples, os.path.join(out, "samples.png"),
                                             title=f"{name}: generated, step {run.step}")
    if run.encoding is not None:
        from gan_sru.conditional.plots import conditional_pictures

        paths.update(conditional_pictures(run, train, full, rows, out, f"{name}: ", run.step))
    real = [run.scaler.inverse(s)[:, :len(samples[0][0])] for s in train.sequences[:50]]
    paths["real_vs_generated.png"] = plots.real_vs_fake(real, samples, os.path.join(out, "real_vs_generated.png"),
                                                        title=f"{name}: real vs generated, step {run.step}")
    if len(samples[0][0]) >= 2:
        from gan_sru.metrics import correlation_matrix

        width = len(samples[0][0])
        paths["correlation.png"] = plots.correlation_heatmaps(
            correlation_matrix([s[:, :width] for s in train.sequences]), correlation_matrix(samples),
            os.path.join(out, "correlation.png"),
            title=f"{name}: feature correlations, training split vs generated, step {run.step}")

    # the same noise and lengths for every checkpoint, so that the frames are comparable
    frames, gif_lengths = [], lengths[:GIF_ITEMS]
    for ckpt_step in tqdm(run.checkpoints, desc="checkpoints", unit="ckpt", disable=not progress):
        frame_run = TrainedRun(run_path, ckpt_step)  # replaces the generator's parameters
        gif_attrs = None if attrs is None else attrs[:GIF_ITEMS]
        frames.append((ckpt_step, [frame_run.scaler.inverse(s)[:, :len(samples[0][0])]
                                   for s in generate_cut(frame_run, gif_lengths, seed, gif_attrs)]))
    paths["training.gif"] = plots.checkpoint_gif(frames, os.path.join(out, "training.gif"), max_items=GIF_ITEMS,
                                                 title=f"{name}: generated")
    return paths
