"""The MLflow tracker: one MLflow run written from a background thread, and its no-op stand-in.

Every call goes through one background thread, so a slow or absent server never slows or stops training:
the first failure warns once (on stderr) and the tracker then drops its calls; checkpoints are untouched.
gan_sru/tracking.py decides when a run is tracked and where its store is.
"""
import json
import logging
import os
import queue
import sys
import tempfile
import threading
import time

EXPERIMENT_TAGS = {"mlflow.experimentKind": "custom_model_development"}  # the UI opens on its training-runs view
MODEL_PATH = "generator"  # the pyfunc model's folder among the run's artifacts: runs:/<run_id>/generator
CLOSE_WAIT_S = 120.0  # at most this long at close for queued calls to reach the store
MAX_PARAM_CHARS = 6000  # MLflow's limit on a param's value
# MLflow's HTTP client retries 7 times with a doubling backoff (minutes); a tracker gives up sooner (the user's
# own settings of these variables win)
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                 "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}


class NullTracker:
    """Tracking off: every call does nothing."""

    enabled = False
    run_id = None

    def log_params(self, params):
        pass

    def log_metrics(self, metrics, step=None):
        pass

    def log_artifacts(self, paths, folder=None):
        pass

    def log_model(self, run_path, save):
        pass

    def set_tags(self, tags):
        pass

    def add_losses(self, step, d_loss, g_loss, every):
        pass

    def rate(self, step):
        return 0.0

    def close(self, status="FINISHED"):
        pass


NULL = NullTracker()


def artifact_root(uri):
    """For a local SQLite store, the artifacts folder beside its file (file URI); otherwise None (the
    server's or store's own default)."""
    if uri.startswith("sqlite:///"):
        return "file://" + os.path.join(os.path.dirname(os.path.abspath(uri[len("sqlite:///"):])), "mlartifacts")
    return None


