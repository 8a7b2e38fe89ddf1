"""Keys of earlier versions in a config (gan_sru/config/retired.py): the kept terms' weight keys become
train.terms entries; removed options are dropped at their inert value and refused, naming the key, at another
(or dropped, for a run folder read to sample from)."""
import re

import pytest

from gan_sru import ConfigError
from gan_sru.config import load_config, retired
from gan_sru.train.terms import term_list


def nested(key, value, extra=""):
    """YAML text setting a dotted key (with `extra` lines in its innermost section)."""
    *sections, leaf = key.split(".")
    text = "".join(f"{'  ' * i}{name}:\n" for i, name in enumerate(sections))
    pad = "  " * len(sections)
    return text + f"{pad}{leaf}: {value}\n" + "".join(f"{pad}{line}\n" for line in extra.splitlines())


def removed_message(page, why=None):
    """The refusal's text for an option removed with the results page docs/results/`page` (and the reason `why`,
    where not the usual one), as a pattern."""
    why = why or "it did not improve the scores on real data"
    return rf"this option was removed: {re.escape(why)} \(docs/results/{re.escape(page)}\)"


REMOVED_MESSAGE = removed_message("2026-11-28-recipe.md") + "; remove the key"


def write(tmp_path, text):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    return path


def test_old_term_keys_become_train_terms_entries_with_their_options(tmp_path):
    cfg = load_config(write(tmp_path, "train:\n  moment_loss: 1.0\n  innovation_loss: 0.0\n"
                                      "  sequence_moment_loss: 0.5\n  sequence_moment_tails: false\n"
                                      "  sequence_moment_lags: 1\n  class_moment_loss: 2\n  steps: 7\n"))
    assert cfg.train.terms == [{"name": "moment", "weight": 1.0},
                               {"name": "sequence_moment", "weight": 0.5},
                               {"name": "class_moment", "weight": 2}]
    assert cfg.train.steps == 7 and not hasattr(cfg.train, "moment_loss")
    # every weight 0: the config chose no terms (an empty list, not null)
    assert load_config(write(tmp_path, "train:\n  moment_loss: 0.0\n")).train.terms == []
    assert load_config(None).train.terms is None


def test_the_removed_tails_option_is_dropped_off_and_refused_on_naming_its_page(tmp_path):
    """sequence_moment's tails (skewness and kurtosis), removed: false, as every run folder since the terms list
    records it, reads as without it; true is refused for training, as an old key or a train.terms option, and
    dropped to sample (the terms shape training only)."""
    message = removed_message("2026-12-03-tails.md")
    old = write(tmp_path, "train:\n  sequence_moment_loss: 1.0\n  sequence_moment_tails: true\n")
    with pytest.raises(ConfigError, match=rf"cfg.yaml: train.sequence_moment_tails: True: {message}; remove the "
                                          r"option"):
        load_config(old)
    assert load_config(old, removed="drop").train.terms == [{"name": "sequence_moment", "weight": 1.0}]
    listed = "train:\n  terms: [{name: moment, weight: 1.0}, {name: sequence_moment, weight: 1.0, tails: %s}]\n"
    with pytest.raises(ConfigError, match=rf"train.terms entry 1 \(sequence_moment\) option tails: True: {message}"):
        load_config(write(tmp_path, listed % "true"))
    with pytest.raises(ConfigError, match=rf"^--set 'train.terms=.*': train.terms entry 0 \(sequence_moment\) option "
                                          rf"tails: 1: {message}; remove the option$"):
        load_config(None, ["train.terms=[{name: sequence_moment, weight: 1.0, tails: 1}]"])
    cfg = load_config(write(tmp_path, listed % "false"))
    assert cfg.train.terms == [{"name": "moment", "weight": 1.0}, {"name": "sequence_moment", "weight": 1.0}]
    assert [t.opts for t in term_list(cfg.train)] == [{}, {}]
    assert load_config(write(tmp_path, listed % "true"), removed="drop") == cfg


