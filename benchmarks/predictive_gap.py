"""What the predictive score's gap is made of: a linear next-step regressor's gap, the samples' variance at each
step along the data's principal axes, and the gap once that variance is put right.

    .venv/bin/python benchmarks/predictive_gap.py RUN [RUN ...] [--checkpoint STEP|all] [--num N] [--gru]
        [--all-training]

For each run folder (its selected checkpoint, else the newest; `--checkpoint all`: every kept checkpoint from
step 1000 on, e.g. after `--set train.keep_checkpoints=20`), N generated, training and held-out sequences as
`gan-sru evaluate` draws them (the [0, 1] training scale), and:

- linear gap (%): a ridge regression predicting the last feature at t + 1 from the other features at t - k ..
  t (k = `LAGS`), trained on the generated and on the held-out sequences, its MAE on the training ones: the
  generated one above the held-out one. It reads only the windows' second moments; where it shows the GRU
  score's gap, so do they.
- step variance: the generated sequences' variance at each step along the principal axes of the training
  data's steps, over the data's own (`metrics.separability.minor_directions`: the major axes hold 95% of the
  variance, the minor ones the rest, in sensor-like data each feature's own noise); the held-out ones' for
  comparison. A stationary generator has ratio 1 at every step.
- the lagged correlations (x_t against x_t-k, every pair of features, k in `CORRELATION_LAGS`): their root mean
  square difference from the training sequences', generated and held-out: whether the gap shows entry by entry.
- whitened lagged correlations: the same x_t against x_t+k (k in `WHITENED_LAGS`), in the principal axes of
  the data's steps each divided by its spread, their root mean square difference from the training
  sequences' in three blocks: minor axes at t against major ones at t + k, major against minor, minor against
  minor. Entry by entry in the features' own scale the noise weighs as little as it varies; here it weighs as
  much as the rest.
- largest share: how much of the generated-trained regression's excess squared error one eigen-direction of
  the windows' covariance carries (1: one direction; small: spread over many).
- rescaled gap (%): the linear gap after scaling the generated sequences, step by step and axis by axis, to
  the data's variance: how much of the gap a per-step variance term could remove.

--all-training adds the gap's systematic part: the ridge regression (lags `LAGS[-1]`) trained on as many
generated sequences as the training set has, against one trained on the whole training set, both tested there
(mean squared error, %): no estimation noise is left on either side, so what remains is the samples' bias (the
held-out set's figure, from its fewer sequences, is that noise alone); and the share of that excess along the
minor directions of the windows' covariance (past 95% of its variance: each feature's own noise, step by step)
against the major ones (the shared, slow structure).

--gru adds the paper protocol's GRU regressor (one seed) to the generated, the rescaled and the held-out
sequences: the predictive score's own gap before and after the rescaling (about 3 minutes a run here).

Prints a table and writes benchmarks/results/predictive_gap.json (one entry per run and step).
"""
import os

import numpy as np
import trained_runs

OUT = os.path.join(trained_runs.REPO, "benchmarks", "results", "predictive_gap.json")
LAGS = (0, 2, 5)  # past steps the linear regressor reads besides the current one
CORRELATION_LAGS = (0, 1, 2, 3, 5, 8, 12)
WHITENED_LAGS = (1, 2, 3)
BLOCKS = ("minor to major", "major to minor", "minor to minor")
SHARE = f"largest share of the excess error, lags {LAGS[-1]}"
RIDGE = 1e-3


def design(x, lags):
    """(X, y): the other features at t - lags .. t of every sequence of x (N, L, C) (C >= 2, L > lags + 1),
    and the last feature at t + 1, over t = lags .. L - 2."""
    N, L, C = x.shape
    rows = [x[:, t - lags:t + 1, :C - 1].reshape(N, -1) for t in range(lags, L - 1)]
    return np.concatenate(rows), np.concatenate([x[:, t + 1, C - 1] for t in range(lags, L - 1)])


