"""`gan-sru evaluate`: how close a trained run's samples are to real data, with a real-vs-real floor.

    gan-sru evaluate --run runs/sines [--checkpoint STEP] [--num 1000] [--repeats 5] [--seed 0]
                     [--protocol fast|paper] [--only fidelity,separability,memorisation,privacy]

Everything is computed in the [0, 1] training scale (the run's min-max scaling of its training data):
generated sequences are the generator's sigmoid output as it is, real ones the scaled training data, so
the scores of runs on data of different units compare, and the predictive score's sigmoid regressor fits.

Sets compared (all re-created from the run's config; `--seed` picks the subsets and the metrics' seeds):
  real       min(num, size) sequences of the run's training split
  generated  num sequences, lengths drawn from the training split's lengths (as `gan-sru generate`)
  held-out   min(num, size) sequences of the run's held-out split (Dataset.split with the config's
             data.holdout_fraction and seed): scored against `real` exactly as `generated` is, this is the
             floor, what a perfect generator would score with that many sequences.
Scores (gan_sru.metrics), all lower is better:
  discriminative  TimeGAN's post-hoc GRU classifier, |accuracy - 0.5|, mean and std over --repeats (0 best)
  predictive      TSTR: a GRU trained on the other set (generated / held-out) reads all features and predicts
                  every numeric one a step ahead on `real`; MAE, mean and std over --repeats regressors as in
                  TimeGAN's code
  context_fid     Context-FID: Fréchet distance of TS2Vec embeddings, the encoder trained on `real`
                  (one encoder, seeded by --seed, for both the generated set and the floor)
  correlational   Diffusion-TS's correlational score: |corr(other) - corr(real)| over the lower triangle / 10,
                  mean and std over 5 draws of a fifth of the set
  mmd2            unbiased MMD^2, RBF kernel, median-heuristic bandwidth, flattened sequences
Does it copy (commands/evaluate_memorisation.py): each generated and held-out sequence's distance to its
  nearest training sequence, their medians' ratio and the generated share under the held-out 5% quantile.
What tells them apart (gan_sru.metrics.separability; commands/evaluate_separability.py): per group of
  per-sequence statistics (levels, spreads, extremes, step changes, autocorrelations, feature correlations,
  spectrum), how well a logistic regression on that group alone tells generated (and, for the floor,
  held-out) from real: |accuracy - 0.5|, the groups far above their floor first. A diagnosis, not a score
  to compare with papers.
--only: the sections to compute, as `gan-sru score --only` (gan_sru.commands.sections): fidelity (the scores,
  their pictures and a conditional run's section), separability, memorisation, privacy; default all.
--protocol: how the two GRU scores are trained (gan_sru.metrics.protocols): `fast` (default; this project's
  quick settings, for tracking runs) or `paper` (TimeGAN's code's settings, for comparing with papers).
Writes into RUN/evaluation/ (each evaluation replaces the previous; metrics.json names its checkpoint):
  metrics.json, report.md, pca.png (real vs generated on the real set's first two principal components),
  autocorrelation.png (mean ACF per feature, real solid, generated dashed), real_vs_generated.png (one axis
  per feature; up to 8 features, the highest-variance ones of wider data), correlation.png (real and
  generated feature correlations and their difference), scores.png (generated next to the floor),
  separability.png (what tells them apart, per group of statistics) and memorisation.png (the nearest-training
  distances of generated and held-out sequences).
"""
import json
import os
import sys
import time

import numpy as np

from gan_sru import ConfigError
from gan_sru.commands.evaluate_memorisation import memorisation_section, privacy_section
from gan_sru.commands.evaluate_report import (
    PICTURES,
    repeats_text,
    report_markdown,
    score_table,
    write_pictures,
    write_report_html,
)
from gan_sru.commands.evaluate_separability import separability_section, separability_table
from gan_sru.commands.sections import SECTIONS, check_sections, run_sections
from gan_sru.files import atomic_write_text
from gan_sru.sampling import check_run_path, draw_lengths, generate_cut, training_split

TARGETS = {"discriminative": 0.05, "predictive": 0.10}
FIDELITY_PICTURES = ("pca", "autocorrelation", "real_vs_generated", "correlation", "scores")
_SUBSET_STREAM = 0xE7A1
DEFAULT_REPEATS = 5


def _subset(sequences, num, rng):
    """min(num, len) sequences picked without replacement, in their original order."""
    if len(sequences) <= num:
        return list(sequences)
    return [sequences[i] for i in np.sort(rng.choice(len(sequences), num, replace=False))]


