"""Pictures of samples and evaluation results (a run's training curves: plots_training.py).

Every function writes one PNG (``checkpoint_gif``: one GIF) and returns its path as a
``str``; parent folders are created and the file is replaced atomically. Figures are
built with matplotlib's object API on an Agg canvas, never through ``pyplot``, so
nothing is registered globally, the backend of the caller is left alone and each
figure is freed once written (no ``plt.close`` needed: no reference survives). Sizes are in pixels, ``size=(width,
height)``, and the written image has exactly that size.

Sequences are a list of float arrays ``(L_i, C)`` or one ``(N, L, C)`` array.
"""
import math

import imageio.v3 as iio
import numpy as np
from matplotlib.lines import Line2D

from gan_sru.files import atomic_write

from .common import FAKE_COLOR, REAL_COLOR, figure, save, value_limits


def _as_list(seqs):
    """Sequences as a list of 2-D float arrays (L_i, C)."""
    out = [np.asarray(s, dtype=np.float64) for s in seqs]
    return [s[:, None] if s.ndim == 1 else s for s in out]


def spread_sample(seqs, k, seed=0):
    """At most k of the sequences, drawn without replacement over the whole set with a fixed seed and kept in
    their order, so windows cut from one long series come from all over it, not from one stretch of
    neighbours (the first k of a held-out block overlap each other)."""
    if len(seqs) <= k:
        return list(seqs)
    return [seqs[i] for i in np.sort(np.random.default_rng(seed).choice(len(seqs), size=k, replace=False))]


def _grid_shape(n):
    cols = max(1, math.ceil(math.sqrt(n)))
    return math.ceil(n / cols), cols


def _grid_axes(fig, n):
    """A near-square grid of n tick-less cells (others hidden), as a flat list of axes."""
    rows, cols = _grid_shape(max(1, n))
    axes = list(fig.subplots(rows, cols, squeeze=False).flat)
    for ax in axes[n:]:
        ax.axis("off")
    for ax in axes[:n]:
        ax.set_xticks([])
        ax.set_yticks([])
    # Fixed margins (cells have no ticks): tight_layout would cost ~1 s a figure.
    fig.subplots_adjust(left=0.02, right=0.98, bottom=0.02, top=0.92, wspace=0.08, hspace=0.08)
    return axes[:n]


def _fill_grid(fig, axes, seqs, title, ylim):
    """Draw sequence k (every feature a line) into cell k, replacing what the cells held."""
    for k, ax in enumerate(axes):
        for line in list(ax.lines):
            line.remove()
        ax.set_visible(k < len(seqs))
        if k < len(seqs):
            for c in range(seqs[k].shape[1]):
                ax.plot(seqs[k][:, c], color=f"C{c % 10}", linewidth=1.0)
            ax.relim()
            ax.autoscale_view(scaley=False)
        ax.set_ylim(*ylim)
    fig.suptitle(title)


def sample_grid(seqs, path, title="samples", max_items=16, size=(800, 800)):
    """Grid of line plots, one sequence per cell (first ``max_items``), every feature a line.

    Returns the PNG path (``size`` pixels).
    """
    seqs = _as_list(seqs)[:max_items]
    fig = figure(size)
    _fill_grid(fig, _grid_axes(fig, len(seqs)), seqs, title, value_limits([seqs]))
    return save(fig, path)


MAX_FEATURE_PANELS = 8  # real_vs_fake shows at most this many features: more panels are unreadable


def pick_features(real, max_features=MAX_FEATURE_PANELS):
    """Indices of the features to draw: all when there are at most ``max_features``, else the
    ``max_features`` of highest variance in ``real`` (pooled over sequences and steps), in index order."""
    real = _as_list(real)
    C = real[0].shape[1]
    if C <= max_features:
        return list(range(C))
    var = np.concatenate(real).var(axis=0)
    return sorted(int(c) for c in np.argsort(-var, kind="stable")[:max_features])


