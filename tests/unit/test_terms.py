"""The generator terms as one interface (gan_sru/train/terms/): train.terms and the older *_loss keys build the
same G loss; the translation of old keys; refusals of unknown names and options."""
import nnabla as nn
import pytest

from gan_sru import ConfigError
from gan_sru.config import load_config
from gan_sru.train.terms import TERMS, term_list, terms_from_old_keys

BASE = ["data.num_sequences=32", "data.seq_len=12", "data.num_features=2", "data.num_buckets=1",
        "train.batch_size=16", "train.select=none"]
# term -> (old keys, train.terms entry): the same term written both ways, options included
CASES = {
    "moment": (["train.moment_loss=0.7"], {"name": "moment", "weight": 0.7}),
    "innovation": (["train.innovation_loss=0.5"], {"name": "innovation", "weight": 0.5}),
    "marginal": (["train.marginal_loss=2.0"], {"name": "marginal", "weight": 2.0}),
    "sequence_moment": (["train.sequence_moment_loss=1.0", "train.sequence_moment_lags=2"],
                        {"name": "sequence_moment", "weight": 1.0, "lags": 2}),
    "sequence_whitened": (["train.sequence_whitened_loss=0.3"], {"name": "sequence_whitened", "weight": 0.3}),
    "window_covariance": (["train.window_covariance_loss=1.5", "train.window_covariance_lags=2"],
                          {"name": "window_covariance", "weight": 1.5, "lags": 2}),
    "predictor": (["train.predictor_loss=0.4", "train.predictor_lags=3"],
                  {"name": "predictor", "weight": 0.4, "lags": 3}),
    "step_profile": (["train.step_profile_loss=0.2"], {"name": "step_profile", "weight": 0.2}),
}


def g_loss(cfg):
    """G's loss of step 0's batch and noise, on the parameters already in nnabla's scope."""
    from gan_sru.data import training_data
    from gan_sru.train.steps import GanSteps

    data = training_data(cfg)
    steps = GanSteps(cfg, data.train, data.spec)
    g = steps.graph_for(data.spec.boundaries[-1])
    batch, noise = steps.inputs(0)
    g.feed(batch, noise)
    g.g_loss.forward()
    return float(g.g_loss.d), [t.name for t in g.terms]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_term_in_train_terms_equals_its_old_key(name):
    old, entry = CASES[name]
    nn.clear_parameters()
    plain, _ = g_loss(load_config(None, BASE))
    with_old, names = g_loss(load_config(None, BASE + old))
    cfg = load_config(None, BASE)
    cfg.train.terms = [entry]
    with_list, names_list = g_loss(cfg)
    assert names == names_list == [name]
    assert with_list == pytest.approx(with_old, rel=1e-6)
    assert with_old != pytest.approx(plain, rel=1e-9)  # the term adds something


def test_old_keys_translate_into_the_list():
    train = {"moment_loss": 1.0, "predictor_loss": 0.5, "predictor_lags": 3, "marginal_loss": 0.0, "g_lr": 0.001}
    assert terms_from_old_keys(train) == [{"name": "moment", "weight": 1.0},
                                          {"name": "predictor", "weight": 0.5, "lags": 3}]
    assert train == {"g_lr": 0.001}  # the term keys are consumed, the others stay


def test_every_old_key_is_a_config_key_and_every_term_is_registered():
    tcfg = load_config(None).train
    assert set(TERMS) == set(CASES) | {"class_moment"}
    for cls in TERMS.values():
        assert hasattr(tcfg, cls.old_key)
        assert all(hasattr(tcfg, old) for old, _ in cls.options.values())
    assert term_list(tcfg) == []  # the defaults: no term


def test_unknown_names_and_options_are_refused():
    cfg = load_config(None, BASE)
    cfg.train.terms = [{"name": "momentum", "weight": 1.0}]
    with pytest.raises(ConfigError, match="unknown term 'momentum'; known: class_moment"):
        term_list(cfg.train)
    cfg.train.terms = [{"name": "predictor", "weight": 1.0, "lag": 3}]
    with pytest.raises(ConfigError, match="term 'predictor' has no option 'lag'; its options: lags"):
        term_list(cfg.train)
    cfg.train.terms = [{"name": "moment", "weight": 0.0}]
    assert term_list(cfg.train) == []  # weight 0: off