def test_the_removed_lags_option_is_dropped_at_1_and_refused_above_naming_its_page(tmp_path):
    """sequence_moment's lags (autocorrelations at lags 2 .. lags), removed: 1, as every run folder since the
    terms list records it, reads as without it; another value is refused for training, as an old key or a
    train.terms option, and dropped to sample."""
    message = removed_message("2026-12-06-lags-shift-length.md")
    old = write(tmp_path, "train:\n  sequence_moment_loss: 1.0\n  sequence_moment_lags: 8\n")
    with pytest.raises(ConfigError, match=rf"cfg.yaml: train.sequence_moment_lags: 8: {message}; remove the option"):
        load_config(old)
    assert load_config(old, removed="drop").train.terms == [{"name": "sequence_moment", "weight": 1.0}]
    with pytest.raises(ConfigError, match=rf"^--set 'train.terms=.*': train.terms entry 0 \(sequence_moment\) option "
                                          rf"lags: 4: {message}; remove the option$"):
        load_config(None, ["train.terms=[{name: sequence_moment, weight: 1.0, lags: 4}]"])
    cfg = load_config(None, ["train.terms=[{name: sequence_moment, weight: 1.0, lags: 1}]"])
    assert cfg.train.terms == [{"name": "sequence_moment", "weight": 1.0}]
    assert [t.opts for t in term_list(cfg.train)] == [{}]


def test_set_of_an_old_term_key_works():
    cfg = load_config(None, ["train.moment_loss=1", "train.sequence_moment_loss=0.25"])
    assert cfg.train.terms == [{"name": "moment", "weight": 1}, {"name": "sequence_moment", "weight": 0.25}]
    assert [t.name for t in term_list(cfg.train)] == ["moment", "sequence_moment"]


@pytest.mark.parametrize("key", sorted(retired.REMOVED))
def test_a_removed_key_at_its_inert_value_is_dropped(tmp_path, key):
    value = retired.REMOVED[key]
    text = value if isinstance(value, str) else "null" if value is None else str(value).lower()  # as YAML writes it
    from_file = load_config(write(tmp_path, nested(key, text)))
    assert from_file == load_config(None, [f"{key}={text}"]) == load_config(None)


@pytest.mark.parametrize("key, value", [("train.r1_gamma", "1.0"), ("train.r1_stride", "4"),
                                        ("train.predictor_loss", "0.5"), ("train.marginal_loss", "1"),
                                        ("train.window_covariance_whitening", "step"),
                                        ("train.sequence_whitened_rescale", "true"),
                                        ("model.discriminator.pooled_stats", "true"),
                                        ("model.discriminator.minibatch_std", "4")])
def test_a_removed_key_at_another_value_is_refused_naming_it(tmp_path, key, value):
    text = (nested(key, value, "moment_loss: 1.0") if key.startswith("train.") else
            nested(key, value) + "train:\n  moment_loss: 1.0\n")
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"cfg.yaml: {key}: .*: {REMOVED_MESSAGE}"):
        load_config(path)
    with pytest.raises(ConfigError, match=rf"--set '{key}={value}': {key}: .*: {REMOVED_MESSAGE}"):
        load_config(None, [f"{key}={value}"])
    cfg = load_config(path, removed="drop")  # a run folder read to sample from: the option does not matter there
    assert cfg.train.terms == [{"name": "moment", "weight": 1.0}]


@pytest.mark.parametrize("key, value", [("train.lr_schedule", "cosine"), ("train.lr_end_factor", "0.05")])
def test_the_removed_learning_rate_schedule_names_its_own_results_page(tmp_path, key, value):
    message = removed_message("2026-11-29-settling.md") + "; remove the key"
    with pytest.raises(ConfigError, match=rf"cfg.yaml: {key}: .*: {message}"):
        load_config(write(tmp_path, nested(key, value)))
    assert "lr_schedule" not in load_config(None).train  # the key is gone, not off