def real_vs_fake(real, fake, path, features=None, max_items=50, title="real vs generated", size=None):
    """Real (blue) and generated (orange) sequences overlaid, one panel per feature, each panel with its
    own y axis (features of different units stay readable).

    Args:
        real, fake: sequence sets with the same number of features C (``fake`` may be empty).
        features: feature indices to show; default ``pick_features(real)``: all of up to 8 features, else
            the 8 of highest variance (the title says so).
        max_items: sequences drawn from each set, spread over it (``spread_sample``).
        size: pixels; default (1200, 400) for up to 5 panels in one row, (1200, 650) for two rows.

    Returns the PNG path.
    """
    from matplotlib.collections import LineCollection

    real, fake = spread_sample(_as_list(real), max_items), spread_sample(_as_list(fake), max_items)
    C = real[0].shape[1]
    if features is None:
        features = pick_features(real)
        if len(features) < C:
            title = f"{title} ({len(features)} of {C} features, highest variance)"
    features = list(features)
    rows = 1 if len(features) <= 5 else 2
    cols = math.ceil(len(features) / rows)
    fig = figure(size or (1200, 400 if rows == 1 else 650))
    axes = list(fig.subplots(rows, cols, squeeze=False).flat)
    for ax in axes[len(features):]:
        ax.axis("off")
    for ax, c in zip(axes, features):
        for seqs, color in ((real, REAL_COLOR), (fake, FAKE_COLOR)):
            if seqs:  # one collection per set: far faster than a plot call per sequence
                ax.add_collection(LineCollection([np.column_stack([np.arange(len(s)), s[:, c]]) for s in seqs],
                                                 colors=color, alpha=0.3, linewidths=0.8))
        ax.set_ylim(*value_limits([[s[:, c:c + 1] for s in real], [s[:, c:c + 1] for s in fake]]))
        ax.set_xlim(0, max(len(s) for s in real + fake) - 1 or 1)
        ax.set_title(f"feature {c}", fontsize="medium")
        ax.tick_params(labelsize="small")
        if ax in axes[(rows - 1) * cols:]:
            ax.set_xlabel("step")
    axes[0].legend(handles=[Line2D([], [], color=color, label=label) for seqs, color, label in
                            ((real, REAL_COLOR, "real"), (fake, FAKE_COLOR, "generated")) if seqs],
                   loc="upper right", fontsize="small")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return save(fig, path)


def correlation_heatmaps(real_corr, fake_corr, path, title="feature correlations", size=(1500, 540)):
    """Real and generated feature-correlation matrices side by side (colour scale -1..1) and their
    difference, generated - real (its own symmetric scale, at least +-0.2).

    ``real_corr``, ``fake_corr``: (C, C), e.g. from ``metrics.correlation_matrix``. Up to 8 features the
    cells carry their values; beyond 16 only every k-th feature is labelled. Returns the PNG path.
    """
    real_corr, fake_corr = np.asarray(real_corr, np.float64), np.asarray(fake_corr, np.float64)
    diff = fake_corr - real_corr
    C = len(real_corr)
    fig = figure(size)
    axes = fig.subplots(1, 3)
    span = max(0.2, float(np.abs(diff).max()))
    panels = ((real_corr, "real", 1.0), (fake_corr, "generated", 1.0),
              (diff, f"generated - real (max |diff| {np.abs(diff).max():.2f})", span))
    ticks = np.arange(0, C, max(1, math.ceil(C / 16)))
    for ax, (m, name, lim) in zip(axes, panels):
        image = ax.imshow(m, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
        ax.set_title(name, fontsize="medium")
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.tick_params(labelsize="small")
        if C <= 8:
            for i in range(C):
                for j in range(C):
                    ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize="x-small",
                            color="white" if abs(m[i, j]) > 0.6 * lim else "black")
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)  # on every panel: equal panel sizes
    axes[0].set_ylabel("feature")
    for ax in axes:
        ax.set_xlabel("feature")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    return save(fig, path)


