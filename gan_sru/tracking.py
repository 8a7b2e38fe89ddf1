"""Experiment tracking in MLflow: a run's params, metrics, pictures and generator, opt-in.

Tracking is on when `gan-sru train --track` is given or the config sets `tracking.uri`. The store is, in
order: `tracking.uri`, MLflow's own `MLFLOW_TRACKING_URI`, else a SQLite store beside the run folders,
`sqlite:///<run_dir>/mlruns.db`, with the artifacts in `<run_dir>/mlartifacts/` (MLflow's `./mlruns` file
store is deprecated and refused unless MLFLOW_ALLOW_FILE_STORE is set, so the local default is SQLite).

What one MLflow run holds (one per run folder; its id is kept in RUN/tracking.json, so `--resume` continues
the same MLflow run and `gan-sru evaluate` adds its scores to it):
  params     the resolved config, flattened (data.source, train.g_lr, ...)
  metrics    d_loss, g_loss (means over each train.log_every steps, as the monitors) and steps_per_s;
             selection_score at every scored checkpoint; eval_<score> and eval_<score>_floor from each
             `gan-sru evaluate`
  artifacts  samples/ (the sample pictures), losses.png, the data summary, config.yaml, selection.json,
             evaluation/ (report.md, metrics.json, pictures)
  generator  an MLflow pyfunc model: predict(DataFrame {num, length, seed}) -> DataFrame of samples
             (gan_sru/mlflow_model.py; logged by `train` and `tune` once the run is complete)

The Tracker (gan_sru/tracker.py) sends every call through one background thread, so a slow or absent server
never slows or stops training. Under mpirun only rank 0 opens a tracker; the others hold NULL.
"""
import json
import os
import sys

from gan_sru.tracker import MODEL_PATH, NULL, NullTracker, Tracker, prepare_store

__all__ = ["DEFAULT_EXPERIMENT", "FILE", "MODEL_PATH", "NULL", "NullTracker", "Tracker", "default_uri",
           "evaluation_metrics", "finish_training", "is_enabled", "log_evaluation", "open_run", "prepare_store",
           "read_record", "resolve_uri", "set_status"]

FILE = "tracking.json"  # in the run folder: {"uri", "experiment", "run_id"}
RECORD_MAX_BYTES = 64 * 1024  # a longer tracking.json is not one this code wrote
DEFAULT_EXPERIMENT = "gan-sru"


def default_uri(run_dir):
    """The local store for runs under `run_dir`: sqlite:///<abs run_dir>/mlruns.db."""
    return "sqlite:///" + os.path.join(os.path.abspath(run_dir), "mlruns.db")


def resolve_uri(cfg):
    """tracking.uri, else $MLFLOW_TRACKING_URI, else the SQLite store under cfg.run_dir."""
    return cfg.tracking.uri or os.environ.get("MLFLOW_TRACKING_URI") or default_uri(cfg.run_dir)


def is_enabled(cfg, track=False):
    """On with --track (track truthy) or a tracking.uri in the config."""
    return bool(track) or cfg.tracking.uri is not None


def read_record(run_path):
    """RUN/tracking.json as {"uri", "experiment", "run_id"} (strings), or None when the run was never tracked.
    An unreadable or malformed file is None too, with a warning: tracking never stops a run."""
    path = os.path.join(run_path, FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            record = json.loads(f.read(RECORD_MAX_BYTES + 1)[:RECORD_MAX_BYTES + 1].decode("utf-8"))
        if not (isinstance(record, dict) and all(isinstance(record.get(k), str) and record[k]
                                                  for k in ("uri", "experiment", "run_id"))):
            raise ValueError("expected an object with non-empty text uri, experiment and run_id")
        return {k: record[k] for k in ("uri", "experiment", "run_id")}
    except (OSError, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        print(f"warning: {path} is not a tracking record ({e}); the run's MLflow run is not continued",
              file=sys.stderr, flush=True)
        return None


def open_run(cfg, run_path, track=False, resume=False):
    """The tracker of a training run: a resumed run that was tracked continues the MLflow run recorded in
    RUN/tracking.json (same store, with or without --track); otherwise NULL when tracking is off, else a
    Tracker of a new MLflow run, recorded there.

    track: False, True, or a dict of tags for the MLflow run (gan-sru tune tags its trials this way).
    """
    record = read_record(run_path) if resume else None
    if record is None and not is_enabled(cfg, track):
        return NULL
    experiment = cfg.tracking.experiment
    if record is not None:
        uri, experiment, run_id = record["uri"], record["experiment"], record["run_id"]
    else:
        uri, run_id = resolve_uri(cfg), None
    tags = {"gan_sru.run_folder": os.path.abspath(run_path), **(track if isinstance(track, dict) else {})}
    tracker = Tracker(uri, experiment, cfg.name, run_id=run_id, tags={k: str(v) for k, v in tags.items()})
    if record is None and tracker.wait_ready() is not None:
        from gan_sru.files import atomic_write_text

        atomic_write_text(os.path.join(run_path, FILE),
                          json.dumps({"uri": uri, "experiment": experiment, "run_id": tracker.run_id}, indent=2)
                          + "\n")
    return tracker


def finish_training(tracker, run_path, status="FINISHED"):
    """The end of a complete run: its loss curves, summary, config and selection, then FINISHED (the sample
    pictures were logged as they were drawn; the generator is logged by gan_sru.mlflow_model.log_run_model,
    above the training loop). status: KILLED for a run stopped by its abort_fn."""
    from gan_sru.data.summary import JSON_NAME, TEXT_NAME

    tracker.log_artifacts([os.path.join(run_path, n) for n in ("losses.png", JSON_NAME, TEXT_NAME, "config.yaml",
                                                               "selection.json", "selection.png")])
    tracker.close(status)


def set_status(run_path, status):
    """Set a tracked run's MLflow status (FINISHED, KILLED, FAILED); nothing for an untracked run."""
    record = read_record(run_path)
    if record is not None:
        tracker = Tracker(record["uri"], record["experiment"], None, run_id=record["run_id"], reopen=False)
        tracker.close(status)


def log_evaluation(result):
    """`gan-sru evaluate`'s scores (generated and held-out floor) and its folder into the run's MLflow run,
    when the run was tracked (RUN/tracking.json); otherwise nothing. Returns the tracker's run id or None."""
    record = read_record(result["run"])
    if record is None:
        return None
    tracker = Tracker(record["uri"], record["experiment"], None, run_id=record["run_id"], reopen=False)
    tracker.log_metrics(evaluation_metrics(result), result["checkpoint_step"])
    tracker.log_artifacts([result["out"]])
    tracker.close(status=None)
    return None if tracker.failed else record["run_id"]


def evaluation_metrics(result):
    """evaluate's result -> {eval_<score>: value, eval_<score>_floor: value} (means; std as *_std)."""
    out = {}
    for which, suffix in (("generated", ""), ("holdout", "_floor")):
        scores = result.get(which) or {}
        for name, value in scores.items():
            if isinstance(value, dict):
                for part, key in (("mean", ""), ("mae", ""), ("std", "_std")):
                    if isinstance(value.get(part), (int, float)):
                        out[f"eval_{name}{key}{suffix}"] = value[part]
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out[f"eval_{name}{suffix}"] = value
    return out
