"""Sample-quality metrics for generated sequences.

Every function takes sequence sets as either a list of float arrays ``(L_i, C)``
(variable length allowed) or one ``(N, L, C)`` array, with values in the training
scale [0, 1].

- ``discriminative_score``: TimeGAN's post-hoc classifier (a GRU) tells real from
  generated; score = |test accuracy - 0.5| (0 is best).
- ``predictive_score``: TimeGAN's train-on-synthetic-test-on-real; a GRU trained on
  one set reads all features and predicts every numeric one a step ahead; MAE on the other set.
- ``mmd2``: unbiased MMD^2 with an RBF kernel on flattened sequences.
- ``context_fid``: Fréchet distance of TS2Vec embeddings (Jeha et al. 2022, as Diffusion-TS), the
  encoder (``ts2vec``, NumPy) trained on the real set.
- ``correlational_score``: Diffusion-TS's distance between lag-0 feature cross-correlation matrices.
- ``protocol_settings``: the learned scores' settings, ``fast`` or TimeGAN's ``paper`` protocol.
- ``separability``: what tells two sets apart, per group of per-sequence statistics (a diagnosis).
- ``privacy_scores``: a distance membership-inference attack and nearest-neighbour adversarial accuracy.
- ``memorisation``: each generated and held-out sequence's distance to its nearest training sequence (copying).
- ``pca_projection``, ``autocorrelation``: numbers behind the evaluation pictures.

The two learned metrics train a GRU written in NumPy + numba with hand-written gradients (``gru``:
``GRUModel``, ``Adam``), draw all randomness from their own ``numpy.random.RandomState`` and touch no
nnabla state and no global RNG. Context-FID's encoder is NumPy on host BLAS too (an nnabla version was
about 8x slower on CPU); its randomness also comes from its own RandomState.

The GRU has the equations of ``nnabla.parametric_functions.gru`` (reset gate applied to ``U_n h + b_hn``).
It is written in NumPy with fused kernels rather than nnabla ops unrolled over time, whose per-op
overhead dominates TimeGAN's 2000 classifier iterations on short sequences.
"""
from .common import as_padded, flatten_pair
from .context_fid import context_fid, context_fids, frechet_distance
from .correlation import correlation_difference, correlation_matrix, correlational_score
from .discriminative import DISCRIMINATIVE_ITERATIONS, discriminative_score
from .memorisation import memorisation, nearest_distances
from .mmd import median_bandwidth, mmd2
from .predictive import PREDICTIVE_ITERATIONS, predictive_score
from .privacy import adversarial_accuracy, membership_inference, privacy_scores
from .protocols import PROTOCOL_NAMES, protocol_settings
from .separability import separability
from .statistics import autocorrelation, pca_projection

__all__ = ["DISCRIMINATIVE_ITERATIONS", "PREDICTIVE_ITERATIONS", "PROTOCOL_NAMES", "as_padded", "autocorrelation",
           "context_fid", "context_fids", "correlation_difference", "correlation_matrix", "correlational_score",
           "discriminative_score", "flatten_pair", "frechet_distance", "median_bandwidth", "memorisation", "mmd2",
           "nearest_distances", "pca_projection", "predictive_score", "privacy_scores", "protocol_settings",
           "separability", "adversarial_accuracy", "membership_inference"]
