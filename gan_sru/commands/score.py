"""`gan-sru score`: the evaluation of `gan-sru evaluate` for sequences from files, without a run.

    gan-sru score --real TRAIN --fake FAKE --out DIR [--holdout HOLDOUT] [--num 1000] [--repeats 5] [--seed 0]
                  [--protocol fast|paper] [--only fidelity,privacy,...] [--id-column id] [--time-column time]
                  [--feature-columns a,b,c]

TRAIN, HOLDOUT, FAKE: data files as `train` reads them (.npy, .npz, .csv, .csv.gz, .parquet; long or wide;
a folder or glob of them), in data units, with the same feature columns. The min-max scaler is fitted on TRAIN
and HOLDOUT together (as `train` fits it on all the data before holding out), and every set is scored in that
[0, 1] scale, so for a run's own training split, held-out split and samples the numbers are `evaluate`'s.
Without --holdout there is no floor, no memorisation floor, and no privacy section (the attack and the
adversarial accuracy need sequences the generator never saw): the command says so.
Writes DIR/metrics.json (with "privacy"), DIR/report.md, DIR/report.html and the pictures.
"""
import os
import sys
import time

import numpy as np

from gan_sru.commands.sections import SECTIONS, add_only_argument, check_sections, run_sections

_SUBSET_STREAM = 0xE7A1  # the same subsets as evaluate