def test_the_removed_output_noise_names_its_own_results_page(tmp_path):
    message = removed_message("2026-11-29-output-noise.md") + "; remove the key"
    with pytest.raises(ConfigError, match=rf"cfg.yaml: model.generator.output_noise_dim: None: {message}"):
        load_config(write(tmp_path, nested("model.generator.output_noise_dim", "null")))
    assert "output_noise_dim" not in load_config(None).model.generator


def test_the_removed_layer_norm_names_its_own_results_page(tmp_path):
    message = removed_message("2026-11-29-score-noise.md") + "; remove the key"
    with pytest.raises(ConfigError, match=rf"cfg.yaml: model.generator.layer_norm: True: {message}"):
        load_config(write(tmp_path, nested("model.generator.layer_norm", "true")))
    inert = load_config(write(tmp_path, nested("model.generator.layer_norm", "false")))
    assert "layer_norm" not in inert.model.generator


@pytest.mark.parametrize("key, value, inert, page", [
    ("model.generator.weight_c", "true", "false", "2026-11-30-generator-options.md"),
    ("model.generator.activation", "identity", "tanh", "2026-11-30-generator-options.md"),
    ("model.generator.output_activation", "sigmoid_margin", "sigmoid", "2026-12-01-generator-output.md"),
    ("model.generator.time_feature", "false", "true", "2026-12-01-generator-output.md"),
    ("train.n_critic", "2", "1", "2026-12-01-generator-output.md"),
    ("train.beta1", "0.0", "0.5", "2026-11-29-optimizer.md"),
    ("model.discriminator.identity_skip", "true", "false", "2026-11-29-capacity.md"),
    ("train.g_ema_rampup", "0.2", "null", "2026-11-28-conditional.md")])
def test_a_removed_option_names_its_own_results_page(tmp_path, key, value, inert, page):
    message = removed_message(page, retired.REASONS.get(key)) + "; remove the key"
    with pytest.raises(ConfigError, match=rf"cfg.yaml: {key}: .*: {message}"):
        load_config(write(tmp_path, nested(key, value)))
    assert load_config(write(tmp_path, nested(key, inert))) == load_config(None)


@pytest.mark.parametrize("text, lr", [("  g_lr: 0.002\n  d_lr: 2.0e-3\n", 0.002), ("  d_lr: 0.001\n", 0.001),
                                      ("  g_lr: 1\n  d_lr: 1\n", 1.0)])
def test_equal_g_lr_and_d_lr_become_train_lr(tmp_path, text, lr):
    cfg = load_config(write(tmp_path, "train:\n" + text))
    assert cfg.train.lr == lr and "g_lr" not in cfg.train and "d_lr" not in cfg.train
    assert cfg == load_config(None, [f"train.lr={lr}"])


def test_unequal_bad_or_doubled_learning_rates_are_refused_naming_the_keys(tmp_path):
    page = re.escape("docs/results/2026-11-29-optimizer.md")
    with pytest.raises(ConfigError, match=rf"cfg.yaml: train.g_lr 0.001 and train.d_lr 0.002: unequal learning rates "
                                          rf"were removed: .*\({page}\); set one train.lr for G and D"):
        load_config(write(tmp_path, "train:\n  d_lr: 0.002\n"))
    with pytest.raises(ConfigError, match=r"--set 'train.g_lr=x': train.g_lr: got 'x' \(str\); expected a number "
                                          r"> 0 \(now train.lr, the rate of G and D\)"):
        load_config(None, ["train.g_lr=x"])
    with pytest.raises(ConfigError, match=r"cfg.yaml: train.g_lr: the learning rate of G and D is set by train.lr; "
                                          r"remove train.g_lr"):
        load_config(write(tmp_path, "train:\n  g_lr: 0.002\n  lr: 0.002\n"))
    # a run folder read to sample from: its rates do not affect sampling
    assert load_config(write(tmp_path, "train:\n  d_lr: 0.002\n"), removed="drop") == load_config(None)