class Tracker:
    """One MLflow run, written from a background thread. See the module docstring for what it logs.

    `Tracker(uri, experiment, run_name, run_id=None, tags=None, reopen=True)` creates the experiment when
    needed and starts a new run, or continues `run_id`. Calls return at once; `close()` waits (bounded) for the queue.
    """

    enabled = True

    def __init__(self, uri, experiment, run_name, run_id=None, tags=None, reopen=True):
        self.uri, self.experiment, self.run_id = uri, experiment, run_id
        self.reopen = reopen  # a continued run_id is set RUNNING again (training); False: status untouched
        self.failed = False
        self._closed = False
        self._queue = queue.Queue()
        self._last = None  # (step, time) of the last rate() call
        self._losses = []  # (d_loss, g_loss) since the last logged step
        self._logged_params = set()
        self._client = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._work, name="gan-sru-tracking", daemon=True)
        self._thread.start()
        self._submit(lambda: self._open(run_name, run_id, tags or {}))

    # ------------------------------------------------------------ the worker thread

    def _work(self):
        while True:
            call = self._queue.get()
            if call is None:
                self._queue.task_done()
                return
            if not self.failed:
                try:
                    call()
                except Exception as e:  # noqa: BLE001  (tracking never stops training)
                    self.failed = True
                    self._ready.set()
                    print(f"warning: MLflow tracking at {self.uri} failed ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}); training goes on without tracking",
                          file=sys.stderr, flush=True)
            self._queue.task_done()

    def _submit(self, call):
        if not self._closed and not self.failed:
            self._queue.put(call)

    def _open(self, run_name, run_id, tags):
        for attempt in range(3):  # processes creating one new SQLite store at once: one migrates, the rest retry
            try:
                return self._open_once(run_name, run_id, tags)
            except Exception:  # noqa: BLE001
                if attempt == 2:
                    raise
                time.sleep(1.0 + attempt)

    def _open_once(self, run_name, run_id, tags):
        from mlflow.tracking import MlflowClient

        os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
        for name, value in HTTP_DEFAULTS.items():  # a server that is down fails in seconds, not minutes
            os.environ.setdefault(name, value)
        logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)  # "Creating initial ... tables"
        self._client = MlflowClient(tracking_uri=self.uri)
        if run_id is not None:
            run = self._client.get_run(run_id)
            self._logged_params = set(run.data.params)
            if self.reopen:
                self._client.update_run(run_id, status="RUNNING")
        else:
            exp = self._client.get_experiment_by_name(self.experiment)
            if exp is None:
                try:
                    exp_id = self._client.create_experiment(self.experiment, artifact_location=artifact_root(self.uri),
                                                              tags=EXPERIMENT_TAGS)
                except Exception:  # another process created it first
                    exp = self._client.get_experiment_by_name(self.experiment)
                    if exp is None:
                        raise
                    exp_id = exp.experiment_id
            else:
                exp_id = exp.experiment_id
            self.run_id = self._client.create_run(exp_id, run_name=run_name, tags=tags).info.run_id
        self._ready.set()

    # ------------------------------------------------------------ the calls

    def wait_ready(self, timeout=30.0):
        """The MLflow run id once the run exists (None when opening failed or took longer than `timeout`)."""
        self._ready.wait(timeout)
        return None if self.failed else self.run_id

    def log_params(self, params):
        """{key: value}: logged as text (None as "null"); on a resumed run only keys not logged before."""
        def call():
            from mlflow.entities import Param

            items = [Param(k, _param_text(v)) for k, v in params.items() if k not in self._logged_params]
            for i in range(0, len(items), 100):  # MLflow takes at most 100 params per batch
                self._client.log_batch(self.run_id, params=items[i:i + 100])
            self._logged_params.update(p.key for p in items)
        self._submit(call)

    def log_metrics(self, metrics, step=None):
        """{name: number} at `step`; None and non-finite values are left out."""
        import math

        stamp = int(time.time() * 1000)
        clean = {k: float(v) for k, v in metrics.items() if v is not None and math.isfinite(float(v))}

        def call():
            from mlflow.entities import Metric

            self._client.log_batch(self.run_id, metrics=[Metric(k, v, stamp, int(step or 0))
                                                         for k, v in clean.items()])
        if clean:
            self._submit(call)

    def log_artifacts(self, paths, folder=None):
        """Files or folders (those that exist when the call runs) into the run's artifacts, under `folder`."""
        def call():
            for p in paths:
                if os.path.isdir(p):
                    self._client.log_artifacts(self.run_id, p, _join(folder, os.path.basename(p.rstrip("/"))))
                elif os.path.isfile(p):
                    self._client.log_artifact(self.run_id, p, folder)
        self._submit(call)

    def log_model(self, run_path, save):
        """The run's generator as a model at runs:/<run_id>/generator: save(run_path, folder) writes the model
        folder (gan_sru.mlflow_model.save_pyfunc), which is logged as that artifact folder."""
        def call():
            with tempfile.TemporaryDirectory(prefix="gan_sru_model_") as tmp:
                path = os.path.join(tmp, MODEL_PATH)
                save(run_path, path)
                self._client.log_artifacts(self.run_id, path, MODEL_PATH)
            self._client.set_tag(self.run_id, "gan_sru.model_uri", f"runs:/{self.run_id}/{MODEL_PATH}")
        self._submit(call)

    def set_tags(self, tags):
        def call():
            for k, v in tags.items():
                self._client.set_tag(self.run_id, k, str(v))
        self._submit(call)

    def add_losses(self, step, d_loss, g_loss, every):
        """One step's losses; every `every`-th step, their means over the interval (as nnabla's MonitorSeries
        writes them) and the step rate are logged as d_loss, g_loss, steps_per_s."""
        self._losses.append((d_loss, g_loss))
        if step % every == 0:
            d, g = (sum(v) / len(v) for v in zip(*self._losses))
            self._losses = []
            self.log_metrics({"d_loss": d, "g_loss": g, "steps_per_s": self.rate(step)}, step)

    def rate(self, step):
        """Steps per second since the previous call (0.0 at the first)."""
        now = time.perf_counter()
        last, self._last = self._last, (step, now)
        if last is None or now <= last[1] or step <= last[0]:
            return 0.0
        return (step - last[0]) / (now - last[1])

    def close(self, status="FINISHED"):
        """Set the run's status (FINISHED, KILLED, FAILED; None leaves it) and wait up to CLOSE_WAIT_S for
        the queued calls. Idempotent."""
        if self._closed:
            return
        if status is not None:
            self._submit(lambda: self._client.set_terminated(self.run_id, status=status))
        self._closed = True
        self._queue.put(None)
        self._thread.join(CLOSE_WAIT_S)
        if self._thread.is_alive():
            print(f"warning: MLflow tracking at {self.uri} did not finish within {CLOSE_WAIT_S:.0f} s; "
                  "some of the run's records may be missing", file=sys.stderr, flush=True)


def _join(folder, name):
    return name if not folder else f"{folder}/{name}"


def _param_text(value):
    text = "null" if value is None else json.dumps(value) if isinstance(value, (list, dict)) else str(value)
    return text if len(text) <= MAX_PARAM_CHARS else text[:MAX_PARAM_CHARS - 3] + "..."


def prepare_store(uri, experiment):
    """Create the store's tables and the experiment now (in one process, before parallel workers open it)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    if client.get_experiment_by_name(experiment) is None:
        client.create_experiment(experiment, artifact_location=artifact_root(uri), tags=EXPERIMENT_TAGS)
