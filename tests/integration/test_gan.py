"""The training step: strategies agree, buckets share parameters, resume is exact, losses are right."""
import json
import os

import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest

from gan_sru.config import load_config
from gan_sru.data import training_data
from gan_sru.sizes import apply_size_rules
from gan_sru.train import GanSteps, Trainer, all_params, d_loss_fn, g_loss_fn
from gan_sru.train.run_folder import Checkpoint, RunFolder

TINY = ["data.num_sequences=96", "data.seq_len=8", "data.min_len=3", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.generator.num_layers=2", "model.generator.noise_dim=3",
        "model.discriminator.hidden_size=8", "train.sample_every=1000", "train.log_every=1"]


def tiny_cfg(tmp_path, *extra, config="configs/sines.yaml"):
    return load_config(config, TINY + [f"run_dir={tmp_path}"] + list(extra))


def make_steps(cfg, strategy, observer=None):
    nn.clear_parameters()
    data = training_data(cfg)
    train, spec = data.train, data.spec
    return GanSteps(cfg, train, spec, strategy=strategy, observer=observer)


def snapshot():
    return {k: v.d.copy() for k, v in all_params().items()}


@pytest.mark.parametrize("config", ["configs/sines.yaml", "configs/sines_varlen.yaml"])
def test_strategies_give_the_same_parameters(tmp_path, config):
    """detached == linked == recompute after several steps on the same data and noise."""
    cfg = tiny_cfg(tmp_path, config=config)
    results = {}
    for strategy in ("linked", "recompute", "detached"):
        steps = make_steps(cfg, strategy)
        for i in range(4):
            steps.step(i)
        results[strategy] = snapshot()
    for strategy in ("recompute", "detached"):
        assert results[strategy].keys() == results["linked"].keys()
        for k, v in results["linked"].items():
            np.testing.assert_allclose(results[strategy][k], v, rtol=0, atol=1e-6, err_msg=f"{strategy} {k}")


@pytest.mark.parametrize("strategy", ["detached", "recompute", "linked"])
def test_the_g_step_computes_no_d_gradient(tmp_path, strategy):
    """D's gradients are what the D step left (the G loss's graph reads D's weights without a gradient), and
    D still trains; the G updates themselves are checked by the strategies' test."""
    cfg = tiny_cfg(tmp_path)
    steps = make_steps(cfg, strategy)
    g_step, seen = steps.g_step, {}

    def spy(g):
        for p in steps.d_params.values():
            p.g = np.full(p.shape, 7.0)
        out = g_step(g)
        seen["grads"] = {k: p.g.copy() for k, p in steps.d_params.items()}
        return out

    steps.g_step = spy
    steps.step(0)
    assert seen["grads"] and all(np.all(v == 7.0) for v in seen["grads"].values())
    steps.g_step = g_step
    before = {k: p.d.copy() for k, p in steps.d_params.items()}
    steps.step(1)  # D still trains
    assert any(not np.array_equal(before[k], p.d) for k, p in steps.d_params.items())


def test_parameters_move_and_both_networks_train(tmp_path):
    cfg = tiny_cfg(tmp_path)
    steps = make_steps(cfg, "detached")
    before = snapshot()
    for i in range(3):
        steps.step(i)
    after = snapshot()
    for net in ("G/", "D/"):
        moved = [k for k in before if k.startswith(net) and not np.array_equal(before[k], after[k])]
        assert moved, f"no {net} parameter changed"


def test_buckets_share_one_parameter_set_and_build_each_graph_once(tmp_path):
    cfg = tiny_cfg(tmp_path, "data.num_buckets=3", config="configs/sines_varlen.yaml")
    steps = make_steps(cfg, "detached")
    n_params = len(nn.get_parameters(grad_only=False))
    seen = set()
    for i in range(30):
        batch, _ = steps.inputs(i)
        seen.add(batch.x.shape[0])
        steps.step(i)
    assert len(seen) == 3, f"expected all three buckets to be drawn, saw lengths {seen}"
    assert set(steps.graphs) == seen
    assert steps.graph_builds == 3  # once per bucket, reused afterwards
    assert len(nn.get_parameters(grad_only=False)) == n_params
    # every bucket's graph reads the same parameter arrays
    w = nn.get_parameters()["G/generator/output/affine/W"]
    for g in steps.graphs.values():
        users = []

        def collect(f, users=users):
            users.extend(x for x in f.inputs if x == w)

        g.fake.visit(collect)
        assert users, "a bucket graph does not use the shared output weight"


