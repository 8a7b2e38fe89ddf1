"""Starting the data-parallel world of this process: `start()` picks the backend (train/distributed.py's
NullCommunicator without a launcher, MpiCommunicator for CPU contexts, train/nccl.py's NcclCommunicator for
CUDA contexts). Apart from distributed.py so that the backends do not import each other."""
import os
import re

from gan_sru import GanSruError
from gan_sru.config import load_config
from gan_sru.context import set_context

from .distributed import MpiCommunicator, NullCommunicator, detect_launch, guard, leave_unless_root
from .nccl import NcclCommunicator


def start(context="cpu", type_config="float", env=None):
    """The communicator of this process: NullCommunicator without a launcher (or a world of one), else an MPI
    backend. A launcher without a working backend is an error, never N processes training N copies alone."""
    launch = detect_launch(env)
    if launch is None or launch.size == 1:
        return NullCommunicator()
    try:
        return _start(launch, context, type_config)
    except GanSruError:
        leave_unless_root(launch)  # every rank fails alike here, with no working MPI to agree over
        raise


def _start(launch, context, type_config):
    where = f"{launch.launcher} started this process ({launch.variable})"
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise GanSruError(
            f"{where}, but mpi4py is not installed ({e}): install it, built against that launcher's MPI "
            "(pip install -e '.[mpi]'); without it every process would train the same model alone") from None
    if context in ("cuda", "cudnn"):
        comm = NcclCommunicator(MPI, launch, context, type_config)
    else:
        comm = MpiCommunicator(MPI, launch)
    if launch.size is not None and comm.size != launch.size:
        raise GanSruError(
            f"{where}, but mpi4py's MPI sees a world of {comm.size} process(es), not {launch.size}: mpi4py uses "
            f"another MPI ({MPI.Get_library_version().splitlines()[0].strip()}) than the launcher; start the job "
            "with the mpirun of the MPI that mpi4py uses, or install mpi4py built against the launcher's MPI")
    return comm


def train_config(args):
    """The config of `gan-sru train`: --config (or the defaults when only --data is given), then what --data
    and --window stand for on a new run (data.path, data.window; the run named after the file), then --set.
    With --resume, --data is the run's data at a new place (commands/train.py), not an override."""
    from gan_sru import ConfigError
    from gan_sru.config import resolve_config
    from gan_sru.config.load import given_tree

    config, data, window = args.config, getattr(args, "data", None), getattr(args, "window", None)
    resume = getattr(args, "resume", False)
    if config is None and (data is None or resume):
        raise ConfigError("gan-sru train: expected --config FILE, or --data FILE to train on a data file with the "
                          "recipe's choices" + ("; --resume takes the run's --config RUN/config.yaml" if resume
                                                else ""))
    raw = {}
    if data is not None and not resume:
        raw["data"] = {"source": "file", "path": str(data)}
        if config is None:
            stem = os.path.basename(str(data).rstrip("/\\")).split(".")[0]
            raw["name"] = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._-") or "data"
    if window is not None:
        raw.setdefault("data", {})["window"] = window
    if config is None:
        return resolve_config(raw, "--data", args.overrides)
    given = given_tree(load_config(config))  # the file's keys: the rest stays the recipe's
    for section, values in raw.items():
        given[section] = dict(given.get(section) or {}, **values) if isinstance(values, dict) else values
    return resolve_config(given, config, args.overrides)


def start_ranks(args):
    """The communicator (NullCommunicator without a launcher), the config loaded on every rank and checked to
    be the same everywhere, and the nnabla context. Returns (comm, cfg); from the config on, an error on any
    rank is an error on all of them (`distributed.guard` around the caller's work ends the job otherwise)."""
    comm = start(args.context, args.type_config)  # its errors happen alike on every rank
    if comm.device_id is not None:  # one GPU per rank: the communicator picked this rank's
        args.device_id = comm.device_id
    with guard(comm):
        cfg = comm.collective(lambda: train_config(args))
        comm.check_same({"config": cfg.model_dump(), "resume": getattr(args, "resume", False), "context": args.context,
                         "type_config": args.type_config}, "resolved configs",
                        hint=f"; start every rank with the same command line and config file (mpirun -n "
                             f"{comm.size} gan-sru train --config C ...)")
        from .duration import parse_duration

        comm.timeout_s = parse_duration(cfg.train.peer_timeout, "train.peer_timeout")
        comm.local_batch(cfg.train.batch_size)  # refuses a global batch the ranks cannot share evenly
        comm.collective(lambda: set_context(args))
    return comm, cfg
