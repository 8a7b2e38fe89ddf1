"""How the learned scores are trained: the fast default, and TimeGAN's settings for comparing with papers.

``paper`` is what TimeGAN's code (Yoon et al. 2019, ``metrics/discriminative_metrics.py`` and
``predictive_metrics.py``) sets: a one-layer GRU of hidden size C // 2 (at least 1 here); Adam with
TensorFlow's defaults (lr 1e-3); the classifier trained 2000 iterations on batches of 128 real plus 128
generated sequences, the regressor 5000 iterations on batches of 128. What differs from TimeGAN's code:
the GRU cell is nnabla's (and cuDNN's) form, reset gate applied to ``U_n h + b``, where TF1's GRUCell
applies it to ``h`` before the product, with uniform +-1/sqrt(H) initialisation (``gru.GRUModel``, NumPy
+ numba); the discriminative accuracy is balanced (equal to TimeGAN's plain accuracy when both test parts
have the same size).

``fast`` keeps the evaluation of a run within about a minute on 2 CPU cores: fewer iterations, a 10x
larger step and a wider GRU (see ``common.default_hidden`` for why). Its numbers are for tracking a
project's own runs, not for a paper's table.

Context-FID's encoder trains TS2Vec's default number of iterations in both protocols (its score depends
on the encoder, so it is not shortened).
"""
from gan_sru import ConfigError

from .common import LEARNING_RATE, default_hidden
from .discriminative import DISCRIMINATIVE_ITERATIONS
from .predictive import PREDICTIVE_ITERATIONS

PROTOCOL_NAMES = ("fast", "paper")


def _timegan_hidden(num_features):
    return max(1, num_features // 2)


def protocol_settings(name, num_features):
    """Keyword arguments of ``discriminative_score`` and ``predictive_score`` under protocol ``name``.

    Returns {"discriminative": {iterations, batch_size, hidden_size, learning_rate},
    "predictive": {...}, "description": str}; ``batch_size`` of the discriminative score counts both
    classes (half real, half generated)."""
    C = int(num_features)
    if name == "fast":
        H = default_hidden(C)
        return {"discriminative": dict(iterations=DISCRIMINATIVE_ITERATIONS, batch_size=128, hidden_size=H,
                                       learning_rate=LEARNING_RATE),
                "predictive": dict(iterations=PREDICTIVE_ITERATIONS, batch_size=128, hidden_size=H,
                                   learning_rate=LEARNING_RATE),
                "description": "fast: this project's quick settings (not TimeGAN's); for tracking runs, "
                               "not for comparing with papers"}
    if name == "paper":
        H = _timegan_hidden(C)
        return {"discriminative": dict(iterations=2000, batch_size=256, hidden_size=H, learning_rate=1e-3),
                "predictive": dict(iterations=5000, batch_size=128, hidden_size=H, learning_rate=1e-3),
                "description": "paper: TimeGAN's code's settings (GRU hidden C // 2, Adam lr 1e-3, classifier "
                               "2000 iterations on 128 real + 128 generated, regressor 5000 iterations on 128)"}
    raise ConfigError(f"--protocol {name!r}: expected one of {', '.join(PROTOCOL_NAMES)}")