def test_padded_steps_of_fake_are_zero(tmp_path):
    cfg = tiny_cfg(tmp_path, config="configs/sines_varlen.yaml")
    steps = make_steps(cfg, "detached")
    batch, noise = steps.inputs(0)
    g = steps.graph_for(batch.x.shape[0])
    g.feed(batch, noise)
    g.fake.forward()
    assert np.all(g.fake.d[batch.mask == 0] == 0)
    assert np.all(g.fake.d[batch.mask == 1] > 0)  # sigmoid output


def run_trainer(cfg, resume=False, abort_fn=None):
    nn.clear_parameters()
    with open(os.devnull, "w") as devnull:
        return Trainer(cfg, resume=resume, progress=False, out=devnull, abort_fn=abort_fn).train()


def final_checkpoint(run_path):
    ckpts = sorted(os.listdir(os.path.join(run_path, "checkpoints")))
    return Checkpoint.load(os.path.join(run_path, "checkpoints", ckpts[-1]))


@pytest.mark.parametrize("extra", [(), ("model.generator.num_layers=3",)], ids=["2-layers", "3-layers"])
def test_resume_equals_uninterrupted_run(tmp_path, extra):
    straight = tiny_cfg(tmp_path, "name=straight", "train.steps=6", "train.checkpoint_every=3", *extra)
    path_a = run_trainer(straight)
    # the same run stopped after step 3 (as by a signal), then resumed
    first = tiny_cfg(tmp_path, "name=resumed", "train.steps=6", "train.checkpoint_every=3", *extra)
    done = []
    run_trainer(first, abort_fn=lambda: done.append(1) or len(done) >= 3)
    np.random.rand(7)  # the global RNGs move on before the resume; the run must not depend on them
    nn.seed(1234)
    second = tiny_cfg(tmp_path, "name=resumed", "train.steps=6", "train.checkpoint_every=3", *extra)
    path_b = run_trainer(second, resume=True)
    a, b = final_checkpoint(path_a), final_checkpoint(path_b)
    assert a.meta["step"] == b.meta["step"] == 6
    assert a.params.keys() == b.params.keys()
    for k in a.params:
        np.testing.assert_array_equal(a.params[k], b.params[k], err_msg=k)
    for net in ("G", "D"):
        for p, st in a.solvers[net].items():
            assert st["t"] == b.solvers[net][p]["t"] == 6
            for key in st:
                np.testing.assert_array_equal(st[key], b.solvers[net][p][key], err_msg=f"{net} {p} {key}")


def test_run_folder_holds_config_checkpoints_monitors_and_pictures(tmp_path):
    cfg = tiny_cfg(tmp_path, "train.steps=4", "train.checkpoint_every=2", "train.sample_every=2")
    path = run_trainer(cfg)
    saved = load_config(os.path.join(path, "config.yaml"))
    assert saved["model"]["generator"]["oscillator_grid"] == "linear"  # "auto" resolved: 2 x 8 / 8 = 2 steps
    # the config, with what follows the data resolved: the recipe's choices for the keys it left unset
    recipe = json.load(open(os.path.join(path, "recipe.json")))["choices"]
    expected = apply_size_rules(cfg, 5, 8)
    for key, choice in recipe.items():
        *sections, name = key.split(".")
        node = expected
        for part in sections:
            node = getattr(node, part)
        setattr(node, name, choice["value"])
    assert "train.terms" not in recipe  # sines.yaml sets its terms; a value from the file stands
    assert saved == expected
    assert sorted(os.listdir(os.path.join(path, "checkpoints"))) == ["step_00000002.npz", "step_00000004.npz"]
    ckpt = final_checkpoint(path)
    assert ckpt.meta["step"] == 4 and ckpt.meta["buckets"]["boundaries"] == [8]
    assert len(ckpt.meta["scaler"]["min"]) == 5
    assert os.path.getsize(os.path.join(path, "monitors", "d_loss.series.txt")) > 0
    assert sorted(os.listdir(os.path.join(path, "samples"))) == ["step_00000002.png", "step_00000004.png"]
    assert os.path.exists(os.path.join(path, "losses.png"))


def test_a_run_shorter_than_log_every_warns_of_nothing_and_draws_no_loss_curves(tmp_path):
    import warnings

    cfg = tiny_cfg(tmp_path, "train.steps=2", "train.checkpoint_every=2", "train.log_every=25")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the empty loss monitors used to reach np.loadtxt: "input contained no data"
        path = run_trainer(cfg)
    assert os.path.getsize(os.path.join(path, "monitors", "d_loss.series.txt")) == 0
    assert not os.path.exists(os.path.join(path, "losses.png"))


