"""The built-in labelled set `sines_classes`: K classes of periodic signals, with a per-step Markov state.

Sequence i has a class k (uniform over K, the attribute 'class', labels 'c0'..'c{K-1}') that sets two things
a picture shows: the frequency band, f ~ U(F0 + 0.15 k, F0 + 0.15 k + 0.06) radians per step for each feature,
and the waveform (sine, square = tanh(4 sin), triangle = 2/pi arcsin(sin), cycling over k). Phases are
U(0, 2 pi) per feature. A per-step categorical feature 'state' ('low', 'mid', 'high') follows a Markov chain
with the known transition matrix TRANSITION, started from its stationary distribution, and shifts every feature
by SHIFT[state]:

    x[t, c] = wave_k(f_c t + p_c) + SHIFT[state_t]

Deterministic in the seed.
"""
import numpy as np

STATES = ("low", "mid", "high")
SHIFT = np.array([-0.6, 0.0, 0.6])
TRANSITION = np.array([[0.90, 0.08, 0.02],
                       [0.05, 0.90, 0.05],
                       [0.02, 0.08, 0.90]])  # rows: from, columns: to
F0, BAND_STEP, BAND_WIDTH = 0.10, 0.15, 0.06
WAVES = ("sine", "square", "triangle")
_STREAM = 0xC1A5


def stationary(P=TRANSITION):
    """The stationary distribution of a transition matrix (left eigenvector of eigenvalue 1)."""
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    return pi / pi.sum()


def wave(kind, phase):
    if kind == "sine":
        return np.sin(phase)
    if kind == "square":
        return np.tanh(4 * np.sin(phase))
    return 2 / np.pi * np.arcsin(np.sin(phase))


def class_band(k):
    """(low, high) frequency of class k, radians per step."""
    lo = F0 + BAND_STEP * k
    return lo, lo + BAND_WIDTH


def make_sines_classes(num, seq_len, num_features, num_classes, seed):
    """-> (sequences (N, L, C) float64, classes (N,) int, states (N, L) int)."""
    rng = np.random.default_rng([seed, _STREAM])
    classes = rng.integers(0, num_classes, num)
    lo = F0 + BAND_STEP * classes[:, None]
    freq = lo + BAND_WIDTH * rng.random((num, num_features))
    phase = rng.uniform(0, 2 * np.pi, (num, num_features))
    t = np.arange(seq_len)
    states = np.empty((num, seq_len), np.int64)
    states[:, 0] = rng.choice(len(STATES), size=num, p=stationary())
    cum = np.cumsum(TRANSITION, axis=1)
    for s in range(1, seq_len):
        u = rng.random(num)
        states[:, s] = np.minimum((u[:, None] > cum[states[:, s - 1]]).sum(axis=1), len(STATES) - 1)
    arg = freq[:, None, :] * t[None, :, None] + phase[:, None, :]  # (N, L, C)
    x = np.empty((num, seq_len, num_features))
    for k in range(num_classes):
        sel = classes == k
        x[sel] = wave(WAVES[k % len(WAVES)], arg[sel])
    x += SHIFT[states][:, :, None]
    return x, classes, states


def sines_classes_frame(num, seq_len, num_features, num_classes, seed):
    """The set as a long table: id, time, f0.., class ('c0'..), state ('low', 'mid', 'high')."""
    import pandas as pd

    x, classes, states = make_sines_classes(num, seq_len, num_features, num_classes, seed)
    frame = {"id": np.repeat(np.arange(num), seq_len), "time": np.tile(np.arange(seq_len), num)}
    frame.update({f"f{c}": x[:, :, c].ravel() for c in range(num_features)})
    frame["class"] = np.repeat(np.array([f"c{k}" for k in range(num_classes)], dtype=object)[classes], seq_len)
    frame["state"] = np.array(STATES, dtype=object)[states.ravel()]
    return pd.DataFrame(frame)
