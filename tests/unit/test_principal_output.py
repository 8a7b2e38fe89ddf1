"""model.generator.principal_output: G writes mean + z @ basis, the basis the training data's principal directions
times their std, clipped to [0, 1]. The basis against numpy's covariance, the output and its gradient against a
numpy reference, and a trained run whose data holds a feature that is an exact linear function of another: the basis
is set from the data, left alone by training, and the samples keep the relation."""
import os

import nnabla as nn
import numpy as np
import pandas as pd
import pytest

from gan_sru.config import load_config
from gan_sru.models.generators import principal_basis, principal_output
from gan_sru.sampling import TrainedRun
from gan_sru.train import Trainer


def test_basis_rows_rebuild_the_covariance_and_a_copied_feature_gets_no_direction():
    rng = np.random.default_rng(0)
    seqs = [rng.random((int(n), 3)) for n in rng.integers(5, 20, size=12)]
    seqs = [np.column_stack([s, s[:, 0]]) for s in seqs]  # feature 3 is a copy of feature 0
    basis, mean = principal_basis(seqs)
    pooled = np.concatenate(seqs)
    np.testing.assert_allclose(mean, pooled.mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(basis.T @ basis, np.cov(pooled.T, bias=True), atol=1e-6)
    # z of unit scale in every coordinate: feature 3 equals feature 0 in every output
    out = mean + rng.normal(size=(1000, 4)).astype(np.float32) @ basis
    assert np.abs(out[:, 3] - out[:, 0]).max() < 1e-5
    assert np.abs(out[:, 1] - out[:, 0]).max() > 0.1


def test_output_is_mean_plus_z_times_basis_clipped_to_the_unit_range():
    nn.clear_parameters()
    rng = np.random.default_rng(1)
    z = nn.Variable.from_numpy_array(rng.normal(size=(6, 4, 3)).astype(np.float32), need_grad=True)
    out = principal_output(z, 3)
    basis = rng.normal(size=(3, 3)).astype(np.float32)
    mean = np.array([0.5, 0.1, 0.9], np.float32)
    params = nn.get_parameters(grad_only=False)
    assert not params["output_basis"].need_grad and not params["output_mean"].need_grad
    params["output_basis"].d, params["output_mean"].d = basis, mean
    out.forward()
    ref = mean + z.d @ basis
    assert ref.min() < 0 and ref.max() > 1  # the reference leaves [0, 1], so the clip is tested
    np.testing.assert_allclose(out.d, np.clip(ref, 0, 1), atol=1e-5)
    # the gradient reaches z through the entries inside the range only
    z.grad.zero()
    out.backward(np.ones(out.shape, np.float32), clear_buffer=True)
    inside = ((ref > 0) & (ref < 1)).astype(np.float32)
    np.testing.assert_allclose(z.g, inside @ basis.T, atol=1e-5)


def test_trained_run_keeps_the_datas_basis_and_an_exact_linear_relation(tmp_path):
    t = np.arange(400)
    a = np.sin(t / 7.0) + 0.1 * np.random.default_rng(2).normal(size=t.size)
    b = np.cos(t / 11.0)
    pd.DataFrame({"time": t, "a": a, "b": b, "a2": 3.0 * a - 1.0}).to_csv(tmp_path / "x.csv", index=False)
    cfg = load_config(None, ["data.source=file", f"data.path={tmp_path / 'x.csv'}", "data.csv_time_column=time",
                             "data.csv_id_column=null", "data.window=16", "train.steps=30",
                             "train.checkpoint_every=30", "train.sample_every=1000", "train.select=none",
                             "model.generator.principal_output=true", f"run_dir={tmp_path}", "name=p"])
    nn.clear_parameters()
    with open(os.devnull, "w") as devnull:
        trainer = Trainer(cfg, progress=False, out=devnull)
        run_path = trainer.train()
    basis, mean = principal_basis(trainer.train_set.sequences)
    g = trainer.steps.g_params
    np.testing.assert_array_equal(g["generator/output_basis"].d, basis)  # 30 updates left it alone
    np.testing.assert_array_equal(g["generator/output_mean"].d, mean)
    run = TrainedRun(run_path)
    x = run.sampler.sample(16, 64, 0, np.full(64, 16))  # the [0, 1] scale, where a2's copy of a is exact
    assert x.min() >= 0 and x.max() <= 1
    inside = (x[..., 0] > 0) & (x[..., 0] < 1)  # where neither was clipped
    assert inside.mean() > 0.5
    assert np.abs(x[..., 2] - x[..., 0])[inside].max() < 1e-4
