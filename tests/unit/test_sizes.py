"""The size rules give the documented sizes, fill only null keys, and the resolved numbers reach the run folder."""
import pytest

from gan_sru.config import load_config
from gan_sru.sizes import SIZE_KEYS, apply_size_rules, rule_sizes


@pytest.mark.parametrize("C, L, expected", [
    # C, L -> G hidden, noise, static noise, G layers, D hidden (the table in gan_sru/sizes.py's docstring)
    (1, 24, (48, 2, 8, 2, 48)),
    (5, 24, (48, 5, 8, 2, 48)),
    (28, 24, (112, 28, 14, 2, 96)),
    (28, 128, (112, 28, 14, 2, 96)),
    (100, 256, (256, 64, 32, 2, 192)),
])
def test_rule_sizes_for_a_few_widths_and_lengths(C, L, expected):
    sizes = rule_sizes(C)
    assert tuple(sizes[k] for k in SIZE_KEYS) == expected


def test_only_null_keys_are_filled_and_the_input_is_left_alone():
    cfg = load_config(None, overrides=["model.generator.hidden_size=40"])
    assert cfg["model"]["generator"]["noise_dim"] is None  # the default: follow the data
    out = apply_size_rules(cfg, 28, 24)
    assert out["model"]["generator"]["hidden_size"] == 40
    assert out["model"]["generator"]["noise_dim"] == 28
    assert out["model"]["discriminator"]["hidden_size"] == 96
    assert cfg["model"]["generator"]["noise_dim"] is None


def test_trainer_records_the_resolved_sizes(tmp_path):
    from gan_sru.train import Trainer

    cfg = load_config(None, overrides=[f"run_dir={tmp_path}", "name=r", "data.num_sequences=64",
                                       "data.seq_len=8", "data.num_features=3", "train.steps=1",
                                       "train.batch_size=16"])
    trainer = Trainer(cfg, progress=False)
    trainer.prepare()
    saved = load_config(trainer.run.config_path)
    assert saved["model"]["generator"]["oscillator_grid"] == "linear"  # auto, resolved: 2 x 8 / 8 = 2 steps
    for key, value in rule_sizes(3).items():
        section, net, name = key.split(".")
        assert saved[section][net][name] == value
        assert trainer.cfg[section][net][name] == value


@pytest.mark.parametrize("S, L, grid", [
    (14, 24, "linear"),  # the wide set: shortest linear period 3.4 steps
    (14, 28, "linear"),  # 4.0: the edge
    (14, 29, "log"),
    (14, 64, "log"),     # long64: 9.1 steps, a 6-step season out of reach
    (8, 24, "log"),
    (32, 64, "linear"),
    (0, 24, "log"),      # no bank: any answer is unused, but no division by zero
])
def test_auto_oscillator_grid_follows_the_length(S, L, grid):
    from gan_sru.sizes import rule_oscillator_grid

    assert rule_oscillator_grid(S, L) == grid


def test_auto_oscillator_grid_is_resolved_and_an_explicit_one_kept():
    cfg = load_config(None)
    assert cfg["model"]["generator"]["oscillator_grid"] == "auto"
    assert apply_size_rules(cfg, 28, 24)["model"]["generator"]["oscillator_grid"] == "linear"
    assert apply_size_rules(cfg, 28, 64)["model"]["generator"]["oscillator_grid"] == "log"
    kept = load_config(None, overrides=["model.generator.oscillator_grid=linear"])
    assert apply_size_rules(kept, 28, 256)["model"]["generator"]["oscillator_grid"] == "linear"
    small = load_config(None, overrides=["model.generator.static_noise_dim=32"])  # 2 x 64 / 32 = 4 steps
    assert apply_size_rules(small, 28, 64)["model"]["generator"]["oscillator_grid"] == "linear"


def test_an_unresolved_grid_is_refused_by_name():
    from gan_sru.conditional.networks import oscillator_grid

    with pytest.raises(ValueError, match="'auto' is resolved from the data first"):
        oscillator_grid(14, 64, "auto")
