"""The "what tells generated from real" part of `gan-sru evaluate` (gan_sru.metrics.separability).

Adds to metrics.json a "separability" section ({"generated": {group: score}, "holdout": the floor's or None};
None when real or generated has fewer than the 4 sequences that two folds need), to report.md a section with
its table, and the picture separability.png.
"""
import os

from gan_sru import metrics, plots

PICTURE = "separability.png"


def separability_section(real, fake, held, seed, out, step):
    """The "separability" dict of metrics.json (or None, see the module docstring); writes PICTURE into `out`."""
    if min(len(real), len(fake)) < 4:
        return None
    section = {"generated": metrics.separability(real, fake, seed=seed),
               "holdout": metrics.separability(real, held, seed=seed) if len(held) >= 4 else None}
    plots.separability_bars(section["generated"], section["holdout"], os.path.join(out, PICTURE),
                            title=f"what tells generated from real sequences, step {step}")
    return section


def separability_table(section):
    """Markdown table: each group of statistics, generated vs real next to the floor, the groups that tell
    generated data apart best (by their margin over the floor) first."""
    gen, floor = section["generated"], section["holdout"] or {}
    order = sorted(gen, key=lambda g: -(gen[g] - floor.get(g, 0.0)))
    rows = ["| statistics of each sequence | generated vs real | held-out real vs real (floor) |", "|---|---|---|"]
    rows += [f"| {g} | {gen[g]:.3f} | {floor[g]:.3f} |" if g in floor else f"| {g} | {gen[g]:.3f} | - |"
             for g in order]
    return "\n".join(rows)


def separability_markdown(section):
    """The report.md section."""
    return "\n".join([
        "## What tells generated from real",
        "",
        "For each group of every sequence's own statistics, a logistic regression on that group alone tells the "
        "sets apart (two-fold, on standardised statistics): |accuracy - 0.5|, 0 when it cannot. The groups far "
        "above their floor are what the generator still misses.",
        "",
        separability_table(section),
        "",
        f"![what tells them apart]({PICTURE})",
        "",
    ])
