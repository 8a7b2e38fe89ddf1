"""Built-in datasets, generated (no downloads): each returns unscaled float64 sequences (L_i, C)."""
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
