"""The validation split of `gan-sru tune` (apart from the training sequences and from evaluate's held-out
set) and a run's discriminative score on it, the objective of every trial."""
import numpy as np

from gan_sru import ConfigError

VALIDATION_FRACTION = 0.1
SPLIT_NOTE = "tune needs data.holdout_split: random (the validation split is nested with the held-out one)"


def validation_score(run_path, data, cfg, num=1000, repeats=3, iterations=None,
                     validation_fraction=VALIDATION_FRACTION):
    """TimeGAN's discriminative score (paper protocol) of a run's selected checkpoint against the validation
    split: the trial's held-out sequences that are not the config's own held-out set.

    data: the trial's TrainingData (its holdout = validation + held out); cfg: the user's config (its
    holdout_fraction and seed). Returns {"mean", "std", "scores", "num_validation"}."""
    from gan_sru import metrics
    from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut

    valid = validation_indices(data.dataset, cfg, validation_fraction)
    real = [data.dataset.sequences[i] for i in valid]
    if len(real) < 2:
        raise ConfigError(f"the validation split holds {len(real)} sequence(s); expected at least 2 (raise "
                          "--validation or use more data)")
    rng = np.random.default_rng([cfg.seed, 0x7E5E])
    if len(real) > num:
        real = [real[i] for i in np.sort(rng.choice(len(real), num, replace=False))]
    run = TrainedRun(run_path, None)
    fake = generate_cut(run, draw_lengths(np.array([len(s) for s in real]), len(real), 0), 0, None)
    settings = metrics.protocol_settings("paper", run.num_features)["discriminative"]
    if iterations is not None:
        settings["iterations"] = int(iterations)
    out = metrics.discriminative_score(real, fake, repeats=repeats, seed=0, progress=False, **settings)
    return {"mean": float(out["mean"]), "std": float(out["std"]), "scores": [float(s) for s in out["scores"]],
            "num_validation": len(real)}


def validation_indices(dataset, cfg, validation_fraction=VALIDATION_FRACTION):
    """The validation split's sequence indices: held out at holdout_fraction + validation, not at holdout_fraction
    (random splits of one seed are nested: the smaller held-out set is inside the larger)."""
    hf, seed = cfg.data.holdout_fraction, cfg.seed
    final = dataset.split_plan(hf, seed, "random").holdout
    wide = dataset.split_plan(hf + validation_fraction, seed, "random").holdout
    if not np.isin(final, wide).all():
        raise ConfigError("the validation split overlaps the held-out set; " + SPLIT_NOTE)
    return np.setdiff1d(wide, final)