def ridge(X, y, alpha=RIDGE):
    """Weights (with the intercept last) of a ridge regression of y on X."""
    Xb = np.c_[X, np.ones(len(X))]
    return np.linalg.solve(Xb.T @ Xb + alpha * np.eye(Xb.shape[1]), Xb.T @ y)


def linear_mae(train, test, lags):
    """The MAE on `test` of the ridge regression trained on `train` (each (N, L, C))."""
    w = ridge(*design(train, lags))
    X, y = design(test, lags)
    return float(np.abs(np.c_[X, np.ones(len(X))] @ w - y).mean())


def linear_gap(fake, held, real, lags, held_mae=None):
    """The generated-trained regression's MAE on `real` above the held-out-trained one's (`held_mae`, when
    already measured), in %."""
    base = linear_mae(held, real, lags) if held_mae is None else held_mae
    return 100.0 * (linear_mae(fake, real, lags) / base - 1.0)


def lagged_correlations(x, mean, std, lag):
    """(C, C): the correlations of x_t with x_(t - lag) over every sequence of x (N, L, C) and step, the features
    standardised by the given mean and std."""
    z = (x - mean) / std
    a, b = z[:, lag:].reshape(-1, z.shape[2]), z[:, :z.shape[1] - lag].reshape(-1, z.shape[2])
    return a.T @ b / len(a)


def correlation_differences(x, real):
    """{lag: the root mean square difference between the lagged correlation matrices of x and real}."""
    flat = real.reshape(-1, real.shape[2])
    mean, std = flat.mean(axis=0), flat.std(axis=0) + 1e-12
    return {lag: float(np.sqrt(((lagged_correlations(x, mean, std, lag)
                                 - lagged_correlations(real, mean, std, lag)) ** 2).mean()))
            for lag in CORRELATION_LAGS if lag < real.shape[1] - 1}


def window_basis(real, lags):
    """(the real-trained regression's weights, the eigenvalues and eigenvectors of real's window covariance):
    what `largest_share` compares against."""
    X, y = design(real, lags)
    return (ridge(X, y),) + tuple(np.linalg.eigh(np.cov(X.T)))


def largest_share(x, real, lags, basis=None):
    """The largest share of the regression's excess squared error (trained on x against trained on real, on
    real's windows) that one eigen-direction of real's window covariance carries: 1 when the error lies along
    one direction, small when it is spread. basis: `window_basis(real, lags)`, when already made."""
    w_real, lam, vec = basis or window_basis(real, lags)
    delta = (ridge(*design(x, lags)) - w_real)[:-1]
    part = np.maximum(lam, 0.0) * (vec.T @ delta) ** 2
    return float(part.max() / max(part.sum(), 1e-300))


def excess_error(x, real, lags, basis=None):
    """(excess, minor share): the mean squared error on real's windows of the ridge regression trained on x
    above the one trained on real, in % of the latter, and the share of that excess that lies along the minor
    eigen-directions of real's window covariance, those past 95% of its variance (the excess is (w_x - w_real)'
    Cov (w_x - w_real) plus the square of the mean prediction's offset, real's residual being uncorrelated with
    its inputs). basis: `window_basis(real, lags)`, when already made."""
    w_real, lam, vec = basis or window_basis(real, lags)
    X, y = design(real, lags)
    w = ridge(*design(x, lags))
    Z = np.c_[X, np.ones(len(X))]
    base = float(((Z @ w_real - y) ** 2).mean())
    excess = float(((Z @ w - y) ** 2).mean()) - base
    part = np.maximum(lam, 0.0) * (vec.T @ (w - w_real)[:-1]) ** 2 * (len(X) - 1) / len(X)
    order = np.argsort(lam)[::-1]  # leading first
    major = np.cumsum(lam[order]) / lam.sum() <= 0.95
    major[0] = True
    return 100.0 * excess / base, float(part[order][~major].sum() / max(excess, 1e-300))


