"""The generator terms as one interface (gan_sru/train/terms/): train.terms and the older *_loss keys build the
same G loss; refusals of unknown and removed names and of unknown options."""
import nnabla as nn
import pytest

from gan_sru import ConfigError
from gan_sru.config import load_config, retired
from gan_sru.train.terms import TERMS, term_list

BASE = ["data.num_sequences=32", "data.seq_len=12", "data.num_features=2", "data.num_buckets=1",
        "train.batch_size=16", "train.select=none"]
# term -> (old keys, train.terms entry): the same term written both ways, options included
CASES = {
    "moment": (["train.moment_loss=0.7"], {"name": "moment", "weight": 0.7}),
    "innovation": (["train.innovation_loss=0.5"], {"name": "innovation", "weight": 0.5}),
    "sequence_moment": (["train.sequence_moment_loss=1.0", "train.sequence_moment_lags=2"],
                        {"name": "sequence_moment", "weight": 1.0, "lags": 2}),
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


def test_every_term_is_registered_with_its_options_and_defaults():
    term_list(load_config(None).train)  # loads the term modules
    assert set(TERMS) == {"moment", "innovation", "sequence_moment", "class_moment"}
    assert TERMS["sequence_moment"].options == {"tails": False, "lags": 1}
    assert all(not TERMS[n].options for n in ("moment", "innovation", "class_moment"))
    assert {name for name, _ in retired.TERM_KEYS.values()} == set(TERMS)  # every term has its old key
    assert not set(retired.REMOVED_TERMS) & set(TERMS)
    assert term_list(load_config(None).train) == []  # the defaults: no term
    (term,) = term_list(load_config(None, ["train.terms=[{name: sequence_moment, weight: 2, lags: 3}]"]).train)
    assert term.weight == 2.0 and term.opts == {"tails": False, "lags": 3}


def test_unknown_and_removed_names_and_unknown_options_are_refused():
    cfg = load_config(None, BASE)
    cfg.train.terms = [{"name": "momentum", "weight": 1.0}]
    with pytest.raises(ConfigError, match="unknown term 'momentum'; known: class_moment"):
        term_list(cfg.train)
    for name in retired.REMOVED_TERMS:
        cfg.train.terms = [{"name": "moment", "weight": 1.0}, {"name": name, "weight": 1.0}]
        with pytest.raises(ConfigError, match=rf"train.terms entry 1: the '{name}' generator term was removed: it "
                                              r"did not improve the scores on real data \(docs/results/"
                                              r"2026-11-28-recipe.md\); remove it from train.terms"):
            term_list(cfg.train)
    cfg.train.terms = [{"name": "sequence_moment", "weight": 1.0, "lag": 3}]
    with pytest.raises(ConfigError, match="term 'sequence_moment' has no option 'lag'; its options: tails, lags"):
        term_list(cfg.train)
    cfg.train.terms = [{"name": "moment", "weight": 0.0}]
    assert term_list(cfg.train) == []  # weight 0: off
