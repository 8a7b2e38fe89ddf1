"""MLflow tracking end to end with the real parts: `gan-sru train --track` into a real SQLite store (params,
metrics, artifacts, a pyfunc model that loads and samples what the Python API samples), a resumed run
continuing its MLflow run, evaluate's scores joining it, a server that is down, and a real `mlflow server`
on 127.0.0.1 with the model served by `mlflow models serve`."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pandas as pd
import pytest

mlflow = pytest.importorskip("mlflow")

TINY = ["data.num_sequences=64", "train.steps=20", "train.batch_size=16", "train.checkpoint_every=10",
        "train.sample_every=10", "train.log_every=5", "model.generator.hidden_size=8",
        "model.discriminator.hidden_size=8", "train.select=discriminative", "train.select_num=16"]
CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "sines.yaml")


def gan_sru(argv, cwd, env=None, timeout=300):
    p = subprocess.run([sys.executable, "-m", "gan_sru", *argv], cwd=cwd, capture_output=True, text=True,
                       timeout=timeout, env={**os.environ, **(env or {})})
    return p


def train_args(name, extra=()):
    args = ["train", "--config", os.path.abspath(CONFIG), "--no-progress", "--set", f"name={name}",
            "--set", "run_dir=runs"]
    for s in [*TINY, *extra]:
        args += ["--set", s]
    return args


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tracked(tmp_path_factory):
    """A tiny run trained with --track into the default store, runs/mlruns.db."""
    cwd = tmp_path_factory.mktemp("tracked")
    env = {"MLFLOW_TRACKING_URI": ""}  # the default store, not the caller's
    p = gan_sru([*train_args("tiny"), "--track"], cwd, env)
    assert p.returncode == 0, p.stderr
    run = cwd / "runs" / "tiny"
    record = json.loads((run / "tracking.json").read_text())
    return cwd, run, record


def client_for(uri):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def artifact_paths(client, run_id, path=None):
    out = []
    for f in client.list_artifacts(run_id, path):
        out += artifact_paths(client, run_id, f.path) if f.is_dir else [f.path]
    return out


def test_tracked_run_holds_params_metrics_artifacts(tracked):
    cwd, run, record = tracked
    assert record["uri"] == f"sqlite:///{cwd}/runs/mlruns.db"
    client = client_for(record["uri"])
    r = client.get_run(record["run_id"])
    assert r.info.status == "FINISHED"
    assert r.info.run_name == "tiny"
    assert r.data.params["train.steps"] == "20"
    assert r.data.params["data.source"] == "sines"
    assert r.data.params["model.generator.hidden_size"] == "8"
    assert r.data.params["train.terms"] == "[]"  # sines.yaml sets no terms
    losses = client.get_metric_history(record["run_id"], "d_loss")
    assert sorted(m.step for m in losses) == [5, 10, 15, 20]
    monitor = np.loadtxt(run / "monitors" / "d_loss.series.txt", ndmin=2)
    np.testing.assert_allclose(sorted((m.step, m.value) for m in losses), monitor, rtol=1e-5)  # 6 digits
    assert {m.step for m in client.get_metric_history(record["run_id"], "steps_per_s")} == {5, 10, 15, 20}
    selection = json.loads((run / "selection.json").read_text())
    scores = {m.step: m.value for m in client.get_metric_history(record["run_id"], "selection_score")}
    assert sorted(scores) == [10, 20]
    assert len(selection) > 0
    files = artifact_paths(client, record["run_id"])
    for name in ("samples/step_00000010.png", "samples/step_00000020.png", "losses.png", "data_summary.json",
                 "data_summary.txt", "config.yaml", "selection.json", "generator/MLmodel"):
        assert name in files, files
    # the artifacts live beside the store
    assert (cwd / "runs" / "mlartifacts").is_dir()


def test_model_loads_and_samples_like_the_api(tracked):
    from gan_sru.api import SequenceGAN

    cwd, run, record = tracked
    mlflow.set_tracking_uri(record["uri"])
    try:
        model = mlflow.pyfunc.load_model(f"runs:/{record['run_id']}/generator")
        request = pd.DataFrame({"num": [3, 2], "length": [0, 10], "seed": [0, 1]})
        out = model.predict(request)
    finally:
        mlflow.set_tracking_uri(None)
    assert list(out.columns) == ["request", "sequence", "step"] + [f"feature_{k}" for k in range(5)]
    first = out[out.request == 0]
    assert first.sequence.nunique() == 3 and len(first) == 3 * 24
    second = out[out.request == 1]
    assert second.sequence.nunique() == 2 and len(second) == 2 * 10
    expected = SequenceGAN.load(str(run), progress=False).sample(3, seed=0)
    got = first[[f"feature_{k}" for k in range(5)]].to_numpy().reshape(3, 24, 5)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float64), rtol=1e-5, atol=1e-6)
    signature = model.metadata.get_input_schema().input_names()
    assert signature == ["num", "length", "seed"]
    with pytest.raises(Exception, match="seed"):
        model.predict(pd.DataFrame({"num": [1], "length": [0]}))


@pytest.mark.slow
def test_resume_continues_the_same_mlflow_run_and_evaluate_joins_it(tracked, tmp_path):
    from gan_sru import tracking
    from gan_sru.commands.evaluate import evaluate_run

    cwd, run, record = tracked
    copy = tmp_path / "runs"
    shutil.copytree(cwd / "runs", copy)
    moved = json.loads((copy / "tiny" / "tracking.json").read_text())
    moved["uri"] = f"sqlite:///{copy}/mlruns.db"
    (copy / "tiny" / "tracking.json").write_text(json.dumps(moved))
    p = gan_sru(["train", "--config", str(copy / "tiny" / "config.yaml"), "--resume", "--no-progress",
                 "--set", "train.steps=30"], tmp_path, {"MLFLOW_TRACKING_URI": ""})
    assert p.returncode == 0, p.stderr
    assert json.loads((copy / "tiny" / "tracking.json").read_text())["run_id"] == record["run_id"]
    client = client_for(moved["uri"])
    assert len(client.search_runs([client.get_experiment_by_name("gan-sru").experiment_id])) == 1
    steps = sorted(m.step for m in client.get_metric_history(record["run_id"], "g_loss"))
    assert steps[-3:] == [20, 25, 30]
    assert client.get_run(record["run_id"]).info.status == "FINISHED"

    result = evaluate_run(str(copy / "tiny"), num=16, repeats=1, iterations=3, progress=False)
    assert tracking.log_evaluation(result) == record["run_id"]
    metrics = client.get_run(record["run_id"]).data.metrics
    assert metrics["eval_discriminative"] == pytest.approx(result["generated"]["discriminative"]["mean"])
    assert metrics["eval_discriminative_floor"] == pytest.approx(result["holdout"]["discriminative"]["mean"])
    assert metrics["eval_mmd2"] == pytest.approx(result["generated"]["mmd2"])
    assert "evaluation/report.md" in artifact_paths(client, record["run_id"])


def test_untracked_run_writes_no_store(tmp_path):
    p = gan_sru(train_args("plain", ["train.steps=5", "train.select=none"]), tmp_path, {"MLFLOW_TRACKING_URI": ""})
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "runs" / "mlruns.db").exists()
    assert not (tmp_path / "runs" / "plain" / "tracking.json").exists()


def test_server_down_warns_once_and_training_finishes(tmp_path):
    port = free_port()  # nothing listens there
    t0 = time.perf_counter()
    p = gan_sru(train_args("down", ["train.steps=10", f"tracking.uri=http://127.0.0.1:{port}"]), tmp_path)
    assert p.returncode == 0, p.stderr
    assert time.perf_counter() - t0 < 120
    assert p.stderr.count("warning: MLflow tracking at") == 1, p.stderr
    assert "training goes on without tracking" in p.stderr
    assert (tmp_path / "runs" / "down" / "checkpoints" / "step_00000010.npz").exists() or \
        any(n.endswith(".npz") for n in os.listdir(tmp_path / "runs" / "down" / "checkpoints"))
    assert not (tmp_path / "runs" / "down" / "tracking.json").exists()


# how long a server may take to answer: it imports mlflow (and serve the model, nnabla) first, which on a loaded
# 2-core machine has taken over 120 s; the wait ends early when the process exits
START_SECONDS = 300


def wait_http(url, proc, seconds=START_SECONDS):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.5)
    return False


def stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.mark.slow
def test_real_mlflow_server_and_served_model(tmp_path):
    pytest.importorskip("flask", reason="`mlflow server` needs the full mlflow package (pip install -e .[dev])")
    mlflow_bin = os.path.join(os.path.dirname(sys.executable), "mlflow")
    port, serve_port = free_port(), free_port()
    server = subprocess.Popen(
        [mlflow_bin, "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{tmp_path}/server.db", "--artifacts-destination", str(tmp_path / "art")],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    served = None
    try:
        assert wait_http(f"http://127.0.0.1:{port}/health", server), "mlflow server did not start"
        uri = f"http://127.0.0.1:{port}"
        p = gan_sru(train_args("served", [f"tracking.uri={uri}", "tracking.experiment=team"]), tmp_path)
        assert p.returncode == 0, p.stderr
        record = json.loads((tmp_path / "runs" / "served" / "tracking.json").read_text())
        client = client_for(uri)
        r = client.get_run(record["run_id"])
        assert r.info.status == "FINISHED" and r.data.params["tracking.experiment"] == "team"
        assert len(client.get_metric_history(record["run_id"], "d_loss")) == 4
        assert "generator/MLmodel" in artifact_paths(client, record["run_id"])

        log = open(tmp_path / "serve.log", "w")
        served = subprocess.Popen(
            [mlflow_bin, "models", "serve", "-m", f"runs:/{record['run_id']}/generator", "--env-manager", "local",
             "--host", "127.0.0.1", "--port", str(serve_port)],
            cwd=tmp_path, env={**os.environ, "MLFLOW_TRACKING_URI": uri,  # serve runs `uvicorn` from PATH
                                    "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]},
            stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        assert wait_http(f"http://127.0.0.1:{serve_port}/ping", served), \
            f"mlflow models serve did not start: {(tmp_path / 'serve.log').read_text()[-2000:]}"
        body = json.dumps({"dataframe_split": {"columns": ["num", "length", "seed"], "data": [[2, 6, 3]]}})
        req = urllib.request.Request(f"http://127.0.0.1:{serve_port}/invocations", data=body.encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            rows = pd.DataFrame(json.loads(resp.read())["predictions"])
        assert len(rows) == 2 * 6 and rows.sequence.nunique() == 2
        assert np.isfinite(rows[[f"feature_{k}" for k in range(5)]].to_numpy()).all()
    finally:
        if served is not None:
            stop(served)
        stop(server)
