"""The "does it copy its training data" part of `gan-sru evaluate` (gan_sru.metrics.memorisation).

Adds to metrics.json a "memorisation" section (the medians and 5% quantiles of the generated and held-out
sequences' distances to their nearest training sequence, their ratio, the share of generated sequences closer
than nearly every held-out one, and "shared_steps": whether held-out windows share steps with training
windows, which makes the floor no floor here), to report.md a section with its table, and memorisation.png.
"""
import os

import numpy as np

from gan_sru import metrics, plots

PICTURE = "memorisation.png"


def shares_steps(data_cfg):
    """Whether held-out windows can share steps with training windows: windows cut with a stride shorter than
    the window and held out at random (data.holdout_split: blocks leaves the overlapping ones out)."""
    window = data_cfg.get("window")
    return bool(window and data_cfg.get("window_stride", 1) < window and data_cfg.get("holdout_split") == "random")


def memorisation_section(training, fake, held, data_cfg, out, step):
    """The "memorisation" dict of metrics.json; writes PICTURE into `out`. training: every training sequence (the
    references); fake, held: the generated and held-out sequences scored."""
    section = metrics.memorisation(training, fake, held)
    distances = section.pop("distances")
    held = None if distances["holdout"] is None else np.asarray(distances["holdout"])
    plots.nearest_distance_histogram(np.asarray(distances["generated"]), held, os.path.join(out, PICTURE),
                                     title=f"distance to the nearest of {len(training)} training sequences, "
                                           f"step {step}")
    section["shared_steps"] = shares_steps(data_cfg)
    section["references"] = len(training)
    return section


def memorisation_markdown(section):
    """The report.md section."""
    g, h = section["generated"], section["holdout"]
    rows = ["| nearest training sequence, RMS distance | median | 5% quantile |", "|---|---|---|",
            f"| generated | {g['median']:.4f} | {g['q05']:.4f} |"]
    if h is not None:
        rows.append(f"| held-out real (floor) | {h['median']:.4f} | {h['q05']:.4f} |")
    lines = ["## Does it copy its training data?", "",
             f"Each sequence's RMS distance (over its steps and features, [0, 1] scale) to the nearest of the "
             f"{section['references']} training sequences. Held-out real sequences, which the generator never saw, "
             "give the floor: a generator that does not copy puts its samples about as far from the training data.",
             "", "\n".join(rows), ""]
    if h is not None:
        lines += [f"Generated median over held-out median: **{section['median_ratio']:.3f}** (1: as far as unseen "
                  f"real data; well below 1: copies or near-copies). Generated sequences closer than the held-out 5% "
                  f"quantile: **{100 * section['closer_than_holdout_q05']:.1f}%** (about 5% for a generator that does "
                  "not copy).", ""]
    if section["shared_steps"]:
        lines += ["The held-out windows share steps with training windows (data.window_stride < data.window, "
                  "data.holdout_split: random), so each sits next to a training window by construction and their "
                  "distances are no floor for this check: a ratio above 1 says nothing. Train with "
                  "data.holdout_split: blocks for it.", ""]
    lines += [f"![distance to the nearest training sequence]({PICTURE})", ""]
    return "\n".join(lines)


def privacy_section(training, fake, held, seed):
    """The "privacy" dict of metrics.json (gan_sru.metrics.privacy): the membership-inference attack and the
    nearest-neighbour adversarial accuracy. training: the training sequences scored as members; fake, held: the
    generated and held-out sequences."""
    return metrics.privacy_scores(training, held, fake, seed=seed)


def privacy_markdown(section):
    """The report.md section on membership inference and adversarial accuracy."""
    lines = ["## Does it give away who was in the training data?", ""]
    mia, aa = section["membership_inference"], section["adversarial_accuracy"]
    if mia is None:
        return "\n".join(lines + [f"Not computed: {section['note']}.", ""])
    lo, hi = mia["interval"]
    lines += ["| privacy score | value | floor | reading |", "|---|---|---|---|",
              f"| membership attack AUC (distance to nearest generated) | {mia['auc']:.3f} | 0.500 | "
              f"guesses membership {100 * mia['advantage']:+.1f} points better than chance "
              f"(95% interval {100 * lo:+.1f} to {100 * hi:+.1f}); {mia['n_members']} training vs "
              f"{mia['n_nonmembers']} held-out sequences |",
              f"| members flagged at {100 * mia['low_fpr']:.1f}% false positives | {mia['tpr_at_low_fpr']:.3f} | "
              f"{mia['low_fpr']:.3f} | above its floor: some training sequences are given away, even with "
              "an AUC near 0.5 |"]
    if aa is not None:
        lines += [f"| adversarial accuracy AA_train-synthetic | {aa['aa_train_synthetic']:.3f} | 0.500 | "
                  f"nearest neighbours tell training from generated; n = {aa['n']} each |",
                  f"| adversarial accuracy AA_holdout-synthetic | {aa['aa_holdout_synthetic']:.3f} | 0.500 | "
                  "the same with held-out real data |",
                  f"| privacy loss AA_holdout - AA_train | {aa['privacy_loss']:+.3f} | 0.000 | "
                  "above about 0.05: generated data sits closer to training data than to unseen data |"]
    if mia.get("warning"):
        lines += ["", f"Warning: {mia['warning']}."]
    return "\n".join(lines + [""])