def systematic_reference(held, real_all, lags=LAGS[-1]):
    """What --all-training measures every checkpoint of one run against, made once: the whole training set,
    its window basis and the held-out set's entries (their excess is the estimation noise of its fewer
    sequences, the same for every checkpoint)."""
    basis = window_basis(real_all, lags)
    excess, share = excess_error(held, real_all, lags, basis)
    return {"real": real_all, "basis": basis, "lags": lags,
            "held entries": {f"held-out excess MSE on all training, lags {lags} (%)": excess,
                             "held-out minor share of that excess": share}}


def systematic(fake_all, held, real_all, lags=LAGS[-1], ref=None):
    """The entries of --all-training: the excess error and its minor share of regressions trained on
    `fake_all` (as many generated sequences as `real_all`) and on `held`, against the whole training set.
    ref: `systematic_reference(held, real_all, lags)`, when already made (one per run)."""
    ref = ref or systematic_reference(held, real_all, lags)
    excess, share = excess_error(fake_all, ref["real"], ref["lags"], ref["basis"])
    return {f"generated excess MSE on all training, lags {ref['lags']} (%)": excess,
            "generated minor share of that excess": share, **ref["held entries"]}


def principal_axes(real):
    """(mean (C,), axes (C, C), variances (C,), major (C,) bool) of the steps of real (N, L, C): the principal
    axes, leading first, and which of them hold 95% of the variance (as metrics.separability does)."""
    from gan_sru.metrics.separability import minor_directions

    flat = real.reshape(-1, real.shape[2])
    mean = flat.mean(axis=0)
    lam, vec = np.linalg.eigh(np.cov(flat.T, bias=True).reshape(flat.shape[1], -1))
    lam, vec = np.maximum(lam[::-1], 1e-12), vec[:, ::-1]
    minor = minor_directions(real, np.full(len(real), real.shape[1]))[1].shape[1]
    return mean, vec, lam, np.arange(len(lam)) < len(lam) - minor


def whitened_lagged(x, real, axes):
    """{f"lag {k}, {block}": RMS difference}: E[p_t p_t+k^T] of x against real's, p the steps' coordinates
    along the data's principal axes divided by their spread (`principal_axes`), over the blocks `BLOCKS` (rows
    at t, columns at t + k), k in `WHITENED_LAGS` (shorter than the sequences)."""
    mean, vec, lam, major = axes

    def lagged(z, k):
        p = (z - mean) @ vec / np.sqrt(lam)
        a, b = p[:, :-k].reshape(-1, p.shape[2]), p[:, k:].reshape(-1, p.shape[2])
        return a.T @ b / len(a)

    out = {}
    for k in WHITENED_LAGS:
        if k >= real.shape[1] or (~major).sum() == 0:
            continue
        d = lagged(x, k) - lagged(real, k)
        for name, (rows, cols) in zip(BLOCKS, ((~major, major), (major, ~major), (~major, ~major))):
            out[f"lag {k}, {name}"] = float(np.sqrt((d[np.ix_(rows, cols)] ** 2).mean()))
    return out


def step_variance(x, axes):
    """(L, C): the variance over sequences of x (N, L, C) at each step along each principal axis, over the
    data's (`principal_axes`)."""
    mean, vec, lam, _ = axes
    return ((x - mean) @ vec).var(axis=0) / lam


def rescale_steps(x, axes):
    """x with its deviation from each step's mean scaled, step by step and axis by axis, to the data's variance
    along that axis (the step's mean and the correlations between axes and steps kept)."""
    mean, vec, lam, _ = axes
    p = (x - mean) @ vec
    centre = p.mean(axis=0)
    p = (p - centre) / np.maximum(p.std(axis=0), 1e-12) * np.sqrt(lam) + centre
    return p @ vec.T + mean


def describe(x, real, axes, basis, name):
    """One set's per-set entries: its step variances (the major and the minor axes' mean at each step), lagged
    correlations' differences from real (in the features' scale and in the whitened axes) and largest share,
    keyed by `name` ("generated" or "held-out")."""
    major = axes[3]
    v = step_variance(x, axes)
    return {f"{name} step variance, major axes": v[:, major].mean(axis=1).tolist(),
            f"{name} step variance, minor axes": v[:, ~major].mean(axis=1).tolist() if (~major).any() else [],
            f"{name} lagged correlations, RMS difference": {str(k): d for k, d in
                                                           correlation_differences(x, real).items()},
            f"{name} {SHARE}": largest_share(x, real, LAGS[-1], basis),
            f"{name} whitened lagged correlations, RMS difference": whitened_lagged(x, real, axes)}