def _iterations(iterations, settings, context_fid_default):
    """None, an int for every learned score, or a dict of some of {"discriminative", "predictive",
    "context_fid"} -> {score: iterations}; the rest from the protocol's `settings` and Context-FID's default."""
    out = {"discriminative": settings["discriminative"]["iterations"],
           "predictive": settings["predictive"]["iterations"], "context_fid": context_fid_default}
    if isinstance(iterations, dict):
        unknown = set(iterations) - set(out)
        if unknown:
            raise ConfigError(f"iterations: unknown keys {sorted(unknown)}; expected {sorted(out)}")
        out.update(iterations)
    elif iterations is not None:
        out = dict.fromkeys(out, iterations)
    for k, v in out.items():
        if int(v) < 1:
            raise ConfigError(f"iterations[{k!r}] = {v}: expected at least 1")
    return {k: int(v) for k, v in out.items()}


def _repeats(repeats):
    """An int for both learned scores, or a dict of some of {"discriminative", "predictive"} (the rest
    DEFAULT_REPEATS) -> {score: repeats}. The classifier's score varies far more between repeats than the
    regressor's (docs/results/2026-11-29-score-noise.md), so comparisons give it more."""
    if not isinstance(repeats, dict):
        return {"discriminative": repeats, "predictive": repeats}
    unknown = set(repeats) - {"discriminative", "predictive"}
    if unknown:
        raise ConfigError(f"repeats: unknown keys {sorted(unknown)}; expected some of ['discriminative', 'predictive']")
    out = {"discriminative": DEFAULT_REPEATS, "predictive": DEFAULT_REPEATS, **repeats}
    for k, v in out.items():
        if not isinstance(v, int) or v < 1:
            raise ConfigError(f"repeats[{k!r}] = {v!r}: expected a whole number, at least 1")
    return out


def check_request(num, repeats, seed):
    """Refuse --num, --repeats or --seed values that cannot be scored (evaluate and score)."""
    if num < 2:
        raise ConfigError(f"--num {num}: expected at least 2 sequences (the classifier needs a train/test split)")
    if repeats < 1:
        raise ConfigError(f"--repeats {repeats}: expected at least 1")
    if not 0 <= seed < 2 ** 32:  # the learned scores seed RandomState([seed, repeat]): 32 bits
        raise ConfigError(f"--seed {seed}: expected a seed from 0 to 4294967295")


def predictive_numeric(encoding):
    """How many leading features the predictive score predicts: None (all) without categorical features, else
    the numeric ones' count (numeric features come first, then the one-hot blocks), 0 when there is none."""
    if encoding is None or not encoding.categorical:
        return None
    return encoding.num_continuous


def score_sets(real, other, repeats, seed, settings, context_fid, progress=True, numeric=None):
    """The scores of `other` (generated or held-out) against `real`, both in the [0, 1] scale.

    repeats: fresh GRUs per learned score, an int for both or {"discriminative": n, "predictive": m};
    settings: the protocol's {"discriminative": kwargs, "predictive": kwargs} (``protocol_settings`` with the
    iterations in force); context_fid: the Context-FID of `other`, computed with the other sets' (one encoder).
    numeric: the predictive score's targets, the leading numeric features (None: all); mixed data passes its
    numeric count (predictive_numeric), and data with no numeric feature gets no predictive score.
    Returns {"discriminative": {mean, std, scores}, "predictive": {mae, std, scores, mae_per_feature} or None
    (no numeric feature),
    "context_fid": float, "correlational": {mean, std, scores}, "mmd2": float}.
    """
    from gan_sru import metrics

    reps = _repeats(repeats)
    out = {"discriminative": metrics.discriminative_score(real, other, repeats=reps["discriminative"], seed=seed,
                                                          progress=progress, **settings["discriminative"])}
    if numeric is None or numeric >= 1:
        out["predictive"] = metrics.predictive_score(other, real, repeats=reps["predictive"], seed=seed,
                                                     progress=progress, numeric=numeric, **settings["predictive"])
    else:
        out["predictive"] = None
    out["context_fid"] = context_fid
    out["correlational"] = metrics.correlational_score(real, other, seed=seed)
    out["mmd2"] = metrics.mmd2(real, other)
    return out


