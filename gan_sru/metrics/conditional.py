"""Metrics of conditional runs: attributes, categorical features and class labels.

- ``class_features`` + ``LogisticClassifier``: the label classifier behind the classification scores, a
  multinomial logistic regression (L2, L-BFGS) on simple per-sequence features: per-feature spectra (|rfft|
  of the sequence resampled to 32 steps, mean removed), mean, standard deviation, mean |first difference| and
  the share of large steps. Chosen over a GRU: trains in well under a second, is deterministic, and these
  features separate frequency band and waveform, which is what a class changes in sines_classes.
- ``classification_scores``: train-on-real-test-on-real (TRTR) and train-on-synthetic-test-on-real (TSTR)
  accuracy, and per class the share of sequences generated for class k that a real-trained classifier calls k.
- ``attribute_distances``: unconditional samples' attributes vs real: total variation (categorical) and
  Wasserstein-1 in data units (numeric, scipy.stats.wasserstein_distance).
- ``category_frequencies``, ``transition_matrix``, ``category_distances``: per-step categorical features,
  frequencies (TV distance) and first-order transition matrices (mean row TV, rows weighted by how often the
  real data leaves each category).
"""
import numpy as np

RESAMPLED = 32


def class_features(sequences):
    """list of (L_i, C) continuous sequences -> (N, F) float64 features (see the module docstring)."""
    out = []
    for s in sequences:
        s = np.asarray(s, np.float64)
        t = np.linspace(0, len(s) - 1, RESAMPLED)
        r = np.stack([np.interp(t, np.arange(len(s)), s[:, c]) for c in range(s.shape[1])], axis=1)
        spec = np.abs(np.fft.rfft(r - r.mean(axis=0), axis=0)) / RESAMPLED  # (F, C)
        d = np.abs(np.diff(s, axis=0))
        big = (d > 0.5 * (s.max(axis=0) - s.min(axis=0) + 1e-12)).mean(axis=0)
        out.append(np.concatenate([spec.ravel(), s.mean(axis=0), s.std(axis=0), d.mean(axis=0), big]))
    return np.array(out)


class LogisticClassifier:
    """Multinomial logistic regression on standardised features, L2 penalty `l2`, fitted by L-BFGS."""

    def __init__(self, num_classes, l2=1e-2):
        self.num_classes, self.l2 = num_classes, l2

    def fit(self, x, y):
        from scipy.optimize import minimize

        x = np.asarray(x, np.float64)
        self.mu, self.sd = x.mean(axis=0), x.std(axis=0) + 1e-9
        z = np.hstack([(x - self.mu) / self.sd, np.ones((len(x), 1))])
        onehot = np.eye(self.num_classes)[np.asarray(y)]
        n, f = z.shape

        def loss(w):
            w = w.reshape(f, self.num_classes)
            logits = z @ w
            logits -= logits.max(axis=1, keepdims=True)
            logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
            p = np.exp(logp)
            value = -(onehot * logp).sum() / n + 0.5 * self.l2 * (w[:-1] ** 2).sum()
            grad = z.T @ (p - onehot) / n
            grad[:-1] += self.l2 * w[:-1]
            return value, grad.ravel()

        res = minimize(loss, np.zeros(f * self.num_classes), jac=True, method="L-BFGS-B", options={"maxiter": 500})
        self.w = res.x.reshape(f, self.num_classes)
        return self

    def predict(self, x):
        z = np.hstack([(np.asarray(x, np.float64) - self.mu) / self.sd, np.ones((len(x), 1))])
        return np.argmax(z @ self.w, axis=1)


def classification_scores(real_train, y_train, real_test, y_test, synthetic, y_synthetic, num_classes):
    """TRTR and TSTR accuracy on `real_test`, and per class k the share of `synthetic` sequences made for class
    k that the real-trained classifier labels k. Sequences: lists of continuous (L_i, C); labels: int (N,)."""
    f_train, f_test, f_syn = class_features(real_train), class_features(real_test), class_features(synthetic)
    real_clf = LogisticClassifier(num_classes).fit(f_train, y_train)
    out = {"classifier": "multinomial logistic regression on spectra and step statistics (L-BFGS, L2 0.01)",
           "trtr_accuracy": float((real_clf.predict(f_test) == y_test).mean())}
    present = np.unique(y_synthetic)
    if len(present) == num_classes:  # a classifier needs every class in its training set
        syn_clf = LogisticClassifier(num_classes).fit(f_syn, y_synthetic)
        out["tstr_accuracy"] = float((syn_clf.predict(f_test) == y_test).mean())
    else:
        out["tstr_accuracy"] = None
    pred = real_clf.predict(f_syn)
    out["per_class_accuracy"] = {int(k): float((pred[y_synthetic == k] == k).mean()) for k in present}
    out["conditioned_accuracy"] = float((pred == y_synthetic).mean())
    return out


def attribute_distances(real_rows, generated_rows, encoding):
    """(N, A) and (M, A) attribute rows (labels / numbers) -> {name: {"kind", "distance", "measure"}}."""
    from scipy.stats import wasserstein_distance

    out = {}
    for j, a in enumerate(encoding.attributes):
        if a["kind"] == "categorical":
            cats = a["categories"]
            p = np.bincount(cats.codes(real_rows[:, j]), minlength=len(cats)) / len(real_rows)
            q = np.bincount(cats.codes(generated_rows[:, j]), minlength=len(cats)) / len(generated_rows)
            out[a["name"]] = {"kind": "categorical", "measure": "total variation", "distance": float(
                0.5 * np.abs(p - q).sum()), "real": p.tolist(), "generated": q.tolist(), "labels": cats.labels}
        else:
            out[a["name"]] = {"kind": "numeric", "measure": "Wasserstein-1 (data units)", "distance": float(
                wasserstein_distance(real_rows[:, j].astype(float), generated_rows[:, j].astype(float)))}
    return out


def category_frequencies(codes, k):
    """list of (L_i,) int codes -> (k,) frequencies over all steps."""
    counts = np.bincount(np.concatenate([np.asarray(c).ravel() for c in codes]), minlength=k).astype(np.float64)
    return counts / max(counts.sum(), 1.0)


def transition_counts(codes, k):
    counts = np.zeros((k, k))
    for c in codes:
        c = np.asarray(c)
        np.add.at(counts, (c[:-1], c[1:]), 1.0)
    return counts


def transition_matrix(codes, k):
    """list of (L_i,) int codes -> (k, k) row-stochastic first-order transition matrix (rows never left: 0)."""
    counts = transition_counts(codes, k)
    rows = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0)


def category_distances(real_codes, generated_codes, k):
    """{"frequency_tv", "transition_tv", "real"/"generated" frequencies and transition matrices}: TV of the
    frequencies, and the mean over rows of the rows' TV, weighted by the real data's row counts."""
    pf, qf = category_frequencies(real_codes, k), category_frequencies(generated_codes, k)
    pt, qt = transition_matrix(real_codes, k), transition_matrix(generated_codes, k)
    weight = transition_counts(real_codes, k).sum(axis=1)
    weight = weight / max(weight.sum(), 1.0)
    return {"frequency_tv": float(0.5 * np.abs(pf - qf).sum()),
            "transition_tv": float((weight * 0.5 * np.abs(pt - qt).sum(axis=1)).sum()),
            "transition_max_abs": float(np.abs(pt - qt).max()),
            "real_frequencies": pf.tolist(), "generated_frequencies": qf.tolist(),
            "real_transitions": pt.tolist(), "generated_transitions": qt.tolist()}
