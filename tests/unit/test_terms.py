"""The generator terms as one interface (gan_sru/train/terms/): train.terms and the older *_loss keys build the
same G loss; each term's reference is the real data's statistics, from the bucket's sequences (a seeded sample
of them past REFERENCE_SEQUENCES); refusals of unknown and removed names and of unknown options."""
import nnabla as nn
import numpy as np
import pytest

from gan_sru import ConfigError
from gan_sru.config import load_config, retired
from gan_sru.train.terms import TERMS, Term, term_list

BASE = ["data.num_sequences=32", "data.seq_len=12", "data.num_features=2", "data.num_buckets=1",
        "train.batch_size=16", "train.select=none"]
# term -> (old keys, train.terms entry): the same term written both ways
CASES = {
    "moment": (["train.moment_loss=0.7"], {"name": "moment", "weight": 0.7}),
    "innovation": (["train.innovation_loss=0.5"], {"name": "innovation", "weight": 0.5}),
    "sequence_moment": (["train.sequence_moment_loss=1.0"], {"name": "sequence_moment", "weight": 1.0}),
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


class Windowed(Term):
    """A user's term with an option, registered for one test: the mean of the fake batch's first `steps` steps
    against the real data's."""
    name = "windowed"
    options = {"steps": 2}

    def reference(self, data, graph):
        return data.x[:self.opts["steps"]].mean()

    def discrepancy(self, graph, reference):
        import nnabla.functions as F

        return F.absolute_error(F.mean(graph.fake_g[:self.opts["steps"]]), nn.Variable.from_numpy_array(
            np.array(reference, np.float32)))


@pytest.fixture
def windowed():
    term_list(load_config(None).train)  # loads the built-in terms first
    TERMS.register("windowed")(Windowed)
    yield Windowed
    del TERMS["windowed"]


def test_every_term_is_registered_and_a_users_term_gets_its_options(windowed):
    assert set(TERMS) == {"moment", "innovation", "sequence_moment", "class_moment", "windowed"}
    assert all(not TERMS[n].options for n in ("moment", "innovation", "sequence_moment", "class_moment"))
    assert {name for name, _ in retired.TERM_KEYS.values()} == set(TERMS) - {"windowed"}  # built-in: old keys
    assert not set(retired.REMOVED_TERMS) & set(TERMS)
    assert term_list(load_config(None).train) == []  # the defaults: no term
    (term,) = term_list(load_config(None, ["train.terms=[{name: windowed, weight: 2, steps: 3}]"]).train)
    assert term.weight == 2.0 and term.opts == {"steps": 3}
    (term,) = term_list(load_config(None, ["train.terms=[{name: windowed, weight: 1}]"]).train)
    assert term.opts == {"steps": 2}  # its default
    nn.clear_parameters()
    plain, _ = g_loss(load_config(None, BASE))
    with_term, names = g_loss(load_config(None, BASE + ["train.terms=[{name: windowed, weight: 1, steps: 3}]"]))
    assert names == ["windowed"] and with_term != pytest.approx(plain, rel=1e-9)  # the user's term reaches G


def test_unknown_and_removed_names_and_unknown_options_are_refused(windowed):
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
    cfg.train.terms = [{"name": "windowed", "weight": 1.0, "step": 3}]
    with pytest.raises(ConfigError, match="term 'windowed' has no option 'step'; its options: steps"):
        term_list(cfg.train)
    cfg.train.terms = [{"name": "sequence_moment", "weight": 1.0, "lag": 3}]
    with pytest.raises(ConfigError, match="term 'sequence_moment' has no option 'lag'; its options: none"):
        term_list(cfg.train)
    cfg.train.terms = [{"name": "moment", "weight": 0.0}]
    assert term_list(cfg.train) == []  # weight 0: off


def _steps(extra=()):
    from gan_sru.data import training_data
    from gan_sru.train.steps import GanSteps

    nn.clear_parameters()
    cfg = load_config(None, BASE + ["train.terms=[{name: moment, weight: 1}, {name: innovation, weight: 1}, "
                                    "{name: sequence_moment, weight: 1}]", *extra])
    data = training_data(cfg)
    return GanSteps(cfg, data.train, data.spec), data


def test_the_references_are_the_statistics_of_the_buckets_training_sequences():
    """Variable lengths in two buckets: each bucket's references come from its own training sequences (not the
    step's batch), padded to its length, and equal NumPy's statistics of them."""
    steps, data = _steps(["data.source=sines_varlen", "data.min_len=4", "data.num_buckets=2"])
    lengths = np.array(data.train.lengths)
    for b, L in enumerate(data.spec.boundaries):
        members = np.flatnonzero(data.spec.buckets_of(lengths) == b)
        real = steps.real_data(L)
        assert real.x.shape == (L, len(members), 2) and real.mask.sum() == lengths[members].sum()
        g = steps.graph_for(L)
        mean, std, corr, acf = g.references[0]
        v = np.concatenate([data.train.sequences[i] for i in members]).astype(np.float64)
        np.testing.assert_allclose(mean, v.mean(0), rtol=1e-6)
        np.testing.assert_allclose(std, v.std(0), rtol=1e-5)
        np.testing.assert_allclose(corr, np.corrcoef(v, rowvar=False), atol=1e-6)
        d = np.concatenate([np.diff(data.train.sequences[i], axis=0) for i in members]).astype(np.float64)
        np.testing.assert_allclose(g.references[1][1], d.std(0), rtol=1e-5)
        own = np.array([data.train.sequences[i].mean(0) for i in members])
        seq_mean, seq_spread = g.references[2][0]  # the per-sequence means: their mean and spread
        np.testing.assert_allclose(seq_mean, own.mean(0), rtol=1e-6)
        np.testing.assert_allclose(seq_spread, own.std(0), rtol=1e-5)


def test_past_the_cap_the_reference_is_a_seeded_sample_of_the_bucket(monkeypatch):
    from gan_sru.train import steps as steps_module

    monkeypatch.setattr(steps_module, "REFERENCE_SEQUENCES", 10)
    steps, data = _steps()
    L = data.spec.boundaries[-1]
    a, b = steps.real_data(L), steps.real_data(L)
    assert a.x.shape == (L, 10, 2) and np.array_equal(a.x, b.x)  # the same sample every time
    rows = {np.asarray(s, np.float32).tobytes() for s in data.train.sequences}
    assert all(a.x[:, j].tobytes() in rows for j in range(10))  # training sequences, none twice
    assert len({a.x[:, j].tobytes() for j in range(10)}) == 10
    other, _ = _steps(["seed=1"])
    assert not np.array_equal(other.real_data(L).x, a.x)  # another seed, another sample


def test_the_sequence_reference_in_chunks_equals_it_in_one_piece():
    from gan_sru.ops.moments import sequence_reference

    rng = np.random.default_rng(3)
    x = rng.random((9, 70, 3))
    mask = (np.arange(9)[:, None] < rng.integers(2, 10, 70)[None, :]).astype(np.float64)
    x *= mask[:, :, None]
    whole, chunked = (sequence_reference(x, mask, chunk=c) for c in (70, 16))
    for (m1, s1), (m2, s2) in zip(whole, chunked):
        np.testing.assert_allclose(m1, m2, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(s1, s2, rtol=1e-8, atol=1e-10)


def test_a_term_is_zero_for_the_data_itself_and_the_step_graph_needs_the_data():
    """The fake batch equal to every sequence the reference was made from: each term's discrepancy is 0."""
    from gan_sru.train.graphs import StepGraph
    from gan_sru.train.terms import RealData

    steps, data = _steps()
    L = data.spec.boundaries[-1]
    real = steps.real_data(L)
    g = steps.graph_for(L)
    for term, ref in zip(g.terms, g.references):
        f = nn.Variable.from_numpy_array(real.x)
        view = type("View", (), dict(fake_g=f, mask=nn.Variable.from_numpy_array(real.mask), moment_impl="auto"))
        value = term.discrepancy(view, ref)
        value.forward()
        assert abs(float(value.d)) < 1e-4, term.name  # float32 statistics against float64 ones
    with pytest.raises(ValueError, match=r"StepGraph: the generator's terms need the bucket's real data"):
        StepGraph(steps.cfg, L, 16, 2, L, "detached", terms=steps.terms)
    assert RealData(real.x, real.mask).attrs is None


def test_a_term_without_a_reference_or_a_discrepancy_cannot_be_made():
    from gan_sru.train.terms import Term

    class NoReference(Term):
        name = "no_reference"

        def discrepancy(self, graph, reference):
            return None

    with pytest.raises(TypeError, match="abstract method.*reference"):
        NoReference(1.0)
