"""Built-in datasets, generated (no downloads): each returns unscaled float64 sequences (L_i, C).

sines: TimeGAN's 5-feature sines. factors: a wide set, C correlated features of a latent-factor VAR(1)
with seasons (known correlation and lag covariances: factor_covariance). lorenz96: the chaotic Lorenz-96 system.
"""
import numpy as np

_SINES_STREAM = 0x5135  # mixed into RNG seeds so each dataset draws its own stream


def make_sines(num_sequences, seq_len, num_features, seed, min_len=None):
    """TimeGAN's sine data: x_t = sin(freq * t + phase), freq and phase ~ U(0, 0.1) per sequence and feature.

    Returns a list of num_sequences float64 arrays (L_i, num_features), values in [-1, 1], not scaled.
    L_i = seq_len, or drawn uniformly from {min_len..seq_len} when min_len is given (each such sequence
    is a prefix of the fixed-length sequence with the same seed). Deterministic in `seed`.
    """
    rng = np.random.default_rng([seed, _SINES_STREAM])
    freq = rng.uniform(0, 0.1, size=(num_sequences, 1, num_features))
    phase = rng.uniform(0, 0.1, size=(num_sequences, 1, num_features))
    t = np.arange(seq_len, dtype=np.float64)[None, :, None]
    x = np.sin(freq * t + phase)  # (N, L, C)
    if min_len is None:
        return list(x)
    lengths = rng.integers(min_len, seq_len + 1, size=num_sequences)
    return [x[i, :n] for i, n in enumerate(lengths)]


# ----------------------------------------------------------------------------- factors: wide, several time scales

_FACTOR_STREAM = 0xFAC7
_STRUCTURE_SEED = 0x5EED  # the structure (loadings, units) is part of the dataset, the same for every run seed
FACTOR_CYCLES = ((10.0, 0.95), (40.0, 0.98))  # stochastic cycles: (period in steps, damping radius)
FACTOR_AR = (0.5, 0.99)  # AR(1) factors: a fast one and a slow one (time scales ~1.4 and ~100 steps)
SEASONAL_PERIODS = (6.0, 24.0, 96.0)  # sin(2 pi t / P + phase), the phase uniform per sequence
NOISE_STD = 0.3  # each feature's own white noise


def factor_structure(num_features):
    """The parameters of the ``factors`` dataset for C = num_features (independent of the data seed).

    Latent state f_t (K = 6): two damped rotations (stochastic cycles of FACTOR_CYCLES) and two AR(1)
    factors, each with unit stationary variance (innovation variance 1 - radius^2); started in the
    stationary law. Features z_t = loadings @ f_t + seasonal @ s_t + NOISE_STD * e_t, where
    s_t = sin(2 pi t / P_j + phase_j) (J = 3). Features come in K contiguous groups: a feature loads
    +-U(0.8, 1.2) on its group's factor and N(0, 0.25^2) on the others, so groups are strongly (and
    some negatively) correlated. Data units: x = offset + scale * z, scale = 10^U(-1, 2).

    Returns dict(transition (K, K), innovation_var (K,), loadings (C, K), seasonal (C, J),
    periods (J,), noise_std, scale (C,), offset (C,), group (C,)).
    """
    rng = np.random.default_rng([_STRUCTURE_SEED, num_features])
    blocks, var = [], []
    for period, radius in FACTOR_CYCLES:
        a = 2 * np.pi / period
        blocks.append(radius * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]))
        var += [1 - radius ** 2] * 2
    for phi in FACTOR_AR:
        blocks.append(np.array([[phi]]))
        var.append(1 - phi ** 2)
    K = sum(len(b) for b in blocks)
    transition = np.zeros((K, K))
    i = 0
    for b in blocks:
        transition[i:i + len(b), i:i + len(b)] = b
        i += len(b)
    group = np.arange(num_features) * K // num_features
    loadings = rng.normal(0.0, 0.25, (num_features, K))
    loadings[np.arange(num_features), group] = rng.choice([-1.0, 1.0], num_features) * rng.uniform(0.8, 1.2,
                                                                                                   num_features)
    scale = 10.0 ** rng.uniform(-1, 2, num_features)
    return dict(transition=transition, innovation_var=np.array(var), loadings=loadings,
                seasonal=rng.normal(0.0, 0.5, (num_features, len(SEASONAL_PERIODS))),
                periods=np.array(SEASONAL_PERIODS), noise_std=NOISE_STD, scale=scale,
                offset=scale * rng.uniform(-3, 3, num_features), group=group)


