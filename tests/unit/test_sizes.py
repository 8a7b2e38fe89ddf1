"""The size rules give the documented sizes, fill only null keys, and the resolved numbers reach the run folder."""
import pytest

from gan_sru.config import load_config
from gan_sru.sizes import SIZE_KEYS, apply_size_rules, rule_sizes


@pytest.mark.parametrize("C, L, expected", [
    # C, L -> G hidden, noise, static noise, G layers, D hidden (the table in gan_sru/sizes.py's docstring)
    (1, 24, (48, 2, 8, 2, 48)),
    (5, 24, (48, 5, 8, 2, 48)),
    (28, 24, (112, 28, 14, 2, 96)),
    (28, 128, (112, 28, 14, 3, 96)),
    (100, 256, (256, 64, 32, 3, 192)),
])
def test_rule_sizes_for_a_few_widths_and_lengths(C, L, expected):
    sizes = rule_sizes(C, L)
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
    for key, value in rule_sizes(3, 8).items():
        section, net, name = key.split(".")
        assert saved[section][net][name] == value
        assert trainer.cfg[section][net][name] == value
