"""A run folder and its checkpoints: atomic writes, a lock that dies with its process, safe loading.

    runs/<name>/
        config.yaml          the resolved config (written atomically at every start, after a resume's restore)
        run.lock             flock'ed by the training process while it runs
        checkpoints/step_00000250.npz   G and D parameters, both solvers' states, step, scaler, buckets
        monitors/            nnabla monitor series (losses, time)
        samples/             real-vs-generated pictures during training

A checkpoint is one .npz written to a temporary file in the same folder, flushed and fsynced, then
renamed over its final name, so a file named step_*.npz is always complete; a process killed mid-write
leaves at most a stray temporary file, which the next process to take the lock removes.
"""
import errno
import fcntl
import glob
import json
import os
import re
import warnings
import zipfile

import numpy as np

from gan_sru import CheckpointError, RunFolderError
from gan_sru.files import atomic_write, write_npz

CHECKPOINT_RE = re.compile(r"^step_(\d{8})\.npz$")
# temporaries of files.atomic_write (NAME.PID.tmp), and of versions before it (.NAME.tmp-PID)
TEMPORARY_RE = re.compile(r"\.tmp-\d+$|\.\d+\.tmp$")


class RunFolder:
    """The folder of one run. `lock()` refuses a second training process on the same folder."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.checkpoints = os.path.join(self.path, "checkpoints")
        self.monitors = os.path.join(self.path, "monitors")
        self.samples = os.path.join(self.path, "samples")
        self.config_path = os.path.join(self.path, "config.yaml")
        self._lock_fd = None

    def create(self):
        for p in (self.path, self.checkpoints, self.monitors, self.samples):
            try:
                os.makedirs(p, exist_ok=True)
            except OSError as e:
                raise RunFolderError(f"cannot create run folder {p}: {e.strerror}") from e
        if not os.access(self.path, os.W_OK):
            raise RunFolderError(f"run folder {self.path} is not writable")
        return self

    def lock(self):
        """Take an exclusive flock on run.lock; the kernel drops it when the process dies, even by SIGKILL.

        Then remove the temporaries a killed holder left behind (only the holder may: before the lock
        they may belong to a live writer)."""
        path = os.path.join(self.path, "run.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES):
                holder = ""
                try:
                    with open(path) as f:
                        holder = f.read().strip()
                except OSError:
                    pass
                raise RunFolderError(
                    f"run folder {self.path} is in use by another training process"
                    f"{' (pid ' + holder + ')' if holder else ''}; wait for it to finish or stop it, "
                    "or train into another run name (--set name=...)") from e
            raise
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        except OSError as e:  # e.g. a full disk
            os.close(fd)  # and with it the lock
            raise RunFolderError(f"cannot write {path}: {e.strerror}") from e
        self._lock_fd = fd
        self.remove_stray_temporaries()
        return self

    def unlock(self):
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def remove_stray_temporaries(self):
        for folder in (self.path, self.checkpoints):
            if os.path.isdir(folder):
                for name in os.listdir(folder):
                    if TEMPORARY_RE.search(name):
                        try:
                            os.remove(os.path.join(folder, name))
                        except OSError:
                            pass

    def checkpoint_path(self, step):
        return os.path.join(self.checkpoints, f"step_{step:08d}.npz")

    def list_checkpoints(self):
        """[(step, path)] sorted by step, complete files only (temporaries never match the name)."""
        if not os.path.isdir(self.checkpoints):
            return []
        found = []
        for name in os.listdir(self.checkpoints):
            m = CHECKPOINT_RE.match(name)
            if m:
                found.append((int(m.group(1)), os.path.join(self.checkpoints, name)))
        return sorted(found)

    def latest_checkpoint(self):
        """The newest checkpoint that loads, as (step, Checkpoint), or None. Unreadable ones are skipped
        with a warning (they can only come from outside, e.g. a disk error or a hand-copied file)."""
        for _step, path in reversed(self.list_checkpoints()):
            try:
                ckpt = Checkpoint.load(path, check_name=False)
            except CheckpointError as e:
                warnings.warn(f"skipping unreadable checkpoint: {e}", stacklevel=2)
                continue
            return check_step_name(path, ckpt), ckpt
        return None

    def prune(self, keep, protect=()):
        """Remove all but the newest `keep` checkpoints and the steps in `protect` (the selected one)."""
        for step, path in self.list_checkpoints()[:-keep]:
            if step not in protect:
                os.remove(path)

    def monitor(self, cls, name, monitor, interval, kind, start_step):
        """An nnabla monitor writing MONITORS/NAME.KIND.txt that keeps the file's lines up to `start_step` (nnabla's
        monitors empty their file when created; lines after the last checkpoint are dropped, they are redone)."""
        path = os.path.join(self.monitors, f"{name}.{kind}.txt")
        kept = []
        if start_step > 0 and os.path.exists(path):
            with open(path) as f:
                kept = [line for line in f if line.split() and line.split()[0].isdigit()
                        and int(line.split()[0]) <= start_step]
        m = cls(name, monitor, interval=interval, verbose=False)
        if kept:
            with open(path, "a") as f:
                f.writelines(kept)
        m.flush_at = start_step
        return m


class Checkpoint:
    """Parameters, solver states and metadata of one training step, as one .npz.

    params: {name: ndarray}; solvers: {solver name: {param name: {"t": int, state name: ndarray}}};
    meta: JSON-able dict (step, scaler, buckets, config, ...).
    """

    def __init__(self, params, solvers, meta):
        self.params, self.solvers, self.meta = params, solvers, meta

    @classmethod
    def capture(cls, params, solvers, meta):
        """From live nnabla parameters {name: Variable} and solvers {name: Solver}."""
        p = {k: v.d.copy() for k, v in params.items()}
        s = {}
        for sname, solver in solvers.items():
            s[sname] = {}
            for pname, st in solver.get_states().items():
                s[sname][pname] = {"t": int(st.t), **{k: v.d.copy() for k, v in st.pstate.items()}}
        return cls(p, s, meta)

    def save(self, path):
        arrays = {f"param/{k}": v for k, v in self.params.items()}
        for sname, states in self.solvers.items():
            for pname, st in states.items():
                for k, v in st.items():
                    arrays[f"solver/{sname}/{pname}/{k}"] = np.asarray(v)
        arrays["meta"] = np.frombuffer(json.dumps(self.meta).encode(), np.uint8)
        try:
            atomic_write(path, lambda f: write_npz(f, arrays))
        except OSError as e:
            raise CheckpointError(
                f"could not write checkpoint {path}: {e.strerror or e}; "
                "the previous checkpoints in that folder are untouched") from e

    def first_non_finite(self):
        """Where the first NaN or inf is, e.g. "parameter G/x" or "G solver state var of G/x"; None if nowhere."""
        for name, v in self.params.items():
            if not np.isfinite(v).all():
                return f"parameter {name}"
        for sname, states in self.solvers.items():
            for pname, st in states.items():
                for k, v in st.items():
                    if k != "t" and not np.isfinite(v).all():
                        return f"{sname} solver state {k} of {pname}"
        return None

    @classmethod
    def load(cls, path, check_name=True):
        """Read a checkpoint; anything that is not a complete gan_sru checkpoint is a CheckpointError, and so
        is a file named step_N.npz whose contents are another step (check_name)."""
        try:
            with np.load(path, allow_pickle=False) as z:
                files = {k: z[k] for k in z.files}
        except AttributeError:  # np.load gave a plain array: an .npy, not an .npz
            raise CheckpointError(f"{path}: not a gan_sru checkpoint (a single array, not an .npz)") from None
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
            raise CheckpointError(f"{path}: not a readable checkpoint ({e})") from e
        if "meta" not in files:
            raise CheckpointError(f"{path}: not a gan_sru checkpoint (no 'meta' entry)")
        params, solvers = {}, {}
        try:
            meta = json.loads(files.pop("meta").tobytes().decode())
            if not isinstance(meta, dict):
                raise ValueError(f"meta is a JSON {type(meta).__name__}, not an object")
            for key, v in files.items():
                kind, rest = key.split("/", 1)
                if kind == "param":
                    params[rest] = v
                elif kind == "solver":
                    sname, rest = rest.split("/", 1)
                    pname, state = rest.rsplit("/", 1)
                    solvers.setdefault(sname, {}).setdefault(pname, {})[state] = int(v) if state == "t" else v
                else:
                    raise ValueError(f"unknown entry {key!r}")
        except ValueError as e:  # also json's JSONDecodeError, UnicodeDecodeError, a key without '/'
            raise CheckpointError(f"{path}: not a gan_sru checkpoint ({e})") from None
        ckpt = cls(params, solvers, meta)
        if check_name:
            check_step_name(path, ckpt)
        return ckpt

    def restore(self, params, solvers, source="checkpoint"):
        """Copy into live parameters and solvers; refuses a checkpoint made with other sizes or names."""
        missing = sorted(set(params) - set(self.params))
        extra = sorted(set(self.params) - set(params))
        if missing or extra:
            raise CheckpointError(
                f"{source} does not fit this config: parameters missing from the checkpoint {missing[:5]}, "
                f"parameters the model lacks {extra[:5]}")
        for name, var in params.items():
            if tuple(self.params[name].shape) != tuple(var.shape):
                raise CheckpointError(
                    f"{source} does not fit this config: parameter {name} has shape "
                    f"{tuple(self.params[name].shape)} in the checkpoint but {tuple(var.shape)} in the model")
        live_states = {sname: solver.get_states() for sname, solver in solvers.items()}
        for sname, states in live_states.items():  # check everything before changing anything
            saved = self.solvers.get(sname, {})
            for pname, st in states.items():
                lacking = sorted({"t", *st.pstate} - set(saved.get(pname, {})))
                if lacking:
                    raise CheckpointError(
                        f"{source} has no {sname} solver state {lacking} for parameter {pname}")
        for name, var in params.items():
            var.d = self.params[name]
        for sname, states in live_states.items():
            saved = self.solvers[sname]
            for pname, st in states.items():
                st.t = saved[pname]["t"]
                for k, v in st.pstate.items():
                    v.d = saved[pname][k]
            solvers[sname].set_states(states)


def check_step_name(path, ckpt):
    """The checkpoint's step, from its contents; a CheckpointError when its file name says another step (a
    renamed file must never resume or sample as the step its name claims)."""
    step = ckpt.meta.get("step")
    if not isinstance(step, int) or isinstance(step, bool):
        raise CheckpointError(f"{path}: not a gan_sru checkpoint (its 'step' is {step!r}, expected an integer)")
    m = CHECKPOINT_RE.match(os.path.basename(path))
    if m and int(m.group(1)) != step:
        raise CheckpointError(f"{path}: the file is named step {int(m.group(1))} but holds step {step}; "
                              f"rename it back to {os.path.basename(RunFolder('.').checkpoint_path(step))}")
    return step


def locate_data(run_path, cfg, data=None, force=False, flag="--data", force_flag="--force-data"):
    """The run's config with data.path naming its training data as an absolute path, for the commands that need
    the data (evaluate, --resume). A run folder records its data (sampling.json: absolute path, the path inside
    the run folder for a model saved with its data, fingerprint). Tried in order: `data` (when given), the copy
    inside the run folder, the recorded path; each must match the fingerprint unless `force`. A run without the
    record (older runs) re-reads data.path as its config has it. DataError, in one line, when the data is gone
    or changed; `flag` / `force_flag` name the options that fix it (CLI flags, or the API's arguments)."""
    import copy

    from gan_sru import DataError
    from gan_sru.data.summary import fingerprint, read_sampling

    record = read_sampling(run_path)
    cfg = copy.deepcopy(cfg)
    if cfg.data.source != "file":
        if data is not None:
            raise DataError(f"{flag} {data}: the run's data is built in (data.source: {cfg.data.source}), made "
                            f"again from its config; expected no {flag}")
        return cfg
    if record is None or record["data"].get("fingerprint") is None:
        if data is not None:
            cfg.data.path = os.path.abspath(data)
        return cfg
    recorded = record["data"]
    expected = recorded["fingerprint"]

    def same(path):
        try:
            return fingerprint(path)["sha256"] == expected["sha256"]
        except (OSError, DataError):
            return False

    if data is not None:
        path = os.path.abspath(data)
        from gan_sru.data.readers import data_files

        try:
            exists = all(os.path.isfile(f) for f in data_files(path))
        except DataError:
            exists = False
        if not exists:
            raise DataError(f"{flag} {data}: no such data file")
        if not force and not same(path):
            raise DataError(f"{flag} {data} is not the data {run_path} was trained on ({_described(expected)}, "
                            f"recorded at {recorded['path']}); pass {force_flag} to use it anyway")
        cfg.data.path = path
        return cfg
    candidates = [os.path.join(os.path.abspath(run_path), recorded["in_run"])] if recorded.get("in_run") else []
    candidates.append(recorded["path"])
    changed = None
    for path in candidates:
        if os.path.exists(path) or (glob.has_magic(path) and glob.glob(path)):
            if same(path) or force:
                cfg.data.path = path
                return cfg
            changed = changed or path
    if changed:
        raise DataError(f"the data of {run_path} has changed since training: {changed} no longer matches its "
                        f"fingerprint ({_described(expected)}); pass {flag} PATH of the original data, or "
                        f"{force_flag} to use the changed file")
    raise DataError(f"the data of {run_path} is gone: {recorded['path']} does not exist; pass {flag} NEW_PATH "
                    "(checked against the run's fingerprint)")


def _described(fp):
    count = len(fp["files"])
    return f"{count} file{'s' if count != 1 else ''}, {fp['size']} bytes, sha256 {fp['sha256'][:12]}"