@pytest.mark.parametrize("key, value", [("train.weight_clip", "0.05"), ("model.generator.dropout", "0.1")])
def test_the_removed_weight_clip_and_dropout_name_their_own_results_page(tmp_path, key, value):
    message = removed_message("2026-11-29-optimizer.md") + "; remove the key"
    with pytest.raises(ConfigError, match=rf"cfg.yaml: {key}: .*: {message}"):
        load_config(write(tmp_path, nested(key, value)))
    inert = load_config(write(tmp_path, nested("train.weight_clip", "0.01")))
    assert "weight_clip" not in inert.train
    assert load_config(write(tmp_path, nested(key, value)), removed="drop") == load_config(None)


@pytest.mark.parametrize("value", ["non_saturating", "hinge", "wasserstein"])
def test_the_removed_loss_choice_is_refused_to_train_and_ignored_to_sample(tmp_path, value):
    """Every run folder written before records train.loss; the one loss left, least squares, is its inert value."""
    path = write(tmp_path, nested("train.loss", value))
    message = removed_message("2026-11-30-loss.md")
    with pytest.raises(ConfigError, match=rf"cfg.yaml: train.loss: '{value}': {message}; remove the key"):
        load_config(path)
    assert load_config(path, removed="drop") == load_config(None)
    inert = load_config(write(tmp_path, nested("train.loss", "least_squares")))
    assert "loss" not in inert.train


def test_the_removed_conv1d_discriminator_is_refused_to_train_and_ignored_to_sample(tmp_path):
    message = removed_message("2026-11-29-optimizer.md")
    path = write(tmp_path, nested("model.discriminator.name", "conv1d", "kernel_size: 7"))
    with pytest.raises(ConfigError, match=rf"cfg.yaml: model.discriminator.kernel_size: 7: {message}; remove the key"):
        load_config(path)
    path = write(tmp_path, nested("model.discriminator.name", "conv1d"))
    with pytest.raises(ConfigError, match=rf"cfg.yaml: model.discriminator.name: 'conv1d': {message}; use 'sru_bi'"):
        load_config(path)
    assert load_config(path, removed="drop").model.discriminator == load_config(None).model.discriminator


@pytest.mark.parametrize("key, value", [("model.generator.initial_state", "true"),
                                        ("model.generator.highway_bias", "2.0"),
                                        ("model.generator.output_noise_dim", "null"),
                                        ("model.generator.output_noise_dim", "28"),
                                        ("model.generator.layer_norm", "true"),
                                        ("model.generator.weight_c", "true"),
                                        ("model.generator.activation", "identity"),
                                        ("model.generator.output_activation", "identity"),
                                        ("model.generator.time_feature", "false")])
def test_a_removed_generator_option_is_refused_even_to_sample(tmp_path, key, value):
    """It changed what the generator computes: a run trained with it cannot be rebuilt without it."""
    path = write(tmp_path, nested(key, value))
    with pytest.raises(ConfigError, match=rf"cfg.yaml: {key}: .*: this option was removed: .*; remove the key"):
        load_config(path)
    with pytest.raises(ConfigError, match=rf"cfg.yaml: {key}: .*; a run trained with it cannot be sampled by this "
                                          r"version"):
        load_config(path, removed="drop")


def test_old_term_keys_together_with_train_terms_are_refused(tmp_path):
    path = write(tmp_path, "train:\n  terms: [{name: moment, weight: 1.0}]\n  sequence_moment_loss: 1.0\n")
    with pytest.raises(ConfigError, match=r"cfg.yaml: train.sequence_moment_loss: the terms are set by train.terms; "
                                          r"write it as a train.terms entry .* and remove train.sequence_moment_loss"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"--set 'train.moment_loss=2': train.moment_loss: the terms are set by "
                                          r"train.terms"):
        load_config(None, ["train.terms=[{name: moment, weight: 1}]", "train.moment_loss=2"])


def test_a_train_terms_entry_naming_a_removed_term_is_refused():
    cfg = load_config(None, ["train.terms=[{name: predictor, weight: 0.5, lags: 5}]"])
    with pytest.raises(ConfigError, match=r"train.terms entry 0: the 'predictor' generator term was removed: it did "
                                          r"not improve the scores on real data \(docs/results/2026-11-28-recipe.md\)"):
        term_list(cfg.train)