def reference(real, held):
    """What every generated set of one run is measured against, made once: the principal axes, the window
    basis, the held-out regressions' MAEs and the held-out set's own entries."""
    axes, basis = principal_axes(real), window_basis(real, LAGS[-1])
    return {"axes": axes, "basis": basis, "held MAE": {k: linear_mae(held, real, k) for k in LAGS},
            "held entries": describe(held, real, axes, basis, "held-out")}


def measure(real, held, fake, ref=None):
    """The entry of one generated set: each linear gap, the step variances (major and minor axes' mean at each
    step, generated and held-out), the lagged correlations' differences, the largest share and the rescaled gap
    at the longest lag count. ref: `reference(real, held)`, when already made (one per run)."""
    ref = ref or reference(real, held)
    axes, held_mae = ref["axes"], ref["held MAE"]
    out = {f"linear gap, lags {k} (%)": linear_gap(fake, held, real, k, held_mae[k]) for k in LAGS}
    out[f"linear gap rescaled, lags {LAGS[-1]} (%)"] = linear_gap(rescale_steps(fake, axes), held, real, LAGS[-1],
                                                                 held_mae[LAGS[-1]])
    out["major axes"] = int(axes[3].sum())
    out.update(describe(fake, real, axes, ref["basis"], "generated"))
    out.update(ref["held entries"])
    return out


def gru_mae(train, real, seed=0, iterations=None):
    """The MAE on `real` of the paper protocol's predictive regressor trained on `train` (its iterations unless
    given)."""
    from gan_sru import metrics

    settings = metrics.protocol_settings("paper", real.shape[2])["predictive"]
    settings["iterations"] = iterations or settings["iterations"]
    return metrics.predictive_score(list(train.astype(np.float32)), list(real.astype(np.float32)), seed=seed,
                                    progress=False, **settings)["mae"]


def gru_gaps(fake, held, real, axes, seed=0, iterations=None, base=None):
    """The paper protocol's predictive regressor (trained on each set, tested on `real`): the generated and the
    rescaled sequences' MAE above the held-out one's (`base`: `gru_mae(held, real, ...)`, when already
    measured), in %."""
    base = gru_mae(held, real, seed, iterations) if base is None else base
    return {"GRU gap (%)": 100.0 * (gru_mae(fake, real, seed, iterations) / base - 1.0),
            "GRU gap rescaled (%)": 100.0 * (gru_mae(rescale_steps(fake, axes), real, seed, iterations) / base - 1.0)}


