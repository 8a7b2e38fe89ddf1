"""How far generated windows (x_t, ..., x_t-k) are from the data's in its whitened axes, and what a linear
next-step predictor trained on them loses on real data: the measurements behind train.window_covariance_loss.

    .venv/bin/python benchmarks/window_covariance.py RUN [RUN ...] [--checkpoint STEP] [--num N]

For each run folder (its selected checkpoint, else the newest; --checkpoint picks one): N generated sequences
(seed 0), every training sequence and up to N held-out ones, in the [0, 1] training scale. For lags 0, 1, 2:
the reference (mean, whitening) of the training windows (gan_sru/ops/covariance.py) and their covariance's
smallest eigenvalue over the mean one (how much the whitening weighs the least varying direction); for the
held-out and the generated sets, M = E[u u^T] of their whitened windows u: |M - I|^2 / D (the term's target,
as one estimate on the whole set: sampling alone gives the held-out set's value) and the range of M's
eigenvalues (1 everywhere when the second moments match). Then a ridge regression of the last feature's next
step on the last 3 steps of every feature (TimeGAN's predictive task, linear) trained on the training or the
generated sequences, its MAE on the held-out sequences, and how much worse the generated one is. Prints a
table and writes benchmarks/results/window_covariance.json (one entry per run and step, replaced when
measured again).
"""
import os

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "benchmarks", "results", "window_covariance.json")
PREDICTOR_LAGS = 3


def whitened_second_moment(x, mu, W, lags):
    from gan_sru.ops.covariance import windows

    u = (windows(x, np.ones(x.shape[:2]), lags) - mu) @ W
    return u.T @ u / len(u)


def next_step_design(x, k=PREDICTOR_LAGS):
    """Inputs: every feature but the last at steps t-k+1 .. t and the last at t; target: the last at t + 1."""
    N, L, C = x.shape
    X = np.concatenate([x[:, k - 1 - j:L - 1 - j, :C - 1] for j in range(k)] + [x[:, k - 1:L - 1, C - 1:]], axis=2)
    return X.reshape(-1, X.shape[2]), x[:, k:, C - 1].reshape(-1)


def ridge(X, y, lam=1e-3):
    X1 = np.c_[X, np.ones(len(X))]
    return np.linalg.solve(X1.T @ X1 + lam * np.eye(X1.shape[1]), X1.T @ y)


def mae(w, X, y):
    return float(np.abs(np.c_[X, np.ones(len(X))] @ w - y).mean())


def measure(train, holdout, fake):
    from gan_sru.ops.covariance import reference

    out = {}
    for lags in (0, 1, 2):
        mu, W, _ = reference(train, np.ones(train.shape[:2]), lags)
        lam = 1.0 / np.sum(W * W, axis=0)  # W's columns are eigenvectors / sqrt(eigenvalue, floored)
        out[f"lag {lags}, training: smallest eigenvalue / mean"] = float(lam.min() / lam.mean())
        for name, x in (("held-out", holdout), ("generated", fake)):
            M = whitened_second_moment(x, mu, W, lags)
            e = np.linalg.eigvalsh(M)
            out[f"lag {lags}, {name}: |M - I|^2 / D"] = float(np.sum((M - np.eye(len(M))) ** 2) / len(M))
            out[f"lag {lags}, {name}: eigenvalues"] = [float(e.min()), float(e.max())]
    if train.shape[1] > PREDICTOR_LAGS and train.shape[2] >= 2:
        Xt, yt = next_step_design(holdout)
        real, gen = mae(ridge(*next_step_design(train)), Xt, yt), mae(ridge(*next_step_design(fake)), Xt, yt)
        out.update({"linear predictor MAE, trained on real": real, "linear predictor MAE, trained on generated": gen,
                    "linear predictor, generated above real (%)": 100.0 * (gen / real - 1.0)})
    return out


def main():
    from trained_runs import each_run, generated, load_results, parse_args, save_results

    args = parse_args(__doc__)
    results = load_results(OUT)
    for name, run, train_set, holdout_set in each_run(args):
        lengths = {len(s) for s in train_set.sequences} | {len(s) for s in holdout_set.sequences}
        if len(lengths) != 1:
            raise SystemExit(f"{name}: sequences of one length only (got lengths {sorted(lengths)[:5]} ...)")
        train = np.stack(train_set.sequences).astype(np.float64)
        holdout = np.stack(holdout_set.sequences[:args.num]).astype(np.float64)
        r = measure(train, holdout, generated(run, args.num, train.shape[1]))
        print(f"\n{name}, step {run.step}\n| measure | value |\n|---|---|")
        for k, v in r.items():
            shown = f"{v[0]:.3f} - {v[1]:.3f}" if isinstance(v, list) else f"{v:.4g}"
            print(f"| {k} | {shown} |")
        results[f"{name}, step {run.step}"] = r
    save_results(OUT, results)


if __name__ == "__main__":
    main()