def test_existing_run_needs_resume(tmp_path):
    from gan_sru import RunFolderError

    cfg = tiny_cfg(tmp_path, "train.steps=2", "train.checkpoint_every=2")
    run_trainer(cfg)
    with pytest.raises(RunFolderError, match="already holds checkpoints.*--resume"):
        run_trainer(cfg)


def test_gradient_clipping_bounds_the_update(tmp_path):
    cfg = tiny_cfg(tmp_path, "train.grad_clip=1e-6", "train.lr=1.0")
    steps = make_steps(cfg, "detached")
    before = snapshot()
    steps.step(0)
    # Adam normalises the step size, so check the clipped gradient norm directly
    from gan_sru.train import clip_global_norm
    norm = clip_global_norm(steps.solver_g, steps.g_params, 1e-6)
    clipped = np.sqrt(sum(float(np.square(p.g).sum()) for p in steps.g_params.values()))
    assert clipped <= 1e-6 * (1 + 1e-4) and norm > 0
    assert any(not np.array_equal(before[k], v) for k, v in snapshot().items())


def test_learning_rate_stays_at_train_lr(tmp_path):
    """No schedule: both solvers keep train.lr at every step (docs/results/2026-11-29-settling.md)."""
    steps = make_steps(tiny_cfg(tmp_path, "train.steps=4", "train.lr=2e-3"), "detached")
    for step in range(4):
        steps.step(step)
        assert steps.solver_g.learning_rate() == pytest.approx(2e-3)
        assert steps.solver_d.learning_rate() == pytest.approx(2e-3)


def _logits(values):
    v = nn.Variable((len(values), 1))
    v.d = np.array(values, np.float32).reshape(-1, 1)
    return v


@pytest.mark.parametrize("real,fake,d_expected,g_expected", [
    ([0.0], [2.0], 0.5 * (1.0 + 4.0), 0.5 * 1.0),
    ([1.0, -1.0], [0.5, 3.0], 0.5 * ((0.0 + 4.0) / 2 + (0.25 + 9.0) / 2), 0.5 * (0.25 + 4.0) / 2),
])
def test_the_least_squares_loss_on_known_outputs(real, fake, d_expected, g_expected):
    """D: 0.5 (mean (D(real) - 1)^2 + mean D(fake)^2); G: 0.5 mean (D(fake) - 1)^2."""
    d = d_loss_fn(_logits(real), _logits(fake))
    g = g_loss_fn(_logits(fake))
    F.sink(d, g).forward()
    assert d.d == pytest.approx(d_expected, rel=1e-5)
    assert g.d == pytest.approx(g_expected, rel=1e-5)


@pytest.mark.parametrize("strategy,g_forward,g_backward", [("detached", 1, 1), ("recompute", 2, 1), ("linked", 2, 2)])
def test_generator_passes_per_step_counted_with_function_hooks(tmp_path, strategy, g_forward, g_backward):
    """The detached step runs G forward once and backward once per step (nnabla function hooks)."""
    from gan_sru.profiling import CallCounter
    from gan_sru.profiling.measure import ProfileObserver

    cfg = tiny_cfg(tmp_path)
    steps = make_steps(cfg, strategy, observer=ProfileObserver(lambda: None))
    counter = CallCounter(steps.g_params, steps.d_params)
    per_pass = counter.functions_per_pass(steps.graph_for(8))["G"]
    assert per_pass > 0
    steps.observer.count_on(counter)
    for i in range(3):
        counter.calls.clear()
        steps.step(i)
        assert counter.calls["G_forward"] == g_forward * per_pass
        assert counter.calls["G_backward"] == g_backward * per_pass


def test_generator_weight_average_is_updated_saved_and_used_for_sampling(tmp_path):
    from gan_sru.sampling import TrainedRun

    cfg = tiny_cfg(tmp_path, "train.g_ema=0.5")
    steps = make_steps(cfg, "detached")
    init = {k: v.d.copy() for k, v in steps.g_params.items()}
    steps.step(0)
    for k, p in steps.g_params.items():
        np.testing.assert_allclose(steps.ema[k].d, 0.5 * init[k] + 0.5 * p.d, rtol=1e-6, atol=1e-7)
    with steps.ema_weights():
        for k, p in steps.g_params.items():
            np.testing.assert_array_equal(p.d, steps.ema[k].d)
    assert not all(np.array_equal(steps.ema[k].d, p.d) for k, p in steps.g_params.items())

    path = run_trainer(tiny_cfg(tmp_path, "train.g_ema=0.5", "train.steps=2", "train.checkpoint_every=2"))
    ckpt = final_checkpoint(path)
    g_names = [k for k in ckpt.params if k.startswith("G/")]
    assert g_names and all(f"EMA/{k}" in ckpt.params for k in g_names)
    run = TrainedRun(path)
    with nn.parameter_scope("G"):
        loaded = {f"G/{k}": v.d for k, v in nn.get_parameters(grad_only=False).items()}
    for k in g_names:
        np.testing.assert_array_equal(loaded[k], ckpt.params[f"EMA/{k}"])
    assert run.step == 2


