"""Sequence data: built-in sets (sines, factors, lorenz96), user data (tables and arrays), missing values,
scaling, buckets, batches.

A sequence is an array (L_i, C): L_i time steps of C features. A batch is time-major:
x (L, B, C) float32 padded on the right with zeros to its bucket's length L, mask (L, B) float32
(1 valid, 0 padding), lengths (B,) int64.

    data = training_data(cfg)    # load -> scale to [0, 1] -> split -> buckets: .dataset, .train, .holdout, .spec
    batch = sample_batch(data.train, data.spec, batch_size, seed, step)

Unusable data raises gan_sru.DataError naming the file and the first offending place (line, column, value).
"""
from .buckets import Batch, BucketSpec, pad_batch, sample_batch
from .builtin import factor_covariance, factor_structure, make_factors, make_lorenz96, make_sines
from .dataset import Dataset, TrainingData, load_dataset, make_windows, training_data
from .readers import SUFFIXES, read_data, read_frame, read_sequences
from .scaling import MinMaxScaler
from .writers import save_sequences

__all__ = ["Batch", "BucketSpec", "Dataset", "MinMaxScaler", "SUFFIXES", "TrainingData", "factor_covariance",
           "factor_structure", "load_dataset", "make_factors", "make_lorenz96", "make_sines", "make_windows",
           "pad_batch", "read_data", "read_frame", "read_sequences", "sample_batch", "save_sequences",
           "training_data"]
