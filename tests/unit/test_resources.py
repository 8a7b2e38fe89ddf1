"""The early resource check: estimates from the config and the data's shape against the networks that
training builds, a refusal before anything is allocated, and the limit a user can raise."""
import os
import re
import subprocess
import sys
import time

import pytest

from gan_sru import ConfigError
from gan_sru.config import load_config
from gan_sru.data import BucketSpec, load_dataset
from gan_sru.resources import check_resources, estimate
from gan_sru.train import GanSteps

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=32", "data.seq_len=8", "train.batch_size=8"]


def built_params(cfg):
    ds = load_dataset(cfg.data, cfg.seed)
    train, _ = ds.split(cfg.data.holdout_fraction, cfg.seed)
    steps = GanSteps(cfg, train, BucketSpec.from_lengths(ds.lengths, cfg.data.num_buckets))
    count = lambda ps: sum(p.size for p in ps.values())  # noqa: E731
    return count(steps.g_params), count(steps.d_params), train.num_features, int(ds.lengths.max())


@pytest.mark.parametrize("extra", [[], ["model.generator.hidden_size=64", "model.generator.num_layers=3",
                                        "model.discriminator.hidden_size=32"]], ids=["rules", "set"])
def test_the_estimate_bounds_the_parameters_training_builds(extra):
    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"), TINY + extra)
    g, d, C, L = built_params(cfg)
    e = estimate(cfg, C, L)
    assert g <= e.generator_params <= 2 * g and d <= e.discriminator_params <= 2 * d, (g, d, e)
    assert e.memory_bytes >= 4 * 4 * (g + d)  # weights, gradients and Adam's two moments at least


def test_a_huge_hidden_size_is_refused_with_the_estimate_and_the_limit_which_a_user_can_raise():
    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"), ["model.generator.hidden_size=100000"])
    with pytest.raises(ConfigError, match=r"this run would need about [0-9.]+ GiB of memory \([0-9,]+ generator "
                                          r"and [0-9,]+ discriminator parameters.*above train\.max_memory_bytes "
                                          r"17,179,869,184 \(16 GiB\).*--set train\.max_memory_bytes=\d+"):
        check_resources(cfg, 5, 24)
    need = estimate(cfg, 5, 24).memory_bytes
    cfg.train.max_memory_bytes = need
    assert check_resources(cfg, 5, 24).memory_bytes == need


def test_train_refuses_it_at_once_and_writes_nothing(tmp_path):
    t0 = time.time()
    p = subprocess.run([sys.executable, os.path.join(REPO, "train.py"), "--config",
                        os.path.join(REPO, "configs", "sines.yaml"), "--no-progress", "--set",
                        f"run_dir={tmp_path}", "--set", "model.generator.hidden_size=100000"],
                       capture_output=True, text=True, timeout=120, cwd=REPO)
    assert p.returncode == 2 and time.time() - t0 < 60, (p.returncode, p.stderr)
    assert re.search(r"this run would need about [0-9.]+ GiB of memory", p.stderr) and "Traceback" not in p.stderr
    assert "MemoryError" not in p.stderr and os.listdir(tmp_path) == []
