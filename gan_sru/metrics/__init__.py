"""Sample-quality metrics for generated sequences.

Every function takes sequence sets as either a list of float arrays ``(L_i, C)``
(variable length allowed) or one ``(N, L, C)`` array, with values in the training
scale [0, 1].

- ``discriminative_score``: TimeGAN's post-hoc classifier (a GRU) tells real from
  generated; score = |test accuracy - 0.5| (0 is best).
- ``predictive_score``: TimeGAN's train-on-synthetic-test-on-real; a GRU trained on
  one set predicts the last feature one step ahead; MAE on the other set.
- ``mmd2``: unbiased MMD^2 with an RBF kernel on flattened sequences.
- ``context_fid``: Fréchet distance of TS2Vec embeddings (Jeha et al. 2022, as Diffusion-TS), the
  encoder (``ts2vec``, NumPy) trained on the real set.
- ``correlational_score``: Diffusion-TS's distance between lag-0 feature cross-correlation matrices.
- ``protocol_settings``: the learned scores' settings, ``fast`` or TimeGAN's ``paper`` protocol.
- ``pca_projection``, ``autocorrelation``: numbers behind the evaluation pictures.

The two learned metrics build their nnabla graphs in a private parameter
dictionary (never the global parameter scope), clear it after use, draw all
randomness from their own ``numpy.random.RandomState`` and run with auto-forward
off, restoring the previous setting; the GAN's parameters and the global RNGs are
never touched. They run on nnabla's current default context. Context-FID's encoder is
NumPy on host BLAS (an nnabla version was about 8x slower on CPU) and touches no nnabla
state; its randomness also comes from its own RandomState.

The recurrent model is a GRU cell written with plain ``nnabla.functions`` ops and
unrolled over time, with the same equations as ``nnabla.parametric_functions.gru``
(reset gate applied to ``U_n h + b_hn``). It is used instead of ``PF.gru`` because
on CPU it is about twice as fast for these tiny models: one Adam step at L=24, C=5,
hidden 6, batch 128 took 10.5-11.4 ms of CPU time unrolled, 21-29 ms with ``PF.gru``
and 22-28 ms with ``PF.lstm`` (2 shared cores).
"""
from .common import as_padded, flatten_pair
from .context_fid import context_fid, context_fids, frechet_distance
from .correlation import correlation_difference, correlation_matrix, correlational_score
from .discriminative import DISCRIMINATIVE_ITERATIONS, discriminative_score
from .mmd import median_bandwidth, mmd2
from .predictive import PREDICTIVE_ITERATIONS, predictive_score
from .protocols import PROTOCOL_NAMES, protocol_settings
from .statistics import autocorrelation, pca_projection

__all__ = ["DISCRIMINATIVE_ITERATIONS", "PREDICTIVE_ITERATIONS", "PROTOCOL_NAMES", "as_padded", "autocorrelation",
           "context_fid", "context_fids", "correlation_difference", "correlation_matrix", "correlational_score",
           "discriminative_score", "flatten_pair", "frechet_distance", "median_bandwidth", "mmd2", "pca_projection",
           "predictive_score", "protocol_settings"]
