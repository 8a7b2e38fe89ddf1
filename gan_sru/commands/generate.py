"""`gan-sru generate`: samples of a trained run in the data's own units, as files and pictures.

    gan-sru generate --run runs/sines [--checkpoint STEP] [--num 1000] [--length L] [--seed 0] [--start T]
                     [--out DIR | --out FILE.csv|.csv.gz|.parquet|.npz|.npy] [--overwrite]

The run folder holds all that sampling needs (checkpoint: scaling, sizes, categories; sampling.json: the
training lengths and attribute rows, a reference of real sequences for the pictures; data_summary.json: the
column names and time spacing), so generate never reads the training data and works from any folder.

--out FILE writes that one file (its format from its suffix) and refuses an existing one unless --overwrite.
--out DIR (default RUN/generated) writes, every file a pure function of (run, checkpoint, num, length, seed):
    samples.npy            (N, L, C) float32, when all lengths are equal (ragged sequences: samples.npz only)
    samples.npz            'data' (N, L_max, C) zero-padded and 'lengths' (N,): the same without pickle
    samples.csv            one row per step: for a run trained on a table, the table's own columns (its id
                           and time columns, times as dates or numbers from --start or the data's first time
                           at the data's median spacing, the feature names, category labels); else id, time
                           (0..L_i-1), f0, f1, ...
    samples.parquet        the same table as Parquet (runs trained on a table)
    generate.json          what produced the files: run, checkpoint step, num, seed, lengths, features
    samples.png            grid of the first 16 generated sequences
    real_vs_generated.png  training sequences (blue; 50 of the reference drawn at random with the run's seed,
                           as training's pictures draw theirs) and generated ones (orange), one panel and axis
                           per feature (at most 8: the highest-variance ones of wider data)
    correlation.png        feature correlations of the reference training sequences and of the samples, and
                           their difference (data with 2 or more features)
    training.gif           16 sequences with fixed noise (--seed) from every checkpoint kept in the run folder
The files are written into DIR.PID.partial and moved into DIR at the end: an error leaves no partial output.
All data files are read back by gan_sru.data.read_sequences (and so can train another run).

Lengths: --length L gives every sequence L steps. Otherwise a run trained on sequences of one length
generates that length, and a run trained on varying lengths draws each length from the training split's
lengths (seeded by --seed); the generator runs once at the longest length with a per-sequence mask and
each sequence is cut to its length.
"""
import json
import os
import shutil

import numpy as np

from gan_sru import CheckpointError, ConfigError, RunFolderError
from gan_sru.data import save_sequences
from gan_sru.data.readers import SUFFIXES, suffix_of
from gan_sru.data.summary import picture_indices
from gan_sru.files import atomic_write_text
from gan_sru.sampling import (
    MAX_NUM,
    Reference,
    check_run_path,
    draw_lengths,
    generate_cut,
    run_layout,
    sample_size_error,
    sample_table,
)

GIF_ITEMS = 16
PICTURE_REAL = 50  # real sequences in real_vs_generated.png
SAMPLE_FILES = ("samples.npy", "samples.npz", "samples.csv")


# ---------------------------------------------------------------- the command

def check_args(args):
    check_request(args.num, args.length, args.seed)
    out = getattr(args, "out", None)
    if out and is_file_out(out) and os.path.exists(out) and not getattr(args, "overwrite", False):
        raise ConfigError(f"--out {out}: the file exists; pass --overwrite to replace it")


def check_request(num, length, seed, names=("--num", "--length", "--seed")):
    """Refuse a sequence count, length or seed that cannot be generated; `names` say them as the caller does."""
    if num < 1:
        raise ConfigError(f"{names[0]} {num}: expected at least 1 sequence")
    if num > MAX_NUM:
        raise ConfigError(f"{names[0]} {num}: at most {MAX_NUM:,} sequences per call; generate more in several "
                          "calls with other seeds")
    if length is not None and length < 2:
        raise ConfigError(f"{names[1]} {length}: expected at least 2 steps")
    if length is not None and sample_size_error(num, length):
        raise ConfigError(f"{names[0]} {num} {names[1]} {length}: {sample_size_error(num, length)}")
    if not 0 <= seed < 2 ** 63:
        raise ConfigError(f"{names[2]} {seed}: expected a seed from 0 to 2**63 - 1")


def is_file_out(out):
    """--out names one data file (by its suffix) rather than a folder."""
    return suffix_of(out) in SUFFIXES


