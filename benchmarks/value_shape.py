"""How the values of generated sequences are distributed, next to the training data's: the "shape" giveaway.

    .venv/bin/python benchmarks/value_shape.py RUN [RUN ...] [--checkpoint STEP] [--num N]

For each run folder (its selected checkpoint, else the newest; --checkpoint picks one), N generated sequences
(seed 0) and N training sequences, in the [0, 1] training scale:
- excess kurtosis of each feature's values pooled over every step of every sequence (the marginal), the
  mean over features; the 0.5% and 99.5% quantiles' distance inside the data's (positive: shorter tails);
- excess kurtosis within each sequence (`metrics.separability`'s "shape" group), the mean over sequences and
  features, of the values and of their logits (the pre-activations a sigmoid output would need);
- within-sequence kurtosis and variance of three frequency bands (periods over 20 steps, 5-20, under 5)
  and of their sum, and the within-sequence correlation of the bands' squares (how their amplitudes couple).
Prints a table per run and writes benchmarks/results/value_shape.json (one entry per run and step, replaced
when scored again).
"""
import os

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "benchmarks", "results", "value_shape.json")
BANDS = {"slow (periods > 20)": (0.0, 1 / 20), "mid (5-20)": (1 / 20, 1 / 5), "fast (< 5)": (1 / 5, 1.0)}


def kurtosis(x, axis):
    z = (x - x.mean(axis, keepdims=True)) / (x.std(axis, keepdims=True) + 1e-12)
    return (z ** 4).mean(axis) - 3.0


def band(x, lo, hi):
    """x (N, L, C) with its frequencies outside [lo, hi] (cycles per step) removed, per sequence and feature."""
    X = np.fft.rfft(x - x.mean(1, keepdims=True), axis=1)
    f = np.fft.rfftfreq(x.shape[1])
    X[:, (f < lo) | (f > hi)] = 0
    return np.fft.irfft(X, n=x.shape[1], axis=1)


def square_coupling(a, b):
    a2, b2 = a ** 2 - (a ** 2).mean(1, keepdims=True), b ** 2 - (b ** 2).mean(1, keepdims=True)
    return float(((a2 * b2).mean(1) / (a2.std(1) * b2.std(1) + 1e-12)).mean())


def describe(x, ref=None):
    C = x.shape[2]
    flat = x.reshape(-1, C)
    logit = np.log(np.clip(x, 1e-6, 1 - 1e-6) / (1 - np.clip(x, 1e-6, 1 - 1e-6)))
    out = {"pooled kurtosis": float(kurtosis(flat, 0).mean()),
           "within-sequence kurtosis": float(kurtosis(x, 1).mean()),
           "within-sequence kurtosis of the logits": float(kurtosis(logit, 1).mean())}
    if ref is not None:
        lo, hi = np.percentile(flat, [0.5, 99.5], axis=0)
        rlo, rhi = np.percentile(ref.reshape(-1, C), [0.5, 99.5], axis=0)
        out["tails inside the data's (0.5% and 99.5% quantiles)"] = float(((lo - rlo) + (rhi - hi)).mean() / 2)
    parts = {name: band(x, *edges) for name, edges in BANDS.items()}
    for name, b in parts.items():
        out[f"{name}: within-sequence kurtosis"] = float(kurtosis(b, 1).mean())
        out[f"{name}: within-sequence variance"] = float(b.var(1).mean())
    names = list(parts)
    for i in range(3):
        for j in range(i + 1, 3):
            out[f"coupling of squares, {names[i].split()[0]} x {names[j].split()[0]}"] = \
                square_coupling(parts[names[i]], parts[names[j]])
    return out


def main():
    from trained_runs import each_run, generated, load_results, parse_args, save_results

    args = parse_args(__doc__)
    results = load_results(OUT)
    for name, run, train, _ in each_run(args):
        real = np.stack(train.sequences[:args.num]).astype(np.float64)
        fake = generated(run, len(real), real.shape[1])
        r, g = describe(real), describe(fake, real)
        print(f"\n{name}, step {run.step}\n| statistic | real (training) | generated |\n|---|---|---|")
        for k in g:
            print(f"| {k} | {r.get(k, float('nan')):.4g} | {g[k]:.4g} |")
        results[f"{name}, step {run.step}"] = {"real": r, "generated": g}
    save_results(OUT, results)


if __name__ == "__main__":
    main()
