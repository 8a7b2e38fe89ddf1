"""benchmarks/term_cost.py: each step graph gets the references its config's terms need, and runs."""
import os
import sys

import nnabla as nn
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import term_cost  # noqa: E402

from gan_sru.config import load_config  # noqa: E402
from gan_sru.sizes import apply_size_rules  # noqa: E402

TINY = ["train.batch_size=8", "model.generator.hidden_size=8", "model.discriminator.hidden_size=8",
        "train.predictor_lags=1"]


def test_each_terms_reference_reaches_the_step_graph_and_the_step_runs():
    rng = np.random.default_rng(0)
    x = rng.random((64, 10, 5))
    m = np.ones((64, 10))
    path = os.path.join(REPO, "configs", "sines.yaml")
    base = load_config(path, TINY)
    assert term_cost.references(base, x, m) == {}
    cfg = apply_size_rules(load_config(path, TINY + ["train.predictor_loss=1", "train.window_covariance_loss=1",
                                                     "train.step_profile_loss=1"]), 5, 10)
    refs = term_cost.references(cfg, x, m)
    assert sorted(refs) == ["predictor", "profile", "windows"] and refs["predictor"].weights.shape == (10, 5)
    assert refs["profile"].first.shape == (10, 5)
    nn.clear_parameters()
    run = term_cost.step_run(cfg, x, m, rng)
    run()
    params = nn.get_parameters(grad_only=False)
    assert params and all(np.isfinite(p.g).all() for p in params.values())
    assert any(np.abs(p.g).max() > 0 for k, p in params.items() if k.startswith("G/"))
    nn.clear_parameters()