def ends(values):
    """A table cell: a per-step list's values at the first, the middle and the last step."""
    return " / ".join(f"{values[i]:.2f}" for i in (0, len(values) // 2, -1)) if values else "-"


def corr(entry):
    """The table's cell: the lagged correlations' RMS differences at lags 0 and 5, generated (held-out)."""
    d = {n: entry[f"{n} lagged correlations, RMS difference"] for n in ("generated", "held-out")}
    return " / ".join(f"{d['generated'].get(k, np.nan):.4f} ({d['held-out'].get(k, np.nan):.4f})" for k in ("0", "5"))


def row(step, entry):
    """The table's row of one measured checkpoint."""
    var = {f"{n} {a}": ends(entry[f"{n} step variance, {a} axes"]) for n in ("generated", "held-out")
           for a in ("major", "minor")}
    return (f"| {step} | " + " / ".join(f"{entry[f'linear gap, lags {k} (%)']:+.2f}" for k in LAGS)
            + "".join(f" | {var['generated ' + a]} ({var['held-out ' + a]})" for a in ("major", "minor"))
            + f" | {entry[f'linear gap rescaled, lags {LAGS[-1]} (%)']:+.2f} | {corr(entry)}"
            + f" | {entry[f'generated {SHARE}']:.2f} ({entry[f'held-out {SHARE}']:.2f}) | {whitened(entry)} |")


def whitened(entry):
    """The table's cell: the whitened lagged correlations' RMS differences at lag 1, block by block, generated
    (held-out)."""
    d = {n: entry[f"{n} whitened lagged correlations, RMS difference"] for n in ("generated", "held-out")}
    cell = lambda n, b: d[n].get(f"lag 1, {b}", np.nan)  # noqa: E731
    return " / ".join(f"{cell('generated', b):.3f} ({cell('held-out', b):.3f})" for b in BLOCKS)


def checkpoints(run, which):
    """The steps of `run` to measure: None (the one loaded: selected, else newest, or the one asked for), or
    with which == "all" every kept one from step 1000 on."""
    return [s for s in run.checkpoints if s >= 1000] if which == "all" else [None]


def main():
    def options(p):
        p.add_argument("--gru", action="store_true",
                       help="also the paper protocol's GRU gap, before and after the rescaling")
        p.add_argument("--all-training", action="store_true",
                       help="also the linear gap's systematic part, on as many samples as training sequences")

    args = trained_runs.parse_args(__doc__, options)
    from gan_sru.commands.evaluate import _subset  # evaluate's draw: min(num, size), in order
    from gan_sru.sampling import TrainedRun

    results = trained_runs.load_results(OUT)
    which = args.checkpoint
    if which == "all":
        args.checkpoint = None
    for name, run, train, holdout in trained_runs.each_run(args):
        rng = np.random.default_rng(0)
        real, held = (np.stack(_subset(s, args.num, rng)).astype(np.float64)
                      for s in (train.sequences, holdout.sequences))
        if real.shape[1] < LAGS[-1] + 2 or real.shape[2] < 2:
            raise SystemExit(f"{name}: needs 2+ features and {LAGS[-1] + 2}+ steps; got {real.shape[1:]}")
        print(f"\n{name}: linear gaps (%) at lags {', '.join(map(str, LAGS))}; variance at steps 0 / L/2 / L-1,"
              " generated (held-out); rescaled gap (%)")
        print("| step | linear gaps | major axes | minor axes | rescaled | correlations, RMS difference at lags 0 / 5 |"
              " largest share | whitened lag 1: minor-major / major-minor / minor-minor |")
        print("|---|---|---|---|---|---|---|---|")
        ref = reference(real, held)  # the held-out side, once per run
        base = gru_mae(held, real) if args.gru else None
        if args.all_training:
            everything = np.stack(train.sequences).astype(np.float64)
            whole = systematic_reference(held, everything)
        for step in checkpoints(run, which):
            r = run if step is None else TrainedRun(run.folder.path, step)
            fake = trained_runs.generated(r, args.num, real.shape[1])
            entry = measure(real, held, fake, ref)
            if args.gru:
                entry.update(gru_gaps(fake, held, real, ref["axes"], base=base))
            if args.all_training:
                entry.update(systematic(trained_runs.generated(r, len(everything), real.shape[1]), held,
                                        everything, ref=whole))
            key = f"{name}, step {r.step}"
            entry = {**results.get(key, {}), **entry}  # an earlier call's --gru or --all-training entries stay
            results[key] = entry
            print(row(r.step, entry) + (f" GRU gap {entry['GRU gap (%)']:+.2f}%, rescaled "
                                        f"{entry['GRU gap rescaled (%)']:+.2f}%" if args.gru else "")
                  + (" systematic: " + ", ".join(
                      f"{n} {entry[f'{n} excess MSE on all training, lags {LAGS[-1]} (%)']:+.2f}% "
                      f"(minor share {entry[f'{n} minor share of that excess']:.2f})"
                      for n in ("generated", "held-out")) if args.all_training else ""), flush=True)
    trained_runs.save_results(OUT, results)


if __name__ == "__main__":
    main()