def main(args):
    from gan_sru.context import set_context

    check_args(args)
    set_context(args)
    paths = generate(args.run, step=args.checkpoint, num=args.num, length=args.length, seed=args.seed,
                     out=args.out, progress=not args.no_progress, conditions=getattr(args, "conditions", None),
                     condition=getattr(args, "condition", None), start=getattr(args, "start", None),
                     overwrite=getattr(args, "overwrite", False))
    print(f"generated {paths['num']} sequences from {args.run}, checkpoint step {paths['step']}:")
    for key in ("file", "samples.npy", "samples.npz", "samples.csv", "samples.parquet", "generate.json",
                "samples.png", "real_vs_generated.png", "correlation.png", "per_class.png", "categories.png",
                "training.gif"):
        if key in paths:
            print(f"  {paths[key]}")
    return 0


def picture_real(sequences, seed, k=PICTURE_REAL):
    """The real sequences real_vs_generated.png shows: k of the reference drawn at random without replacement
    (picture_indices, seeded by the run's seed as training's pictures are), not its first k, which for windows
    of one long series are neighbours."""
    return [sequences[i] for i in picture_indices(len(sequences), seed, k)]


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
             condition=None, start=None, overwrite=False):
    """Write the files listed in the module docstring; returns {file name: path, "step": checkpoint step,
    "num": sequences}. conditions: a conditions file; condition: a list of 'key=value' (conditional runs);
    start: the first time of every generated sequence (a date or a number; default the data's first time).
    With out naming one data file, writes only that file ({"file": path, ...})."""
    from gan_sru.sampling import TrainedRun

    check_request(num, length, seed)
    check_run_path(run_path)
    run = TrainedRun(run_path, step)
    out = out or os.path.join(run.folder.path, "generated")
    if is_file_out(out) and os.path.exists(out) and not overwrite:
        raise ConfigError(f"--out {out}: the file exists; pass --overwrite to replace it")
    layout = run_layout(run.folder.path)
    if start is not None and (layout is None or layout["kind"] != "dataframe" or layout.get("time") is None):
        raise ConfigError(f"--start {start}: the run's data has no time column")
    ref = Reference.of_run(run)
    if length is not None and length > run.max_len:
        print(f"note: --length {length} is longer than the run's training sequences ({run.max_len} steps); "
              "the generator's time feature runs past the range it was trained on")

    rows = attribute_rows(run, ref, num, seed, conditions, condition)
    num = num if rows is None else len(rows)
    attrs = None if rows is None else run.encoding.encode_attributes(rows)
    lengths = draw_lengths(ref.lengths, num, seed, length)
    too_many = sample_size_error(num, int(lengths.max()))
    if too_many:
        raise ConfigError(f"--num {num}: {too_many}")
    full = [run.scaler.inverse(s) for s in generate_cut(run, lengths, seed, attrs)]
    samples, columns = full, None
    if run.encoding is not None:  # continuous features in the arrays, labels and attributes beside them
        from gan_sru.conditional.conditions import sample_columns

        samples, columns = sample_columns(full, run.encoding, rows)
    table = None
    if layout is not None and layout["kind"] == "dataframe":
        table = sample_table(run, samples, columns, layout, start)
    paths = {"step": run.step, "num": num}
    try:
        if is_file_out(out):
            paths["file"] = _write_samples(samples, columns, table, out)
            return paths
        work = f"{out.rstrip(os.sep)}.{os.getpid()}.partial"
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        try:
            written = _write_folder(run, ref, full, samples, columns, table, rows, attrs, lengths, work,
                                    dict(run_path=run_path, num=num, seed=seed, length=length,
                                         conditions=conditions, condition=condition, progress=progress))
            _move_into(work, out)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except OSError as e:  # the temporary name in e.filename means nothing to the user: name `out`
        raise RunFolderError(f"cannot write the samples to {out}: {e.strerror or e}; nothing was written "
                             "(pass --out to write elsewhere)") from None
    paths.update({name: os.path.join(out, os.path.basename(p)) for name, p in written.items()})
    return paths


def _write_samples(samples, columns, table, path):
    """One data file: a table run's table (.csv, .csv.gz, .parquet), else save_sequences' layout."""
    from gan_sru.data.writers import save_table

    if table is not None and suffix_of(path) in (".csv", ".csv.gz", ".parquet"):
        return save_table(table, path)
    if suffix_of(path) == ".npy" and len({len(s) for s in samples}) > 1:
        raise ConfigError(f"--out {path}: the sequences have different lengths, which one .npy array cannot hold "
                          "without pickle; write .npz (zero-padded 'data' and 'lengths'), or give --length")
    save_sequences(samples, path, columns=columns if suffix_of(path) != ".npy" else None)
    return path


