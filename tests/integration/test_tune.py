"""`gan-sru tune` with the real parts: Optuna studies in a journal file, worker processes, tiny trials.

Two workers complete N trials between them with none lost or duplicated; a worker killed mid-trial leaves
its trial RUNNING until the next worker on the machine marks it FAIL and goes on; a trial whose checkpoint
score the pruner rejects stops at that checkpoint; the validation split is apart from training and from
the held-out set."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from gan_sru import ConfigError  # noqa: E402
from gan_sru.config import load_config  # noqa: E402

CONFIG = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "configs", "sines.yaml"))
TINY = ["data.num_sequences=200", "train.steps=100000", "train.checkpoint_every=20", "train.sample_every=100000",
        "train.select_num=16", "train.log_every=10", "run_dir=runs"]
SCORE = ["--score-num", "40", "--score-repeats", "1", "--score-iterations", "20"]


def tune_argv(trials, budget, storage, extra=()):
    argv = ["tune", "--config", CONFIG, "--trials", str(trials), "--budget", budget, "--storage", storage,
            "--out", "best.yaml", "--seed", "0", *SCORE, *extra]
    for s in TINY:
        argv += ["--set", s]
    return argv


def load_study(path, name="tune-sines"):
    from gan_sru.tuning import open_storage

    return optuna.load_study(study_name=name, storage=open_storage(str(path)))


def states(study):
    return [t.state.name for t in study.get_trials(deepcopy=False)]


@pytest.mark.slow
def test_two_workers_complete_n_trials_between_them(tmp_path):
    p = subprocess.run([sys.executable, "-m", "gan_sru",
                        *tune_argv(4, "4s", "study.journal", ["--workers", "2", "--track"])],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "MLFLOW_TRACKING_URI": ""})
    assert p.returncode == 0, p.stderr
    study = load_study(tmp_path / "study.journal")
    trials = study.get_trials(deepcopy=False)
    finished = [t for t in trials if t.state.name in ("COMPLETE", "PRUNED")]
    assert len(finished) == 4, states(study)
    assert all(t.user_attrs.get("surplus") for t in trials if t not in finished), states(study)
    assert len({t.user_attrs["pid"] for t in finished}) == 2  # both workers trained
    folders = sorted(os.listdir(tmp_path / "runs" / "tune-sines"))
    assert folders == sorted(f"trial_{t.number:04d}" for t in finished)  # one folder per trial, none shared
    for t in finished:
        assert any(n.endswith(".npz") for n in os.listdir(os.path.join(t.user_attrs["run"], "checkpoints")))
    best = load_config(str(tmp_path / "best.yaml"))
    assert best.train.lr == pytest.approx(study.best_trial.params["train.lr"])
    assert best.data.holdout_fraction == pytest.approx(0.1)  # the config's own split, not the trials'
    assert best.name == "sines-tuned"
    assert "train it:    gan-sru train --config best.yaml" in p.stdout
    # every trial is an MLflow run of the experiment named after the study, in the store beside the run folders
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/runs/mlruns.db")
    runs = client.search_runs([client.get_experiment_by_name("tune-sines").experiment_id])
    assert sorted(int(r.data.tags["optuna.trial"]) for r in runs) == sorted(t.number for t in finished)
    for r in runs:
        trial = next(t for t in finished if t.number == int(r.data.tags["optuna.trial"]))
        assert r.info.status == ("FINISHED" if trial.state.name == "COMPLETE" else "KILLED")
        assert ("gan_sru.model_uri" in r.data.tags) == (trial.state.name == "COMPLETE")


@pytest.mark.slow
def test_killed_worker_trial_is_failed_and_the_study_goes_on(tmp_path):
    worker = subprocess.Popen([sys.executable, "-m", "gan_sru",
                               *tune_argv(2, "120s", "study.journal", ["--workers", "1", "--worker"])],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if (tmp_path / "study.journal").exists():
                running = [t for t in load_study(tmp_path / "study.journal").get_trials(deepcopy=False)
                           if t.state.name == "RUNNING" and "pid" in t.user_attrs]
                if running:
                    break
            assert worker.poll() is None, "the worker ended before its first trial"
            time.sleep(0.5)
        else:
            pytest.fail("the worker started no trial in 120 s")
        time.sleep(2)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(30)
    assert states(load_study(tmp_path / "study.journal")) == ["RUNNING"]
    p = subprocess.run([sys.executable, "-m", "gan_sru", *tune_argv(1, "3s", "study.journal")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "trial 0: its worker" in p.stdout and "marked FAIL" in p.stdout
    trials = load_study(tmp_path / "study.journal").get_trials(deepcopy=False)
    assert [t.state.name for t in trials] == ["FAIL", "COMPLETE"]
    assert "ended mid-trial" in trials[0].user_attrs["failed_because"]
    assert (tmp_path / "best.yaml").exists()


def test_a_rejected_checkpoint_score_prunes_the_trial(tmp_path, monkeypatch):
    from gan_sru.tuning import Study

    monkeypatch.chdir(tmp_path)
    study = Study(CONFIG, TINY + ["data.num_sequences=100", "model.generator.hidden_size=8"], storage="s.journal",
                  budget_s=60, trials=1, score_num=20, score_repeats=1, score_iterations=5)
    optuna_study = optuna.create_study(study_name="pruned", storage=None,
                                       pruner=optuna.pruners.ThresholdPruner(upper=-1.0))  # any score prunes
    optuna_study.optimize(study.objective, n_trials=1)
    trial = optuna_study.trials[0]
    assert trial.state.name == "PRUNED"
    assert list(trial.intermediate_values) == [20]  # the first checkpoint's selection score
    assert trial.user_attrs["steps"] == 20  # stopped there, not after the 60 s budget


def test_validation_split_is_apart_from_training_and_held_out():
    from gan_sru.data import training_data
    from gan_sru.tuning import validation_indices

    cfg = load_config(CONFIG, overrides=["data.num_sequences=300"])
    data = training_data(cfg)
    valid = validation_indices(data.dataset, cfg, 0.1)
    final = data.dataset.split_plan(0.1, cfg.seed, "random").holdout
    trial = data.dataset.split_plan(0.2, cfg.seed, "random")
    assert len(valid) == 30
    assert not np.isin(valid, final).any()  # never the held-out set evaluate uses
    assert not np.isin(valid, trial.train).any()  # never what a trial trains on
    assert np.isin(final, trial.holdout).all()


def test_refusals_name_the_value(tmp_path):
    from gan_sru.tuning import Study, parse_duration

    assert parse_duration("1h30m") == 5400 and parse_duration("90s") == 90 and parse_duration("2.5m") == 150
    for bad in ("5", "", "m", "0s", "5 minutes"):
        with pytest.raises(ConfigError, match="--budget"):
            parse_duration(bad)
    with pytest.raises(ConfigError, match="holdout_split"):
        Study(CONFIG, ["data.holdout_split=blocks"])
    with pytest.raises(ConfigError, match="--validation 0.85"):
        Study(CONFIG, [], validation_fraction=0.85)
    with pytest.raises(ConfigError, match="--trials 0"):
        Study(CONFIG, [], trials=0)


def test_size_factors_follow_the_size_rules():
    from gan_sru.sizes import rule_sizes
    from gan_sru.tuning import to_config_values

    rules = rule_sizes(5)
    out = to_config_values({"generator_size_factor": 0.5, "discriminator_size_factor": 2.0, "train.lr": 1e-3},
                           5)
    assert out["model.generator.hidden_size"] == max(16, -(-rules["model.generator.hidden_size"] // 32) * 16)
    assert out["model.discriminator.hidden_size"] == rules["model.discriminator.hidden_size"] * 2
    assert out["train.lr"] == 1e-3


def test_term_weights_become_train_terms_on_top_of_the_configs_own():
    """A searched weight replaces that term's weight in the config's train.terms (options kept), or adds the
    term; the result loads on a config that sets train.terms (configs/wide.yaml) as on one that does not."""
    from gan_sru.tuning import to_config_values
    from gan_sru.tuning.study import _overrides

    own = [{"name": "sequence_moment", "weight": 1.0, "window": 4}, {"name": "innovation", "weight": 1.0}]
    out = to_config_values({"train.moment_loss": 0.5, "train.sequence_moment_loss": 2.0}, 5, own)
    assert out == {"train.terms": [{"name": "sequence_moment", "weight": 2.0, "window": 4},
                                   {"name": "innovation", "weight": 1.0}, {"name": "moment", "weight": 0.5}]}
    assert own[0]["weight"] == 1.0  # the config's list is not changed
    values = {"train.moment_loss": 0.5, "train.sequence_moment_loss": 2.0}
    for config in ("wide", "sines"):
        cfg = load_config(os.path.join(os.path.dirname(CONFIG), f"{config}.yaml"))
        tuned = load_config(os.path.join(os.path.dirname(CONFIG), f"{config}.yaml"),
                            _overrides(to_config_values(values, 5, cfg.train.terms)))
        assert tuned.train.terms == [{"name": "moment", "weight": 0.5}, {"name": "sequence_moment", "weight": 2.0}]