def evaluate_run(run_path, step=None, num=1000, repeats=DEFAULT_REPEATS, seed=0, progress=True, out=None,
                 iterations=None, floor=None, protocol="fast", data=None, force_data=False, only=SECTIONS, log=None):
    """Score one checkpoint of a run and write metrics.json, report.md and pictures into `out`.

    Args:
        run_path: run folder (runs/<name>).
        step: checkpoint step, "latest" or "best"; None for the selected one (train.select), else the
            newest.
        num: generated sequences, and at most that many real and held-out ones; at least 2.
        repeats: repeats of the discriminative and the predictive score (each a fresh GRU), at least 1: an int
            for both, or a dict of some of "discriminative" and "predictive" (the rest 5).
        seed: seed of the generated noise, the lengths, the real subsets and the metrics.
        progress: tqdm bars of the metrics.
        out: output folder; default RUN/evaluation.
        iterations: training steps of the learned scores: None (the protocol's; Context-FID: TS2Vec's
            default), an int for all three, or a dict of some of "discriminative", "predictive", "context_fid".
        floor: the held-out scores of an earlier call on the same run with the same num, repeats, seed,
            protocol and iterations (its result's "holdout"), reused instead of recomputed; they do not
            depend on the checkpoint.
        protocol: "fast" or "paper" (gan_sru.metrics.protocols): the settings of the two GRU scores.
        data, force_data: --data and --force-data, where the run's training data is now
            (gan_sru.train.run_folder.locate_data; default: the path and fingerprint the run recorded).
        only: --only, the sections to compute (gan_sru.commands.sections: fidelity, separability,
            memorisation, privacy; default all); the others stay None in the result.
        log: called with "[k/n] section" before each section; default: printed to stderr with `progress`.

    Returns:
        the dict written to metrics.json (run, checkpoint_step, num_generated, num_real, num_holdout,
        repeats, seed, protocol {name, description, settings of each learned score}, iterations, scale,
        generated and holdout scores as `score_sets`, targets, separability, memorisation, privacy, pictures,
        sections, seconds), plus "out": the folder.
    """
    from gan_sru import metrics
    from gan_sru.metrics.ts2vec import default_iterations
    from gan_sru.sampling import TrainedRun

    only = check_sections(only)
    if log is None:
        log = (lambda msg: print(msg, file=sys.stderr, flush=True)) if progress else (lambda msg: None)
    reps = _repeats(repeats)
    check_request(num, min(reps.values()), seed)
    if len(set(reps.values())) == 1:
        repeats = reps["discriminative"]  # metrics.json keeps a plain count where both scores share it
    settings = metrics.protocol_settings(protocol, 1)  # refuses an unknown protocol before anything loads
    check_run_path(run_path)
    t0 = time.perf_counter()
    run = TrainedRun(run_path, step)
    out = out or os.path.join(run.folder.path, "evaluation")
    train, holdout = training_split(run.cfg, run.folder.path, data, force_data)
    rng = np.random.default_rng([seed, _SUBSET_STREAM])
    real = _subset(train.sequences, num, rng)
    held = _subset(holdout.sequences, num, rng)
    rows = None
    if run.encoding is not None and run.encoding.attributes:  # unconditional: attributes resampled from training
        from gan_sru.conditional.conditions import draw_attribute_rows

        rows = draw_attribute_rows(run.encoding, train.attributes, num, seed)
    fake = generate_cut(run, draw_lengths(train.lengths, num, seed), seed,
                        None if rows is None else run.encoding.encode_attributes(rows))
    settings = metrics.protocol_settings(protocol, run.num_features)
    iters = _iterations(iterations, settings, default_iterations(sum(s.size for s in real)))
    for name in ("discriminative", "predictive"):
        settings[name]["iterations"] = iters[name]

    os.makedirs(out, exist_ok=True)
    result = {
        "run": run.folder.path, "checkpoint_step": run.step, "num_generated": len(fake), "num_real": len(real),
        "num_holdout": len(held), "repeats": repeats, "seed": seed,
        "protocol": {"name": protocol, "description": settings.pop("description"), **settings,
                     "context_fid": {"iterations": iters["context_fid"], "encoder": "TS2Vec", "output_dims": 320,
                                     "batch_size": 8, "learning_rate": 1e-3}},
        "iterations": iters,
        "scale": "[0, 1] training scale (the run's min-max scaling of its training data)",
        "generated": None, "holdout": None, "targets": TARGETS, "separability": None, "memorisation": None,
        "privacy": None, "pictures": {}, "sections": list(only), "seconds": None,
    }
    if floor is None and len(held) < 2:
        result["holdout_note"] = (f"the held-out split has {len(held)} sequence(s) (data.holdout_fraction "
                                  f"{run.cfg.data.holdout_fraction}); at least 2 are needed for a floor")

    def fidelity():
        need_floor = floor is None and len(held) >= 2
        fids = metrics.context_fids(real, [fake, held] if need_floor else [fake], iterations=iters["context_fid"],
                                    seed=seed, progress=progress)
        numeric = predictive_numeric(run.encoding)
        generated = result["generated"] = score_sets(real, fake, repeats, seed, settings, fids[0], progress, numeric)
        held_scores = result["holdout"] = (score_sets(real, held, repeats, seed, settings, fids[1], progress, numeric)
                                           if need_floor else floor)
        if run.cfg.data.source in ("sines", "sines_varlen"):
            _add_timegan_scale(generated, held_scores, run.scaler)
        write_pictures(real, fake, generated, held_scores, out, f"step {run.step}")
        result["pictures"].update({k: PICTURES[k] for k in FIDELITY_PICTURES})
        if run.encoding is not None:
            from gan_sru.conditional.evaluate import conditional_section

            result["conditional"] = conditional_section(run, train, holdout, fake, rows, num, reps["discriminative"],
                                                        seed, settings, out, progress)

    def separability():
        result["separability"] = separability_section(real, fake, held, seed, out, run.step)
        if result["separability"] is not None:
            result["pictures"]["separability"] = PICTURES["separability"]

    def memorisation():
        result["memorisation"] = memorisation_section(train.sequences, fake, held, run.cfg.data, out, run.step)
        result["pictures"]["memorisation"] = PICTURES["memorisation"]

    def privacy():
        result["privacy"] = privacy_section(train.sequences, fake, held, seed)

    run_sections(only, dict(fidelity=fidelity, separability=separability, memorisation=memorisation,
                            privacy=privacy), log)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    _write_json(result, os.path.join(out, "metrics.json"))
    atomic_write_text(os.path.join(out, "report.md"), report_markdown(result))
    write_report_html(result, out, real, fake, run.folder.config_path, train)
    result["out"] = out
    return result