def _move_into(work, out):
    """The finished files of `work` into `out`: the folder renamed when `out` is new, else file by file."""
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        os.replace(work, out)
        return
    if not os.path.isdir(out):
        raise ConfigError(f"--out {out}: exists and is not a folder; expected a folder or a new name")
    for name in sorted(os.listdir(work)):
        os.replace(os.path.join(work, name), os.path.join(out, name))


def _write_folder(run, ref, full, samples, columns, table, rows, attrs, lengths, out, request):
    """Every file of the module docstring into `out`; returns {file name: path}."""
    from tqdm import tqdm

    from gan_sru import plots
    from gan_sru.sampling import TrainedRun

    paths = {}
    same_length = len(set(lengths.tolist())) == 1
    for name in SAMPLE_FILES[0 if same_length else 1:] + (("samples.parquet",) if table is not None else ()):
        paths[name] = _write_samples(samples, columns, table, os.path.join(out, name))
    width = len(samples[0][0])
    cat_names = [] if run.encoding is None else [c.name for c in run.encoding.categorical]
    names = (list(table.attrs.get("feature_names", [])) if table is not None else
             [f"f{k}" for k in range(width)])
    varying = len(np.unique(ref.lengths)) > 1
    conditions, condition = request["conditions"], request["condition"]
    info = {"run": os.path.abspath(request["run_path"]), "checkpoint_step": run.step, "num": request["num"],
            "seed": request["seed"], "length": request["length"], "num_features": width + len(cat_names),
            "channels": run.num_features,
            "lengths": ("--length" if request["length"] is not None else
                        "drawn from the training split's lengths" if varying else "the training length"),
            "distinct_lengths": sorted(int(n) for n in np.unique(lengths)),
            "scale": "data units (the run's min-max scaler inverted)", "feature_names": names + cat_names,
            "conditioning": None if run.encoding is None else {
                "encoding": run.encoding.to_dict(),
                "attributes": ("--conditions " + str(conditions) if conditions else
                               "--condition " + " ".join(condition) if condition else
                               "resampled from the training split's attribute rows" if rows is not None else None),
                "categorical": "a categorical draw per step (Gumbel-max of the generator's logits)"}}
    paths["generate.json"] = os.path.join(out, "generate.json")
    atomic_write_text(paths["generate.json"], json.dumps(info, indent=2, sort_keys=True) + "\n")

    name, refset = run.cfg.name, ref.pictures_set()
    paths["samples.png"] = plots.sample_grid(samples, os.path.join(out, "samples.png"),
                                             title=f"{name}: generated, step {run.step}")
    if run.encoding is not None:
        from gan_sru.conditional.plots import conditional_pictures

        paths.update(conditional_pictures(run, refset, full, rows, out, f"{name}: ", run.step))
    real = [run.scaler.inverse(s)[:, :width] for s in picture_real(refset.sequences, run.cfg.seed)]
    paths["real_vs_generated.png"] = plots.real_vs_fake(real, samples, os.path.join(out, "real_vs_generated.png"),
                                                        title=f"{name}: real vs generated, step {run.step}")
    if width >= 2:
        from gan_sru.metrics import correlation_matrix

        paths["correlation.png"] = plots.correlation_heatmaps(
            correlation_matrix([s[:, :width] for s in refset.sequences]), correlation_matrix(samples),
            os.path.join(out, "correlation.png"),
            title=f"{name}: feature correlations, training sequences vs generated, step {run.step}")

    # the same noise and lengths for every checkpoint, so that the frames are comparable
    frames, gif_lengths = [], lengths[:GIF_ITEMS]
    gif_attrs = None if attrs is None else attrs[:GIF_ITEMS]
    for ckpt_step in tqdm(run.checkpoints, desc="checkpoints", unit="ckpt", disable=not request["progress"]):
        try:
            frame_run = TrainedRun(request["run_path"], ckpt_step)  # replaces the generator's parameters
        except CheckpointError:
            if ckpt_step in dict(run.folder.list_checkpoints()):
                raise
            continue  # pruned by a training process since the run was opened
        frames.append((ckpt_step, [frame_run.scaler.inverse(s)[:, :width]
                                   for s in generate_cut(frame_run, gif_lengths, request["seed"], gif_attrs)]))
    paths["training.gif"] = plots.checkpoint_gif(frames, os.path.join(out, "training.gif"), max_items=GIF_ITEMS,
                                                 title=f"{name}: generated")
    return paths