def factor_covariance(structure, lag):
    """Cov(x_t, x_{t+lag}) (C, C) in data units that ``factor_structure``'s parameters imply (any t):
    loadings (A^lag)^T loadings^T + seasonal diag(cos(2 pi lag / P) / 2) seasonal^T (+ noise at lag 0)."""
    s = structure
    A_k = np.linalg.matrix_power(s["transition"], lag)
    cov = s["loadings"] @ A_k.T @ s["loadings"].T  # the factors' stationary covariance is the identity
    cov += s["seasonal"] @ np.diag(np.cos(2 * np.pi * lag / s["periods"]) / 2) @ s["seasonal"].T
    if lag == 0:
        cov += s["noise_std"] ** 2 * np.eye(len(cov))
    return cov * np.outer(s["scale"], s["scale"])


def make_factors(num_sequences, seq_len, num_features, seed):
    """The ``factors`` dataset (see ``factor_structure``): a list of num_sequences float64 arrays
    (seq_len, num_features) in data units. Deterministic in ``seed``."""
    s = factor_structure(num_features)
    rng = np.random.default_rng([seed, _FACTOR_STREAM])
    N, K = num_sequences, len(s["transition"])
    f = np.empty((N, seq_len, K))
    f[:, 0] = rng.standard_normal((N, K))  # the stationary law: unit variance, independent
    innovations = rng.standard_normal((N, seq_len, K)) * np.sqrt(s["innovation_var"])
    for t in range(1, seq_len):
        f[:, t] = f[:, t - 1] @ s["transition"].T + innovations[:, t]
    phase = rng.uniform(0, 2 * np.pi, (N, 1, len(s["periods"])))
    seasons = np.sin(2 * np.pi * np.arange(seq_len)[None, :, None] / s["periods"] + phase)
    z = f @ s["loadings"].T + seasons @ s["seasonal"].T + s["noise_std"] * rng.standard_normal((N, seq_len,
                                                                                                  num_features))
    return list(s["offset"] + s["scale"] * z)


# ----------------------------------------------------------------------------- Lorenz-96: chaotic, circular

_LORENZ_STREAM = 0x1096
LORENZ_FORCING = 8.0  # chaotic regime
LORENZ_DT = 0.01  # RK4 step
LORENZ_EVERY = 5  # RK4 steps between recorded steps (0.05 time units, Lorenz's "6 hours")
LORENZ_SPINUP = 3.0  # time units run before recording, onto the attractor


def lorenz96_tendency(x, forcing=LORENZ_FORCING):
    """dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F, indices circular; x (..., C), C >= 4."""
    return (np.roll(x, -1, axis=-1) - np.roll(x, 2, axis=-1)) * np.roll(x, 1, axis=-1) - x + forcing


def make_lorenz96(num_sequences, seq_len, num_features, seed):
    """Lorenz-96 (C = num_features >= 4 variables on a circle, F = 8), integrated with RK4 (dt 0.01)
    from x = F + N(0, 1) per sequence, LORENZ_SPINUP time units discarded, then one step recorded every
    0.05 time units. Returns a list of num_sequences float64 arrays (seq_len, C). Deterministic in seed."""
    rng = np.random.default_rng([seed, _LORENZ_STREAM])
    x = LORENZ_FORCING + rng.standard_normal((num_sequences, num_features))
    out = np.empty((num_sequences, seq_len, num_features))
    spinup = int(round(LORENZ_SPINUP / LORENZ_DT))
    for step in range(spinup + seq_len * LORENZ_EVERY):
        if step >= spinup and (step - spinup) % LORENZ_EVERY == 0:
            out[:, (step - spinup) // LORENZ_EVERY] = x
        k1 = lorenz96_tendency(x)
        k2 = lorenz96_tendency(x + 0.5 * LORENZ_DT * k1)
        k3 = lorenz96_tendency(x + 0.5 * LORENZ_DT * k2)
        k4 = lorenz96_tendency(x + LORENZ_DT * k3)
        x = x + LORENZ_DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return list(out)
