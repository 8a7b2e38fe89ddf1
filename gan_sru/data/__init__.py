"""Sequence data: built-in sets (sines, factors, lorenz96), user files (.npy/.npz/.csv), min-max scaling,
length buckets, batches.

A sequence is an array (L_i, C): L_i time steps of C features. A batch is time-major:
x (L, B, C) float32 padded on the right with zeros to its bucket's length L, mask (L, B) float32
(1 valid, 0 padding), lengths (B,) int64.

    ds = load_dataset(cfg["data"], cfg["seed"])          # scaled to [0, 1]
    train, holdout = ds.split(cfg["data"]["holdout_fraction"], cfg["seed"])
    spec = BucketSpec.from_lengths(ds.lengths, cfg["data"]["num_buckets"])
    batch = sample_batch(train, spec, batch_size, seed, step)

Unusable data files raise gan_sru.DataError naming the file and the first offending place.
"""
from .buckets import Batch, BucketSpec, pad_batch, sample_batch
from .builtin import factor_covariance, factor_structure, make_factors, make_lorenz96, make_sines
from .dataset import Dataset, load_dataset, make_windows
from .readers import SUFFIXES, read_sequences
from .scaling import MinMaxScaler
from .writers import save_sequences

__all__ = ["Batch", "BucketSpec", "Dataset", "MinMaxScaler", "SUFFIXES", "factor_covariance", "factor_structure",
           "load_dataset", "make_factors", "make_lorenz96", "make_sines", "make_windows", "pad_batch", "read_sequences",
           "sample_batch", "save_sequences"]