def pca_scatter(real_proj, fake_proj, path, title="PCA (fitted on real)", size=(600, 600)):
    """Scatter of the first two projected coordinates, real and generated.

    ``real_proj`` (N, >= 2), ``fake_proj`` (M, >= 2), e.g. from ``metrics.pca_projection``.
    Returns the PNG path (``size`` pixels).
    """
    real_proj, fake_proj = np.asarray(real_proj), np.asarray(fake_proj)
    fig = figure(size)
    ax = fig.subplots()
    ax.scatter(real_proj[:, 0], real_proj[:, 1], s=6, alpha=0.5, color=REAL_COLOR, label="real")
    ax.scatter(fake_proj[:, 0], fake_proj[:, 1], s=6, alpha=0.5, color=FAKE_COLOR, label="generated")
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    return save(fig, path)


def autocorrelation_plot(acf_real, acf_fake, path, title="autocorrelation", size=(800, 500)):
    """Mean ACF per feature against lag: real solid, generated dashed, one colour per feature.

    ``acf_real``, ``acf_fake``: (max_lag + 1, C), e.g. from ``metrics.autocorrelation``.
    Returns the PNG path (``size`` pixels).
    """
    acf_real, acf_fake = np.asarray(acf_real), np.asarray(acf_fake)
    fig = figure(size)
    ax = fig.subplots()
    C = acf_real.shape[1]
    for c in range(C):
        ax.plot(acf_real[:, c], color=f"C{c % 10}", linestyle="-")
        ax.plot(acf_fake[:, c], color=f"C{c % 10}", linestyle="--")
    ax.axhline(0.0, color="gray", linewidth=0.5)
    ax.set_xlabel("lag")
    ax.set_ylabel("ACF")
    # Line style tells real from generated; colours name features when there are few.
    handles = [Line2D([], [], color="black", linestyle="-", label="real"),
               Line2D([], [], color="black", linestyle="--", label="generated")]
    if C <= 10:
        handles += [Line2D([], [], color=f"C{c}", label=f"feature {c}") for c in range(C)]
    ax.legend(handles=handles, fontsize="small", ncol=2)
    ax.set_title(title)
    fig.tight_layout()
    return save(fig, path)


def _bar_value(value):
    """(height, error) of a metrics entry: a number, or a dict with mean/std or mae."""
    if isinstance(value, dict):
        if "mean" in value:
            return float(value["mean"]), float(value.get("std", 0.0))
        if "mae" in value:  # the predictive score: its std over the repeats' regressors, where there are several
            return float(value["mae"]), float(value.get("std", 0.0))
        raise ValueError(f"scores_bar: entry {value!r}; expected a number or a dict with 'mean' or 'mae'")
    return float(value), 0.0


def scores_bar(metrics_dict, path, title="scores (lower is better)", size=(700, 400)):
    """Bar chart of named scores, each bar labelled with its value.

    ``metrics_dict``: name -> number, or a result dict of ``metrics`` (``mean``/``std`` is drawn
    with an error bar, ``mae`` as its value, its ``std`` as the error bar where given). Returns the PNG path
    (``size`` pixels).
    """
    names = list(metrics_dict)
    heights, errors = zip(*(_bar_value(metrics_dict[k]) for k in names)) if names else ((), ())
    fig = figure(size)
    ax = fig.subplots()
    bars = ax.bar(range(len(names)), heights, yerr=errors, capsize=4, color=FAKE_COLOR)
    ax.bar_label(bars, labels=[f"{h:.4g}" for h in heights])
    ax.set_xticks(range(len(names)), names)
    ax.set_title(title)
    ax.margins(y=0.15)
    fig.tight_layout()
    return save(fig, path)