def _write_json(obj, path):
    atomic_write_text(path, json.dumps(obj, indent=2) + "\n")


def _add_timegan_scale(generated, floor, scaler):
    """TimeGAN reports sines as (sin + 1) / 2, spanning half our [0, 1] min-max range, so its MAEs are ours
    times (max - min) / 2 of each predicted feature in data units, averaged over the features. Added as
    predictive.mae_timegan_scale so the figure compares with the paper's scale."""
    factors = (np.asarray(scaler.max, np.float64) - np.asarray(scaler.min, np.float64)).ravel() / 2.0
    for scores in (generated, floor):
        if scores and scores.get("predictive"):
            per = np.asarray(scores["predictive"]["mae_per_feature"])
            scores["predictive"]["mae_timegan_scale"] = float(np.mean(per * factors[:len(per)]))


def main(args):
    from gan_sru.context import set_context

    set_context(args)  # evaluate_run checks --num and --repeats before it loads anything
    out = os.path.join(os.path.abspath(args.run), "evaluation")
    created = not os.path.exists(out)
    try:
        result = evaluate_run(args.run, step=args.checkpoint, num=args.num, repeats=args.repeats, seed=args.seed,
                              progress=not args.no_progress, protocol=getattr(args, "protocol", "fast"),
                              data=getattr(args, "data", None), force_data=getattr(args, "force_data", False),
                              only=getattr(args, "only", SECTIONS))
    except OSError as e:  # a read-only run folder, a full disk: one line, and no half-written evaluation/
        if created:
            import shutil

            shutil.rmtree(out, ignore_errors=True)
        from gan_sru import RunFolderError

        raise RunFolderError(f"cannot write the evaluation to {e.filename or out}: {e.strerror or e}") from None
    some = "" if tuple(result["sections"]) == SECTIONS else f", sections {', '.join(result['sections'])}"
    print(f"{os.path.basename(result['run'])}, checkpoint step {result['checkpoint_step']}, "
          f"N = {result['num_generated']}, {repeats_text(result['repeats'])} repeats, [0, 1] training scale, "
          f"{result['protocol']['name']} protocol{some}:")
    if result["generated"] is not None:
        print(score_table(result))
    from gan_sru import tracking

    if tracking.log_evaluation(result):  # a tracked run (RUN/tracking.json): its scores join its MLflow run
        print(f"logged to MLflow run {tracking.read_record(result['run'])['run_id']}")
    from gan_sru.report import sample_size_warning

    if sample_size_warning(result):
        print(f"warning: {sample_size_warning(result)}")
    if result.get("privacy") and result["privacy"]["membership_inference"]:
        mia, aa = result["privacy"]["membership_inference"], result["privacy"]["adversarial_accuracy"]
        print(f"privacy: membership attack AUC {mia['auc']:.3f} (floor 0.5, advantage interval "
              f"{mia['interval'][0]:+.3f} to {mia['interval'][1]:+.3f}; flags {mia['tpr_at_low_fpr']:.1%} of "
              f"members at {mia['low_fpr']:.1%} false positives), adversarial-accuracy privacy loss "
              f"{aa['privacy_loss']:+.3f} (floor 0)")
    if result.get("conditional"):
        from gan_sru.conditional.evaluate import conditional_markdown

        print(conditional_markdown(result["conditional"]))
    if result["separability"] is not None:
        print("what tells generated from real (per group of each sequence's statistics, |accuracy - 0.5|):")
        print(separability_table(result["separability"]))
    print(f"written: {os.path.join(result['out'], 'metrics.json')}\n"
          f"         {os.path.join(result['out'], 'report.md')} (with {len(result['pictures'])} pictures)\n"
          f"         {os.path.join(result['out'], 'report.html')} (self-contained)")
    return 0
