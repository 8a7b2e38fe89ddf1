"""Pictures of a run's training (same conventions as gan_sru.plots: object API on Agg, exact pixel sizes, atomic
writes, each function returns the path it wrote).

- ``training_curves``: one panel per monitored series (the losses), two panels a row.
- ``curves_from_monitors``: ``training_curves`` of a run's monitors/d_loss and g_loss series files.
- ``selection_curve``: checkpoint selection's score at each checkpoint, the selected one marked.
"""
import math
import os

import numpy as np

from .common import FAKE_COLOR, figure, save


def training_curves(monitor_series, path, title="training", size=None):
    """One panel per series, two panels a row.

    ``monitor_series``: name -> (steps, values). ``size`` defaults to
    (1000, 40 + 260 * rows) pixels. Returns the PNG path.
    """
    names = list(monitor_series)
    rows, cols = max(1, math.ceil(len(names) / 2)), 2 if len(names) > 1 else 1
    fig = figure(size or (1000, 40 + 260 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(names):
            ax.axis("off")
            continue
        steps, values = monitor_series[names[k]]
        ax.plot(np.asarray(steps), np.asarray(values), linewidth=1.0)
        ax.set_title(names[k])
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return save(fig, path)


def selection_curve(history, best, path, title="checkpoint selection", size=(800, 400), remeasured=None):
    """The selection score of each checkpoint: history [(step, score)], the selected step `best` marked;
    remeasured {step: (first, second)}: a remeasured step's two measurements, joined by a vertical bar."""
    steps, scores = (np.asarray(v) for v in zip(*history))
    fig = figure(size)
    ax = fig.subplots()
    ax.plot(steps, scores, marker="o", markersize=3, linewidth=1.0, color=FAKE_COLOR)
    for i, (step, pair) in enumerate(sorted((remeasured or {}).items())):
        ax.plot([step, step], pair, color="tab:purple", linewidth=1.0, marker="_", markersize=8,
                label="remeasured: both measurements (the line: their mean)" if i == 0 else None)
    if best is not None:
        ax.plot([best], [dict(history)[best]], marker="*", markersize=14, color="tab:green", linestyle="none",
                label=f"selected: step {best}")
    if best is not None or remeasured:
        ax.legend(loc="upper right")
    ax.set_xlabel("step")
    ax.set_ylabel("score (lower is better)")
    top = max([float(np.max(scores))] + [max(p) for p in (remeasured or {}).values()])
    ax.set_ylim(0, max(0.52, 1.05 * top))  # the discriminative score's range is [0, 0.5]
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return save(fig, path)


def curves_from_monitors(monitors, path, names=("d_loss", "g_loss")):
    """``training_curves`` of the series files MONITORS/NAME.series.txt that hold lines; the path written, or
    None when none does (before the first log_every step)."""
    data = {}
    for name in names:
        series = os.path.join(monitors, f"{name}.series.txt")
        if os.path.exists(series) and os.path.getsize(series):
            arr = np.loadtxt(series, ndmin=2)
            if arr.size:
                data[name] = (arr[:, 0], arr[:, 1])
    return training_curves(data, path) if data else None