def separability_bars(generated, floor, path, title="what tells generated from real", size=(800, 420)):
    """Horizontal bars, one row per group of per-sequence statistics (``metrics.separability``): the group's
    score for generated vs real (orange) over held-out real vs real (blue, the floor; ``floor`` may be None),
    on the discriminative score's 0 .. 0.5 scale, with the largest score's group on top. Returns the path."""
    names = sorted(generated, key=lambda g: generated[g])  # barh draws from the bottom: the largest on top
    y = np.arange(len(names))
    fig = figure(size)
    ax = fig.subplots()
    ax.barh(y + 0.2, [generated[g] for g in names], 0.4, color=FAKE_COLOR, label="generated vs real")
    if floor:
        ax.barh(y - 0.2, [floor.get(g, np.nan) for g in names], 0.4, color=REAL_COLOR,
                label="held-out real vs real (floor)")
    ax.set_yticks(y, names)
    ax.set_xlim(0, 0.5)
    ax.set_xlabel("|accuracy - 0.5| of a logistic regression on the group (0: cannot tell)")
    ax.legend(fontsize="small", loc="lower right")
    ax.grid(alpha=0.3, axis="x")
    ax.set_title(title)
    fig.tight_layout()
    return save(fig, path)


def _render(fig):
    """The figure's pixels as uint8 RGB (height, width, 3)."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy()


def checkpoint_gif(frames_of_seqs, path, fps=2, max_items=16, title="samples", size=(600, 600)):
    """Animated GIF of sample grids across training, one frame per checkpoint.

    Args:
        frames_of_seqs: list of (step, seqs); each frame is drawn like ``sample_grid``
            with the same y-limits for all frames, titled with its step.
        fps: frames per second; the GIF loops forever.

    Returns the GIF path (``size`` pixels).
    """
    if not frames_of_seqs:
        raise ValueError(f"checkpoint_gif: no frames for {path}; expected at least one (step, seqs)")
    frames_of_seqs = [(step, _as_list(seqs)[:max_items]) for step, seqs in frames_of_seqs]
    ylim = value_limits([seqs for _, seqs in frames_of_seqs])
    fig = figure(size)  # one figure, redrawn per frame: building 16 axes costs ~1 s
    axes = _grid_axes(fig, max(len(seqs) for _, seqs in frames_of_seqs))
    images = []
    for step, seqs in frames_of_seqs:
        _fill_grid(fig, axes, seqs, f"{title}, step {step}", ylim)
        images.append(_render(fig))
    frames = np.stack(images)
    return atomic_write(path, lambda f: iio.imwrite(f, frames, extension=".gif", duration=int(round(1000 / fps)),
                                                    loop=0), make_dirs=True)


def nearest_distance_histogram(generated, holdout, path, title="distance to the nearest training sequence",
                               size=(800, 420)):
    """Histograms (step lines, shared bins) of the generated (orange) and held-out (blue; may be None) sequences'
    distances to their nearest training sequence (``metrics.memorisation``), the held-out 5% quantile marked.
    Returns the path."""
    fig = figure(size)
    ax = fig.subplots()
    values = np.concatenate([generated] + ([holdout] if holdout is not None else []))
    bins = np.linspace(0.0, max(float(values.max()), 1e-9) * 1.05, 41)
    ax.hist(generated, bins, histtype="step", linewidth=2, color=FAKE_COLOR, label="generated")
    if holdout is not None:
        ax.hist(holdout, bins, histtype="step", linewidth=2, color=REAL_COLOR, label="held-out real (floor)")
        ax.axvline(float(np.quantile(holdout, 0.05)), color=REAL_COLOR, linestyle="--", linewidth=1,
                   label="held-out 5% quantile")
    ax.set_xlabel("RMS distance to the nearest training sequence ([0, 1] scale)")
    ax.set_ylabel("sequences")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    ax.set_title(title)
    fig.tight_layout()
    return save(fig, path)
