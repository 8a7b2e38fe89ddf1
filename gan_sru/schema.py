"""The config schema: every key, its type, default, allowed values and meaning (one table; gan_sru.config
validates against it, and the README's config reference is generated from it)."""
import re
from collections import namedtuple

from gan_sru.registry import DISCRIMINATORS, GENERATORS, LOSSES, OUTPUT_ACTIVATIONS, STRATEGIES

# kind: int | float | bool | str | list[str] | list[dict] (mappings with a "name"), with a trailing "?" when null is allowed.
# allowed: None, a tuple of choices or a Registry (its names), a numeric range (">= 1", "> 0", "[0, 1)"),
# or a regex for strings.
Field = namedtuple("Field", "kind default allowed doc")

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_DURATION = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?[hms])+")

SCHEMA = {
    "name": Field("str", "sines", _NAME, "run name; the run folder is run_dir/name"),
    "seed": Field("int", 0, "[0, 4294967295]", "seed of the data, the split, the batches and the weights"),
    "run_dir": Field("str", "runs", None, "parent folder of run folders"),
    # data
    "data.source": Field("str", "sines", ("sines", "sines_varlen", "factors", "lorenz96", "sines_classes", "file"),
                         "built-in sines (TimeGAN protocol), sines of random lengths, a wide latent-factor "
                         "process with seasons (factors), the chaotic Lorenz-96 system, labelled sines with a "
                         "Markov state (sines_classes), or a file"),
    "data.path": Field("str?", None, None,
                       "data file (.csv, .csv.gz, .parquet, .npy, .npz), or a folder or glob pattern of them, when "
                       "source is file; relative to the working folder"),
    "data.max_file_bytes": Field("int", 4 * 2**30, ">= 1", "largest data file read, in bytes; larger ones are "
                                 "refused (raise it for bigger data)"),
    "data.num_sequences": Field("int", 10000, ">= 1", "number of built-in sequences"),
    "data.seq_len": Field("int", 24, ">= 2", "built-in data: length; sines_varlen: longest length"),
    "data.min_len": Field("int", 8, ">= 2", "sines_varlen: shortest length (lengths drawn U{min_len..seq_len})"),
    "data.num_features": Field("int", 5, ">= 1", "number of built-in features"),
    "data.csv_id_column": Field("str?", "id", None,
                                "tables (CSV, Parquet): column holding the sequence id (long format); null: each "
                                "file is one sequence (wide format); the default 'id' applies where a file has it"),
    "data.csv_time_column": Field("str?", "time", None,
                                  "tables: column holding the time (numbers or ISO dates); rows are sorted by it; "
                                  "null: row order; the default 'time' applies where a file has it (else a column "
                                  "of dates, if there is exactly one)"),
    "data.csv_feature_columns": Field("list[str]?", None, None,
                                      "tables: feature columns; null means all others (they must hold numbers)"),
    "data.attributes": Field("list[str]?", None, None,
                             "tables: per-sequence attribute columns (constant within a sequence) that condition "
                             "the GAN; text, booleans and integers with at most 10 values are categorical, other "
                             "numbers numeric; sines_classes: null means [class]"),
    "data.categorical": Field("list[str]?", None, None,
                              "tables: per-step categorical feature columns (text or integers), generated through "
                              "a Gumbel-softmax; sines_classes: null means [state]"),
    "data.max_categories": Field("int", 50, ">= 2", "most distinct values a categorical column may hold"),
    "data.num_classes": Field("int", 3, ">= 2", "sines_classes: number of classes"),
    "data.missing": Field("str", "error", ("error", "drop", "interpolate"),
                          "missing values (empty cells, NA, NaN): refuse them, drop the sequences (or windows) that "
                          "hold any, or interpolate linearly in time within each sequence"),
    "data.window": Field("int?", None, ">= 2",
                         "file data: cut every sequence into sliding windows of this length (shorter ones stay "
                         "whole); null keeps them whole; needed when the data is one long sequence"),
    "data.window_stride": Field("int", 1, ">= 1", "file data: step between window starts"),
    "data.num_buckets": Field("int", 3, ">= 1", "number of length buckets (quantiles of the lengths)"),
    "data.holdout_fraction": Field("float", 0.1, "[0, 1)", "share of sequences held out as real data for evaluate"),
    "data.holdout_split": Field("str", "random", ("random", "blocks"),
                                "how the held-out share is chosen: random sequences (windows), or blocks: "
                                "data.holdout_blocks contiguous runs spread over the data, training windows that "
                                "share a step with them left out, so no held-out step is a training step"),
    "data.holdout_blocks": Field("int", 5, ">= 1", "with blocks: how many contiguous held-out runs"),
    # generator
    "model.generator.name": Field("str", "sru", GENERATORS, "generator architecture (gan_sru/models/generators.py)"),
    "model.generator.noise_dim": Field("int?", None, ">= 1", "noise features per time step; null: from the data "
                                        "(size rules, gan_sru/sizes.py)"),
    "model.generator.static_noise_dim": Field("int?", None, ">= 0",
                                              "noise features drawn once per sequence and fed at every step; "
                                              "null: from the data (size rules)"),
    "model.generator.output_noise_dim": Field("int?", 0, ">= 0",
                                              "noise features per time step that bypass the SRU: mixed linearly "
                                              "into every output feature before the output activation, scaled "
                                              "per step and feature by softplus(affine(h)) (innovations of each "
                                              "feature's own); they travel as the last channels of the step "
                                              "noise; 0: off; null: one per feature (size rules)"),
    "model.generator.time_feature": Field("bool", True, None, "feed t / (longest length - 1) at every step"),
    "model.generator.highway_bias": Field("float", 0.0, None,
                                          "initial reset-gate bias; > 0 starts the output on the smoothed "
                                          "state instead of the skip path"),
    "model.generator.hidden_size": Field("int?", None, ">= 1", "SRU hidden size; null: from the data (size rules)"),
    "model.generator.num_layers": Field("int?", None, ">= 1", "stacked SRU layers; null: from the data (size rules)"),
    "model.generator.bidirectional": Field("bool", False, None, "bidirectional SRU layers"),
    "model.generator.weight_c": Field("bool", False, None, "2018 SRU form: v * c[t-1] in both gates"),
    "model.generator.activation": Field("str", "tanh", ("tanh", "identity"),
                                        "the SRU's g in h = r * g(c) + (1 - r) * x; identity: the cell state "
                                        "unsquashed (a gated average of the inputs, bounded by them)"),
    "model.generator.layer_norm": Field("bool", False, None, "layer normalisation of each layer's input"),
    "model.generator.dropout": Field("float", 0.0, "[0, 1)", "dropout between SRU layers"),
    "model.generator.oscillators": Field("bool", False, None,
                                         "also feed sin, cos of pi (j + 1) t / (longest length) + phase_j, "
                                         "j < static_noise_dim, at every step, the phases from the per-sequence "
                                         "noise; in conditional runs scaled by gains learned per attribute value "
                                         "(gan_sru/conditioning.py)"),
    "model.generator.oscillator_tuning": Field("bool", False, None,
                                               "with oscillators: each sequence's frequencies are the bank's "
                                               "times exp(tanh(u)), u a learned linear map of G's per-sequence "
                                               "input (noise, attributes), so periods can vary between sequences"),
    "model.generator.oscillator_grid": Field("str", "auto", ("auto", "linear", "log"),
                                             "with oscillators: the bank's frequencies, linear pi (j + 1) / "
                                             "(longest length), or log-spaced from a period of twice the longest "
                                             "length to one of 3.3 steps (short periods within reach in long "
                                             "windows); auto: linear while its shortest period, 2 x longest "
                                             "length / static_noise_dim, is at most 4 steps, else log "
                                             "(resolved with the size rules)"),
    "model.generator.initial_state": Field("bool", False, None,
                                           "the SRU layers' initial cell states are a learned linear map of the "
                                           "per-sequence noise (and attributes), starting at 0, instead of "
                                           "zeros: samples start mid-stream, as windows cut from a long "
                                           "series do"),
    "model.generator.output_activation": Field("str", "sigmoid", OUTPUT_ACTIVATIONS,
                                               "activation of the output features (data is scaled to [0, 1]); "
                                               "sigmoid_margin: a sigmoid stretched to (-0.25, 1.25), the data's "
                                               "range on its straighter part (gan_sru/ops/activations.py)"),
    # discriminator
    "model.discriminator.name": Field("str", "sru_bi", DISCRIMINATORS,
                                      "bidirectional SRU or 1-D convolutions over time (gan_sru.models)"),
    "model.discriminator.hidden_size": Field("int?", None, ">= 1", "sru_bi: hidden size per direction; null: from "
                                             "the data (size rules)"),
    "model.discriminator.pooled_stats": Field("bool", False, None,
                                              "sru_bi: the head also reads each sequence's per-feature mean, std, "
                                              "mean |step| and feature correlations (on in configs/lorenz96.yaml)"),
    "model.discriminator.step_features": Field("bool", False, None,
                                               "sru_bi: a per-step layer leaky_relu(W [x_t, x_t - x_t-1]) before "
                                               "the SRU, so that D scores roughness and local shape (on in "
                                               "configs/lorenz96.yaml: its samples turn smooth)"),
    "model.discriminator.step_window": Field("int", 2, ">= 2",
                                             "with step_features: the layer reads x_t and the window - 1 "
                                             "differences x_t - x_t-1, ..., x_t-window+2 - x_t-window+1, so D "
                                             "sees the joint shape of window steps (6 on the wide set: one seed "
                                             "better, one worse; 3 in configs/lorenz96.yaml)"),
    "model.discriminator.minibatch_std": Field("int", 0, ">= 0",
                                               "> 1: the head also reads the standard deviation of each pooled "
                                               "feature over groups of this many sequences of the batch (ProGAN's "
                                               "minibatch standard deviation), so D sees a batch's diversity; "
                                               "0 or 1: off"),
    "model.discriminator.projection": Field("bool", False, None,
                                            "runs with data.attributes: projection discriminator, logit + <V a, "
                                            "D's last hidden layer>, instead of a joined to every step"),
    "model.discriminator.spectral": Field("bool", False, None,
                                          "with projection: also a head on each feature's magnitude spectrum "
                                          "(24 frequencies pi f / 24) with its own attribute projection "
                                          "(gan_sru/conditioning.py); no effect without projection"),
    "model.discriminator.num_layers": Field("int", 1, ">= 1", "stacked layers"),
    "model.discriminator.identity_skip": Field("bool", False, None,
                                               "sru_bi: layers after the first take their skip input from their "
                                               "input, each direction its own half, as the official SRU does, "
                                               "instead of from a fourth projection (3/4 of their weight and "
                                               "product; false keeps earlier checkpoints loadable)"),
    "model.discriminator.channels": Field("int", 64, ">= 1", "conv1d: channels per layer"),
    "model.discriminator.kernel_size": Field("int", 5, ">= 1", "conv1d: kernel size over time"),
    # training
    "train.steps": Field("int", 2000, ">= 1", "generator updates"),
    "train.budget": Field("str?", None, _DURATION, "wall-time budget such as 90s, 15m, 1h or 1h30m; training stops "
                          "when it is spent; null: train.steps"),
    "train.terms": Field("list[dict]?", None, None, "the generator's extra loss terms, each a mapping {name, weight, "
                         "term options}; null: from the recipe"),
    "train.batch_size": Field("int", 128, ">= 1", "sequences per batch"),
    "train.loss": Field("str", "non_saturating", LOSSES, "GAN loss"),
    "train.strategy": Field("str", "detached", STRATEGIES,
                            "how the fake batch is shared by the D and G steps"),
    "train.n_critic": Field("int", 1, ">= 1", "discriminator updates per generator update"),
    "train.g_lr": Field("float", 0.001, "> 0", "generator Adam learning rate"),
    "train.d_lr": Field("float", 0.001, "> 0", "discriminator Adam learning rate"),
    "train.lr_schedule": Field("str", "constant", ("constant", "linear", "cosine"),
                               "both learning rates: constant, or decayed from train.lr_decay_start x train.steps "
                               "to train.lr_end_factor x the rate at train.steps (linearly or on a half cosine)"),
    "train.lr_decay_start": Field("float", 0.5, "[0, 1]",
                                  "fraction of train.steps after which the learning-rate decay begins"),
    "train.lr_end_factor": Field("float", 0.1, "[0, 1]",
                                 "the learning rates at train.steps, as a fraction of g_lr and d_lr"),
    "train.beta1": Field("float", 0.5, "[0, 1)", "Adam beta1"),
    "train.beta2": Field("float", 0.999, "[0, 1)", "Adam beta2"),
    "train.g_ema": Field("float", 0.995, "[0, 1)",
                         "decay of a moving average of G's weights, used for sampling (0: off); it smooths out "
                         "the step-to-step oscillation of GAN training"),
    "train.g_ema_rampup": Field("float?", None, "> 0",
                                "cap the weight average's half-life at this fraction of the updates so far, so "
                                "that it forgets the initial weights (stylegan2-ada's ema_rampup); null: off"),
    "train.moment_loss": Field("float", 0.0, ">= 0",
                               "weight of G's moment-matching term (per-feature mean and std, lag-0 feature "
                               "correlations of the batch; train/losses.py); 0: off"),
    "train.marginal_loss": Field("float", 0.0, ">= 0",
                                 "weight of G's term on each feature's distribution of values over the batch (the "
                                 "Wasserstein-1 distance of the sorted generated and real values, per real std; "
                                 "train/losses.py): the tails and the shape the moments leave out; 0: off"),
    "train.class_moment_loss": Field("float", 0.0, ">= 0",
                                     "runs with a categorical attribute: weight of the moment loss computed "
                                     "within each of the first categorical attribute's classes and averaged "
                                     "(train/losses.py); 0: off"),
    "train.innovation_loss": Field("float", 0.0, ">= 0",
                                   "weight of G's step-change term (per-feature std and the C x C correlations of "
                                   "x_t - x_t-1 over the batch; train/losses.py); 0: off"),
    "train.sequence_moment_loss": Field("float", 0.0, ">= 0",
                                        "weight of G's term on each sequence's own statistics (the mean and the "
                                        "spread over the batch of a sequence's per-feature mean, std, lag-1 "
                                        "autocorrelation and log magnitude spectrum and its C x C correlations; "
                                        "train/losses.py); 0: off"),
    "train.sequence_whitened_loss": Field("float", 0.0, ">= 0",
                                          "weight of G's term on each sequence's per-feature mean, std, lag-1 "
                                          "autocorrelation, spectrum in bands, skewness, kurtosis, C x C "
                                          "correlations and its mean, std and lag-1 autocorrelation along "
                                          "the data's minor directions, compared in the principal axes of the "
                                          "real sequences' statistics (gan_sru/ops/whitened.py): the "
                                          "combinations along which real sequences barely vary count as much "
                                          "as the rest; 0: off"),
    "train.sequence_whitened_rescale": Field("bool", False, None,
                                             "with sequence_whitened_loss: scale each principal axis to the "
                                             "real statistics' spread along it on the reference's other half "
                                             "(the half that finds the axes underestimates the least varying "
                                             "ones when sequences are few for the statistics' number, e.g. "
                                             "long windows; gan_sru/ops/whitened.py)"),
    "train.sequence_moment_tails": Field("bool", False, None,
                                         "with sequence_moment_loss: also each sequence's per-feature skewness "
                                         "and kurtosis (its extremes)"),
    "train.sequence_moment_lags": Field("int", 1, ">= 1",
                                        "with sequence_moment_loss: compare each sequence's per-feature "
                                        "autocorrelation at lags 1 .. N (at most L - 2); 1: the lag-1 one alone"),
    "train.window_covariance_loss": Field("float", 0.0, ">= 0",
                                          "weight of G's term on the joint covariance of window_covariance_lags + 1 "
                                          "consecutive steps over the batch, in the real windows' whitened axes "
                                          "(|E[u u^T] - I|^2 / D, unbiased from two halves of the batch; "
                                          "gan_sru/ops/covariance.py): the combinations of correlated features "
                                          "along which the data barely varies count as much as the rest (off in "
                                          "every config: on the wide set it did not improve the scores); 0: off"),
    "train.window_covariance_lags": Field("int", 1, ">= 0",
                                          "with window_covariance_loss: the lags in a window (0: each step's "
                                          "features alone; 1: (x_t, x_t-1))"),
    "train.predictor_loss": Field("float", 0.0, ">= 0",
                                  "weight of G's term on the samples' next-step regression: the data's least-"
                                  "squares regression of x_t+1 on (x_t, ..., x_t-predictor_lags) leaves residuals "
                                  "uncorrelated with the window, and the term asks the samples' residuals under it "
                                  "to be so too (|E[u r^T]| / sqrt(C) in the windows' whitened axes and the "
                                  "residuals' stds: its square is to first order the relative excess squared error "
                                  "a regression trained on the samples has on the data; gan_sru/ops/predictor.py; "
                                  "on in configs/wide.yaml, long64.yaml and long128.yaml: it narrowed the predictive "
                                  "gap on four wide seeds of six at the budget, five long64 seeds of five and "
                                  "long128's one, lowered the classifier's score on most of them and raised "
                                  "Context-FID on most); "
                                  "0: off"),
    "train.predictor_lags": Field("int", 5, ">= 0",
                                  "with predictor_loss: the past steps the regression reads besides the current "
                                  "one (a bucket of at most predictor_lags + 1 steps goes without the term)"),
    "train.step_profile_loss": Field("float", 0.0, ">= 0",
                                     "weight of G's term on the window's step profile: at each position, the "
                                     "samples' mean and mean square along the data's whitened feature axes are the "
                                     "data's at that position (the moment terms pool the steps; G's samples can "
                                     "drift along the window where the data do not; gan_sru/ops/step_profile.py; on "
                                     "in configs/wide.yaml: at 4800 steps it narrowed the predictive gap and lowered "
                                     "the classifier's score on the seeds measured); 0: off"),
    "train.window_covariance_whitening": Field("str", "window", ("window", "step"),
                                               "with window_covariance_loss: whiten each window by the windows' "
                                               "own covariance (window: |E[u u^T] - I|), or each step by the "
                                               "data's steps' principal axes, compared with the real windows' "
                                               "E[u u^T] (step: each feature's own noise and its lagged "
                                               "correlations weigh as much as the shared structure, the smooth "
                                               "factors' step-to-step differences do not; on the wide set at 0.1 "
                                               "it held G back)"),
    "train.r1_gamma": Field("float", 0.0, ">= 0",
                            "weight of D's gradient penalty on real sequences (R1, Mescheder et al. 2018): "
                            "gamma / 2 x E|grad_x D(x)|^2, estimated by finite differences along a random "
                            "direction, ((D(x + eps u) - D(x)) / eps)^2 with u standard normal per step and "
                            "feature (the SRU function has no double backward; train/losses.py); 0: off"),
    "train.r1_epsilon": Field("float", 0.01, "> 0",
                              "with r1_gamma: the finite-difference step eps, in the data's [0, 1] scale"),
    "train.r1_every": Field("int", 1, ">= 1", "lazy R1 (Karras et al. 2020): the penalty enters D's loss at every "
                            "k-th D update only, weighted k x train.r1_gamma; the other updates skip its "
                            "perturbed pass"),
    "train.r1_stride": Field("int", 1, ">= 1", "with r1_gamma: the penalty on every k-th real sequence of the batch "
                             "(sequences 0, k, 2k, ...), so its perturbed pass of D costs 1/k of a full one; an "
                             "estimate of the same mean from B/k sequences. Each process's share of the batch "
                             "must be a multiple of k"),
    "train.grad_clip": Field("float?", None, "> 0", "clip gradients to this global norm; null: no clipping"),
    "train.weight_clip": Field("float", 0.01, "> 0", "wasserstein only: clip D weights to [-c, c]"),
    "train.gumbel_tau_start": Field("float", 1.0, "> 0",
                                    "categorical features: Gumbel-softmax temperature at step 0"),
    "train.gumbel_tau_end": Field("float", 0.3, "> 0",
                                  "categorical features: temperature at train.steps (exponential decay between)"),
    "train.attribute_loss_weight": Field("float", 1.0, ">= 0",
                                         "runs with data.attributes: weight of the auxiliary attribute classifier's "
                                         "loss (AC-GAN) in the D and G losses; 0: off"),
    "train.select": Field("str", "none", ("none", "discriminative"),
                          "checkpoint selection: score G's moving average at every checkpoint with TimeGAN's "
                          "post-hoc classifier (paper protocol) against the training split and keep the best "
                          "checkpoint, which generate, evaluate, export and the API then read "
                          "(gan_sru/train/selection.py); none: the newest checkpoint is the result"),
    "train.select_num": Field("int", 1000, ">= 4", "checkpoint selection: generated and training sequences "
                              "compared at each checkpoint (at most the training split's size)"),
    "train.select_remeasure": Field("bool", True, None,
                                    "checkpoint selection: a checkpoint whose score would make it the best is "
                                    "scored again on other sequences with other classifier seeds and keeps the "
                                    "mean of both, so that one lucky measurement does not choose the result"),
    "train.checkpoint_every": Field("int", 250, ">= 1", "steps between checkpoints"),
    "train.sample_every": Field("int", 250, ">= 1", "steps between sample pictures"),
    "train.log_every": Field("int", 25, ">= 1", "steps between log lines"),
    "train.keep_checkpoints": Field("int", 3, ">= 1",
                                    "newest checkpoints kept on disk (and the selected one, with train.select)"),
}
