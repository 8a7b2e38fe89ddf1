"""The run folder's records (train/records.py): what a resumed run may change, and the files written."""
import io
import os
import re

import pytest

from gan_sru import ConfigError
from gan_sru.config import assign, load_config
from gan_sru.train import Trainer
from gan_sru.train.records import changed_keys
from gan_sru.train.run_folder import RunFolder


def tiny(tmp_path, *extra):
    return load_config(None, overrides=[f"run_dir={tmp_path}", "name=r", "data.num_sequences=16", "data.seq_len=6",
                                        "data.num_features=2", "train.batch_size=8", "train.select=none",
                                        "train.steps=2", "train.checkpoint_every=2", "train.sample_every=1000",
                                        *extra])


def changed(cfg, **values):
    cfg = cfg.model_copy(deep=True)
    for key, value in values.items():
        assign(cfg, key, value)
    return cfg


def test_a_resume_may_change_train_keys_and_nothing_else(tmp_path):
    Trainer(tiny(tmp_path), progress=False, out=io.StringIO()).train()
    run = RunFolder(os.path.join(tmp_path, "r"))
    assert {"config.yaml", "data_summary.json", "sampling.json"} <= set(os.listdir(run.path))
    saved = load_config(run.config_path)
    assert changed_keys(run, saved) == []
    assert changed_keys(run, changed(saved, **{"train.steps": 9, "train.lr": 0.01})) == []  # train.* may
    more = Trainer(tiny(tmp_path, "train.steps=4"), resume=True, progress=False, out=io.StringIO())
    more.train()
    assert more.run.latest_checkpoint()[0] == 4

    assert changed_keys(run, changed(saved, **{"seed": 7, "data.seq_len": 5})) == ["data.seq_len", "seed"]
    other = tiny(tmp_path, "train.steps=6", "seed=7", "data.seq_len=5")
    with pytest.raises(ConfigError, match=re.escape("with a different config: data.seq_len, seed differ")):
        Trainer(other, resume=True, progress=False, out=io.StringIO()).train()
    assert load_config(run.config_path).seed == saved.seed  # the refused resume left config.yaml as it was
    assert changed_keys(RunFolder(os.path.join(tmp_path, "none")), other) == []  # no config.yaml: nothing to keep
