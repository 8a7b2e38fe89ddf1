"""model.discriminator.whiten: D reads (x - mean) @ W, W the training data's principal directions over their std
(eigenvalues floored at a share of the largest). W against numpy's covariance, the input against a numpy reference
with padded steps at zero, and a trained run that sets W from its data and leaves it out of D's updates."""
import os

import nnabla as nn
import numpy as np
import pandas as pd

from gan_sru.config import load_config
from gan_sru.networks import WHITEN_FLOOR, whiten_input, whitening
from gan_sru.train import Trainer


def test_whitening_gives_unit_covariance_and_caps_the_gain_of_a_copied_feature():
    rng = np.random.default_rng(0)
    mix = np.array([[1.0, 0.3, 0.0], [0.0, 0.5, 0.2], [0.0, 0.0, 0.1]])
    seqs = [rng.normal(size=(int(n), 3)) @ mix for n in rng.integers(5, 20, size=30)]
    w, mean = whitening(seqs)
    pooled = np.concatenate(seqs)
    np.testing.assert_allclose(mean[0], pooled.mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(w.T @ np.cov(pooled.T, bias=True) @ w, np.eye(3), atol=1e-4)
    # a copy of feature 0: the direction (1, 0, 0, -1) has no variance; its gain stops at 1 / sqrt(floor) x the widest's
    copied = [np.column_stack([s, s[:, 0]]) for s in seqs]
    w, _ = whitening(copied)
    cov = np.cov(np.concatenate(copied).T, bias=True)
    gains = np.linalg.norm(w, axis=0)
    lam_max = np.linalg.eigvalsh(cov).max()
    np.testing.assert_allclose(gains.max(), 1 / np.sqrt(WHITEN_FLOOR * lam_max), rtol=1e-4)
    assert np.isfinite(w).all()


def test_input_is_centred_times_w_and_zero_at_padded_steps():
    rng = np.random.default_rng(1)
    L, B, C = 6, 3, 4
    x = rng.random((L, B, C)).astype(np.float32)
    mask = (np.arange(L)[:, None] < np.array([6, 4, 2])[None, :]).astype(np.float32)
    with nn.parameter_scope("whiten_test"):
        seqs, m = nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(mask)
        out = whiten_input(seqs, m)
        params = nn.get_parameters(grad_only=False)
    assert not params["D/input_whiten"].need_grad and not params["D/input_mean"].need_grad
    w, mean = rng.normal(size=(C, C)).astype(np.float32), rng.random((1, C)).astype(np.float32)
    params["D/input_whiten"].d, params["D/input_mean"].d = w, mean
    out.forward()
    np.testing.assert_allclose(out.d, ((x - mean) @ w) * mask[:, :, None], atol=1e-5)
    assert (out.d[mask == 0] == 0).all()


def test_trained_run_sets_w_from_its_data_and_never_updates_it(tmp_path):
    t = np.arange(300)
    a = np.sin(t / 7.0) + 0.1 * np.random.default_rng(2).normal(size=t.size)
    frame = {"time": t, "a": a, "b": np.cos(t / 11.0), "a2": 3.0 * a - 1.0}  # a2 is an exact copy of a's shape
    pd.DataFrame(frame).to_csv(tmp_path / "x.csv", index=False)
    cfg = load_config(None, ["data.source=file", f"data.path={tmp_path / 'x.csv'}", "data.csv_time_column=time",
                             "data.csv_id_column=null", "data.window=16", "train.steps=20",
                             "train.checkpoint_every=20", "train.sample_every=1000", "train.select=none",
                             "model.discriminator.whiten=true", f"run_dir={tmp_path}", "name=w"])
    nn.clear_parameters()
    first = {}

    def after_step(trainer, step, d_loss, g_loss):
        if step == 1:
            first.update({k: v.d.copy() for k, v in trainer.steps.d_params.items()})

    with open(os.devnull, "w") as devnull:
        trainer = Trainer(cfg, progress=False, out=devnull, step_fn=after_step)
        trainer.train()
    d = trainer.steps.d_params
    w, mean = whitening(trainer.train_set.sequences)
    np.testing.assert_array_equal(d["input_whiten"].d, w)
    np.testing.assert_array_equal(d["input_mean"].d, mean)
    assert np.linalg.norm(w, axis=0).max() > 10 * np.linalg.norm(w, axis=0).min()  # a2's copy of a: a narrow direction
    assert {"input_whiten", "input_mean"}.isdisjoint(trainer.steps.solver_d.get_parameters())
    assert any(not np.array_equal(first[k], v.d) for k, v in d.items() if v.need_grad)  # D itself trained
