"""The trained generator as an MLflow pyfunc model: predict(DataFrame {num, length, seed}) -> samples.

Built on the run folder (a copy inside the model, sampled through the Python API's SequenceGAN), with a
signature and an input example, so `mlflow.pyfunc.load_model("runs:/<run_id>/generator").predict(...)` and
`mlflow models serve -m runs:/<run_id>/generator --env-manager local` generate samples wherever gan-sru is
installed. `log_run_model` adds it to a tracked run (RUN/tracking.json); gan_sru/tracking.py logs the rest.
"""
import contextlib
import logging
import os
import tempfile
import warnings

from gan_sru import tracking


def log_run_model(run_path):
    """Log the run's generator into its MLflow run when the run is tracked (RUN/tracking.json); otherwise
    nothing. Returns the model URI, or None (untracked, or tracking failed: a warning was printed)."""
    record = tracking.read_record(run_path)
    if record is None:
        return None
    tracker = tracking.Tracker(record["uri"], record["experiment"], None, run_id=record["run_id"], reopen=False)
    tracker.log_model(run_path, save_pyfunc)
    tracker.close(status=None)
    return None if tracker.failed else f"runs:/{record['run_id']}/{tracking.MODEL_PATH}"


def _pyfunc_class():
    import mlflow.pyfunc
    import pandas as pd

    class GanSruGenerator(mlflow.pyfunc.PythonModel):
        """A copy of the run folder (artifact "run"); predict samples with the Python API's SequenceGAN."""

        def load_context(self, context):
            from gan_sru.api import SequenceGAN

            self.model = SequenceGAN.load(context.artifacts["run"], progress=False)

        def predict(self, context, model_input: pd.DataFrame, params=None):  # a DataFrame hint: no validation
            return predict_frame(self.model, model_input)

    return GanSruGenerator


INPUT_COLUMNS = ("num", "length", "seed")


def predict_frame(model, frame):
    """Samples for each request row {num, length, seed} (length 0: drawn from the training lengths).

    Returns a long DataFrame: request (the row's index), sequence, step, then the data's columns (a table
    run: its own columns; an array run: feature_0 .. feature_{C-1})."""
    import numpy as np
    import pandas as pd

    missing = [c for c in INPUT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"predict: the input DataFrame lacks column(s) {', '.join(missing)}; expected "
                         f"{', '.join(INPUT_COLUMNS)} (length 0: drawn from the training lengths)")
    parts = []
    for i, row in enumerate(frame.itertuples(index=False)):
        length = int(row.length)
        out = model.sample(int(row.num), seed=int(row.seed), length=length if length > 0 else None)
        if isinstance(out, pd.DataFrame):
            table = out.copy()
            table.insert(0, "request", np.int64(i))
            parts.append(table)
            continue
        for j, seq in enumerate(out):
            seq = np.asarray(seq, dtype=np.float64)
            table = pd.DataFrame(seq, columns=[f"feature_{k}" for k in range(seq.shape[1])])
            table.insert(0, "step", np.arange(len(seq), dtype=np.int64))
            table.insert(0, "sequence", np.int64(j))
            table.insert(0, "request", np.int64(i))
            parts.append(table)
    return pd.concat(parts, ignore_index=True)


@contextlib.contextmanager
def _quiet_mlflow():
    """MLflow's hints while saving a model (integer columns, type hints, cloudpickle, progress bars) hidden."""
    logger = logging.getLogger("mlflow")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def save_pyfunc(run_path, path):
    """Write the run's generator as an MLflow pyfunc model folder at `path` (a copy of the run folder inside,
    a signature inferred from a 2-sequence example). Needs gan-sru installed where it is loaded."""
    import mlflow
    import mlflow.pyfunc
    import nnabla
    import pandas as pd
    from mlflow.models import infer_signature

    from gan_sru.api import SequenceGAN

    with tempfile.TemporaryDirectory(prefix="gan_sru_run_") as tmp, _quiet_mlflow():
        copy = SequenceGAN.load(run_path, progress=False).save(os.path.join(tmp, "run"))
        example = pd.DataFrame({"num": [2], "length": [0], "seed": [0]}).astype("int64")
        signature = infer_signature(example, predict_frame(SequenceGAN.load(copy, progress=False), example))
        mlflow.pyfunc.save_model(
            path, python_model=_pyfunc_class()(), artifacts={"run": copy}, signature=signature,
            input_example=example,
            pip_requirements=[f"nnabla=={nnabla.__version__}", f"pandas=={pd.__version__}",
                              f"mlflow-skinny=={mlflow.__version__}"])
    return path