def add_arguments(p):
    """The command's options on an argparse parser."""
    p.add_argument("--real", required=True, metavar="TRAIN", help="the training data (file, folder or glob)")
    p.add_argument("--holdout", default=None, metavar="HOLDOUT",
                   help="real data the generator never saw: the floor and the privacy section need it")
    p.add_argument("--fake", required=True, metavar="FAKE", help="the generated sequences, in data units")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for metrics.json, report.md, report.html")
    p.add_argument("--num", type=int, default=1000, help="at most this many sequences of each set (default: 1000)")
    p.add_argument("--repeats", type=int, default=5, help="repeats of the classifier and regressor (default: 5)")
    p.add_argument("--protocol", default="fast", choices=("fast", "paper"))
    add_only_argument(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--id-column", default="id")
    p.add_argument("--time-column", default="time")
    p.add_argument("--feature-columns", default=None, help="comma-separated feature columns (default: all others)")
    p.add_argument("--no-progress", action="store_true")


def read_set(path, columns, what):
    """(sequences, feature names) of one file set, unscaled; a DataError names the option."""
    from gan_sru import DataError
    from gan_sru.data.readers import read_data

    try:
        raw = read_data(path, *columns)
    except DataError as e:  # the reader's message starts with the path where it names it
        text = str(e)
        raise DataError(f"--{what} {text}" if text.startswith(f"{path}:") else f"--{what} {path}: {text}") from None
    seqs = [np.asarray(a, np.float64) for a in raw.arrays]
    for i, s in enumerate(seqs):
        if not np.all(np.isfinite(s)):
            raise DataError(f"--{what} {path}: sequence {i} has a missing or non-finite value; expected none")
    names = raw.feature_names  # None for arrays: features are numbered
    return seqs, list(names) if names is not None else [f"feature {c}" for c in range(seqs[0].shape[1])]


def score_files(real_path, fake_path, out, holdout_path=None, num=1000, repeats=5, seed=0, protocol="fast",
                only=SECTIONS, iterations=None, columns=("id", "time", None), progress=True, log=None):
    """Score FAKE against REAL (and the HOLDOUT floor) and write metrics.json, report.md, report.html into `out`.

    Returns the metrics.json dict (evaluate's keys; "run" is the real file, "checkpoint_step" None, plus
    "sections": those computed, "missing": {section: why not}).
    """
    from gan_sru import DataError, metrics
    from gan_sru.commands import evaluate
    from gan_sru.commands.evaluate_memorisation import memorisation_section, privacy_section
    from gan_sru.commands.evaluate_report import write_pictures
    from gan_sru.commands.evaluate_separability import separability_section
    from gan_sru.data.scaling import MinMaxScaler
    from gan_sru.metrics.ts2vec import default_iterations
    from gan_sru.report import write_html

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    only = check_sections(only)
    evaluate.check_request(num, repeats, seed)
    t0 = time.perf_counter()
    train, names = read_set(real_path, columns, "real")
    fake_raw, fake_names = read_set(fake_path, columns, "fake")
    held_raw, held_names = ([], names) if holdout_path is None else read_set(holdout_path, columns, "holdout")
    for what, path, other in (("fake", fake_path, fake_names), ("holdout", holdout_path, held_names)):
        if other != names:
            raise DataError(f"--{what} {path}: features {other}; expected those of --real {real_path}: {names}")
    scaler = MinMaxScaler().fit(train + held_raw)
    scale = lambda seqs: [scaler.transform(s).astype(np.float32) for s in seqs]  # noqa: E731
    train_s, held_s, fake = scale(train), scale(held_raw), scale(fake_raw)
    rng = np.random.default_rng([seed, _SUBSET_STREAM])
    real = evaluate._subset(train_s, num, rng)
    held = evaluate._subset(held_s, num, rng) if held_s else []
    fake = evaluate._subset(fake, num, np.random.default_rng([seed, _SUBSET_STREAM, 1]))
    settings = metrics.protocol_settings(protocol, real[0].shape[1])
    iters = evaluate._iterations(iterations, settings, default_iterations(sum(s.size for s in real)))
    for name in ("discriminative", "predictive"):
        settings[name]["iterations"] = iters[name]
    os.makedirs(out, exist_ok=True)
    missing = {}
    if len(held) < 2:
        why = (f"--holdout has {len(held)} sequence(s)" if holdout_path else "no --holdout") + \
              ": at least 2 held-out sequences are needed"
        missing = {"floor": why, "privacy": why, "memorisation floor": why}
    result = {"run": os.path.abspath(real_path), "fake": os.path.abspath(fake_path),
              "holdout_file": holdout_path and os.path.abspath(holdout_path), "checkpoint_step": None,
              "num_generated": len(fake), "num_real": len(real), "num_holdout": len(held), "repeats": repeats,
              "seed": seed, "protocol": {"name": protocol, "description": settings.pop("description"), **settings,
                                         "context_fid": {"iterations": iters["context_fid"], "encoder": "TS2Vec"}},
              "iterations": iters, "scale": "[0, 1] scale of --real and --holdout's min-max",
              "generated": None, "holdout": None, "targets": evaluate.TARGETS, "separability": None,
              "memorisation": None, "privacy": None, "pictures": {}, "sections": list(only), "missing": missing}

    def fidelity():
        sets = [fake, held] if len(held) >= 2 else [fake]
        fids = metrics.context_fids(real, sets, iterations=iters["context_fid"], seed=seed, progress=progress)
        result["generated"] = evaluate.score_sets(real, fake, repeats, seed, settings, fids[0], progress)
        if len(held) >= 2:
            result["holdout"] = evaluate.score_sets(real, held, repeats, seed, settings, fids[1], progress)
        write_pictures(real, fake, result["generated"], result["holdout"], out, "scored files")
        result["pictures"].update({k: evaluate.PICTURES[k] for k in evaluate.FIDELITY_PICTURES})

    def separability():
        result["separability"] = separability_section(real, fake, held, seed, out, "scored files")
        if result["separability"] is not None:
            result["pictures"]["separability"] = evaluate.PICTURES["separability"]

    def memorisation():
        result["memorisation"] = memorisation_section(train_s, fake, held, {}, out, "scored files")
        result["pictures"]["memorisation"] = evaluate.PICTURES["memorisation"]

    def privacy():
        if len(held) >= 2:
            result["privacy"] = privacy_section(train_s, fake, held, seed)

    run_sections(only, dict(fidelity=fidelity, separability=separability, memorisation=memorisation,
                            privacy=privacy), log)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    evaluate._write_json(result, os.path.join(out, "metrics.json"))
    from gan_sru.files import atomic_write_text

    atomic_write_text(os.path.join(out, "report.md"), report_markdown(result))
    write_html(result, out, real, fake, data_summary={"--real": real_path, "--holdout": holdout_path or "(none)",
                                                      "--fake": fake_path, "features": ", ".join(map(str, names))},
               title=f"Scores of {os.path.basename(fake_path)}")
    result["out"] = out
    return result


def report_markdown(result):
    """report.md of the sections computed, with the ones that could not be."""
    from gan_sru.commands.evaluate_memorisation import memorisation_markdown, privacy_markdown
    from gan_sru.commands.evaluate_report import score_table
    from gan_sru.commands.evaluate_separability import separability_markdown
    from gan_sru.report import sample_size_warning

    r = result
    lines = [f"# Scores of `{r['fake']}`", "", f"- real (training): `{r['run']}`, {r['num_real']} sequences scored",
             f"- held-out: `{r['holdout_file']}`, {r['num_holdout']} sequences", f"- generated: {r['num_generated']}",
             f"- protocol: **{r['protocol']['description']}**; repeats {r['repeats']}; seed {r['seed']}", ""]
    for what, why in r["missing"].items():
        lines.append(f"Not computed: {what} ({why}).")
    if sample_size_warning(r):
        lines += ["", f"Warning: {sample_size_warning(r)}."]
    if r["generated"] is not None:
        lines += ["", score_table(dict(r, holdout=r["holdout"])), ""]
    if r["separability"] is not None:
        lines.append(separability_markdown(r["separability"]))
    if r["memorisation"]:
        lines.append(memorisation_markdown(dict(r["memorisation"], shared_steps=False)))
    if r["privacy"]:
        lines.append(privacy_markdown(r["privacy"]))
    return "\n".join(lines) + "\n"


def main(args):
    features = args.feature_columns.split(",") if args.feature_columns else None
    result = score_files(args.real, args.fake, args.out, args.holdout, num=args.num, repeats=args.repeats,
                         seed=args.seed, protocol=args.protocol, only=args.only, progress=not args.no_progress,
                         columns=(args.id_column, args.time_column, features))
    for what, why in result["missing"].items():
        print(f"not computed: {what} ({why})")
    if result["generated"] is not None:
        from gan_sru.commands.evaluate_report import score_table

        print(score_table(result))
    if result["privacy"] and result["privacy"]["membership_inference"]:
        mia = result["privacy"]["membership_inference"]
        print(f"privacy: membership attack AUC {mia['auc']:.3f} (floor 0.5), advantage interval "
              f"{mia['interval'][0]:+.3f} to {mia['interval'][1]:+.3f}; flags {mia['tpr_at_low_fpr']:.1%} of "
              f"members at {mia['low_fpr']:.1%} false positives")
    print(f"written: {os.path.join(args.out, 'metrics.json')}, report.md, report.html")
    return 0
