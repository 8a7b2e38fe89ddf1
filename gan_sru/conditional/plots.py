"""Pictures of conditional runs (same conventions as gan_sru.plots: object API on Agg, exact pixel sizes,
atomic writes, each function returns the path it wrote).

- ``per_class``: one row per value of a categorical attribute (a class), real sequences on the left and
  sequences generated for that class on the right, one line per sequence, features in separate colours' shades.
- ``category_pictures``: per categorical feature, the frequency of each category (real vs generated bars) and
  the transition matrices (real, generated) as heatmaps with their values written in.
"""
import os

import numpy as np

from gan_sru.plots.common import FAKE_COLOR, REAL_COLOR, figure, save, value_limits

MAX_PER_CLASS = 8


def per_class(real_by_class, fake_by_class, labels, path, title="per class: real vs generated", size=None):
    """real_by_class / fake_by_class: lists (one per class) of lists of (L_i, C) continuous sequences."""
    k = len(labels)
    size = size or (1100, 230 * k + 60)
    fig = figure(size)
    ylim = value_limits([s for group in real_by_class + fake_by_class for s in [group] if group])
    for r, label in enumerate(labels):
        for c, (group, color, what) in enumerate(((real_by_class[r], REAL_COLOR, "real"),
                                                   (fake_by_class[r], FAKE_COLOR, "generated"))):
            ax = fig.add_subplot(k, 2, 2 * r + c + 1)
            for s in group[:MAX_PER_CLASS]:
                s = np.asarray(s)
                for f in range(s.shape[1]):
                    ax.plot(s[:, f], color=color, alpha=0.25 + 0.75 / (1 + f), lw=0.9)
            ax.set_ylim(*ylim)
            ax.set_title(f"{label}: {what} ({len(group)})", fontsize=9)
            ax.tick_params(labelsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return save(fig, path)


def category_pictures(name, labels, real_freq, fake_freq, real_trans, fake_trans, path, title=None, size=(1500, 460)):
    """Frequencies (bars) and transition matrices (real, generated) of one categorical feature."""
    fig = figure(size)
    ax = fig.add_subplot(1, 3, 1)
    x = np.arange(len(labels))
    ax.bar(x - 0.2, real_freq, 0.4, color=REAL_COLOR, label="real")
    ax.bar(x + 0.2, fake_freq, 0.4, color=FAKE_COLOR, label="generated")
    ax.set_xticks(x, [str(v) for v in labels], fontsize=8)
    ax.set_title(f"{name}: category frequencies", fontsize=10)
    ax.legend(fontsize=8)
    for i, (mat, what) in enumerate(((real_trans, "real"), (fake_trans, "generated"))):
        ax = fig.add_subplot(1, 3, i + 2)
        mat = np.asarray(mat)
        im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis")
        for a in range(len(labels)):
            for b in range(len(labels)):
                ax.text(b, a, f"{mat[a, b]:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if mat[a, b] < 0.5 else "black")
        ax.set_xticks(x, [str(v) for v in labels], fontsize=8)
        ax.set_yticks(x, [str(v) for v in labels], fontsize=8)
        ax.set_xlabel("to", fontsize=8)
        ax.set_ylabel("from", fontsize=8)
        ax.set_title(f"{name}: transitions, {what}", fontsize=10)
        fig.colorbar(im, ax=ax, fraction=0.046)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save(fig, path)


def class_attribute(encoding):
    """The index of the first categorical attribute (the one per-class pictures and scores split by), or None."""
    return next((j for j, a in enumerate(encoding.attributes) if a["kind"] == "categorical"), None)


def conditional_pictures(run, train, samples, rows, out, prefix="", step=None, num_real=200):
    """per_class.png (when the run has a categorical attribute) and categories.png / categories_<name>.png (per
    categorical feature) for generated `samples` ((L_i, C + K) in data units) with attribute `rows`."""
    from gan_sru.metrics.conditional import category_distances

    enc = run.encoding
    C = enc.num_continuous
    paths = {}
    real = [run.scaler.inverse(s) for s in train.sequences[:num_real]]
    j = class_attribute(enc)
    if j is not None and rows is not None:
        cats = enc.attributes[j]["categories"]
        real_rows = enc.decode_attributes(train.attributes[:num_real])
        real_codes, fake_codes = cats.codes(real_rows[:, j]), cats.codes(rows[:, j])
        real_by = [[s[:, :C] for s, c in zip(real, real_codes) if c == k] for k in range(len(cats))]
        fake_by = [[s[:, :C] for s, c in zip(samples, fake_codes) if c == k] for k in range(len(cats))]
        paths["per_class.png"] = per_class(real_by, fake_by, cats.labels, os.path.join(out, "per_class.png"),
                                           title=f"{prefix}real (blue) vs generated (orange) per "
                                                 f"{enc.attributes[j]['name']!r}, step {step}")
    for i, cat in enumerate(enc.categorical):
        d = category_distances([enc.step_codes(s)[:, i] for s in real], [enc.step_codes(s)[:, i] for s in samples],
                               len(cat))
        file = "categories.png" if i == 0 else f"categories_{i}.png"
        paths[file] = category_pictures(cat.name, cat.labels, d["real_frequencies"], d["generated_frequencies"],
                                        d["real_transitions"], d["generated_transitions"], os.path.join(out, file),
                                        title=f"{prefix}{cat.name!r}: frequency TV {d['frequency_tv']:.3f}, "
                                              f"transition TV {d['transition_tv']:.3f}, step {step}")
    return paths