def test_resuming_a_finished_run_says_so_and_keeps_its_files(tmp_path):
    import io

    cfg = tiny_cfg(tmp_path, "train.steps=2", "train.checkpoint_every=2")
    path = run_trainer(cfg)
    before = {n: open(os.path.join(path, "monitors", n)).read() for n in os.listdir(os.path.join(path, "monitors"))}
    out = io.StringIO()
    nn.clear_parameters()
    Trainer(cfg, resume=True, progress=False, out=out).train()
    assert "is complete at step 2" in out.getvalue() and "--set train.steps=" in out.getvalue()
    after = {n: open(os.path.join(path, "monitors", n)).read() for n in os.listdir(os.path.join(path, "monitors"))}
    assert after == before
    assert [s for s, _ in RunFolder(path).list_checkpoints()] == [2]


def test_callbacks_observe_every_step_and_abort_stops_with_a_checkpoint(tmp_path):
    seen = []
    cfg = tiny_cfg(tmp_path, "train.steps=50", "train.checkpoint_every=100")
    nn.clear_parameters()
    with open(os.devnull, "w") as devnull:
        trainer = Trainer(cfg, progress=False, out=devnull,
                          step_fn=lambda tr, step, d, g: seen.append((step, np.isfinite(d) and np.isfinite(g))),
                          abort_fn=lambda: len(seen) >= 4)
        trainer.train()
    assert trainer.aborted and seen == [(1, True), (2, True), (3, True), (4, True)]
    assert final_checkpoint(trainer.run.path).meta["step"] == 4


COND_TINY = ["data.num_sequences=60", "data.seq_len=8", "data.num_features=2", "train.batch_size=12",
             "model.generator.hidden_size=8", "model.discriminator.hidden_size=8"]


@pytest.mark.parametrize("name, config, extra", [
    ("moment", "configs/sines.yaml", TINY),
    ("innovation", "configs/sines.yaml", TINY),
    ("sequence_moment", "configs/sines.yaml", TINY),
    ("class_moment", "configs/sines_classes.yaml", COND_TINY),  # the config's own terms replaced: this one alone
])
def test_extra_g_terms_enter_the_g_loss_only(tmp_path, name, config, extra):
    """Same parameters, batch and noise: the term adds a positive amount to G's loss and leaves D's alone."""
    losses = {}
    for weight in (0, 1):
        cfg = load_config(config, list(extra) + [f"run_dir={tmp_path}",
                                                 f"train.terms=[{{name: {name}, weight: {weight}}}]"])
        losses[weight] = make_steps(cfg, "detached").step(0)
    (d0, g0), (d1, g1) = losses[0], losses[1]
    assert d1 == pytest.approx(d0, rel=1e-6) and g1 > g0 + 1e-4, losses


def test_class_moment_references_are_each_classs_own_moments(tmp_path):
    """Per class of the bucket's training sequences, the pooled mean and std of that class's valid steps."""
    cfg = load_config("configs/sines_classes.yaml", COND_TINY + [f"run_dir={tmp_path}",
                                                                   "train.terms=[{name: class_moment, weight: 1}]"])
    steps = make_steps(cfg, "detached")
    L = steps.spec.boundaries[-1]
    g, real = steps.graph_for(L), steps.real_data(L)
    s, e = steps.cond.class_block()
    classes = real.attrs[:, s:e].argmax(axis=1)
    (refs,) = g.references
    assert len(refs) == e - s and len(set(classes)) >= 2
    for k, ref in enumerate(refs):
        rows = classes == k
        if not rows.any():
            assert ref is None
            continue
        v = real.x[:, rows][real.mask[:, rows].astype(bool)].astype(np.float64)  # (valid steps, C)
        np.testing.assert_allclose(ref[0], v.mean(0), rtol=1e-6)
        np.testing.assert_allclose(ref[1], v.std(0), rtol=1e-5)
