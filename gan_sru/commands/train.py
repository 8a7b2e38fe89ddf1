"""`gan-sru train` / `python train.py`: train a run from a config (or profile it with --profile).

Under an MPI launcher (`mpirun -n N gan-sru train ...`, `srun ...`) every process is one rank of a
data-parallel run (gan_sru/train/distributed.py); without one, nothing about a run changes.

A new run records data.path as an absolute path, so its config resumes from any folder. `--resume` with
`--config RUN/config.yaml` continues that run folder wherever it now is; its data must match the fingerprint
the run recorded (sampling.json): a moved copy is taken with `--data NEW_PATH`, changed data is refused unless
`--force-data`. A run refused before its first checkpoint leaves no run folder behind.
"""
import os
import shutil

from gan_sru.train.launch import start_ranks


def main(args):
    from gan_sru.train import distributed

    comm, cfg = start_ranks(args)
    with distributed.guard(comm):
        if args.profile:
            from gan_sru.commands.profile import run_profile
            return run_profile(cfg, args, comm=comm)
        cfg = with_run_data(cfg, args)
        from gan_sru.train import Trainer

        target = os.path.join(cfg.run_dir, cfg.name)
        created = not os.path.exists(target)
        trainer = Trainer(cfg, resume=args.resume, progress=not args.no_progress, comm=comm,
                          track=getattr(args, "track", False))
        try:
            trainer.train()
        except BaseException:
            if created and comm.is_root and not trainer.run.list_checkpoints():
                shutil.rmtree(target, ignore_errors=True)  # a refused run leaves nothing
            raise
        if trainer.tracker.enabled and not trainer.stop_signal:  # a complete tracked run: its generator too
            from gan_sru.mlflow_model import log_run_model

            log_run_model(trainer.run.path)
    # stopped by SIGINT/SIGTERM: a checkpoint was saved, but the run is not finished (130 / 143)
    if trainer.stop_signal:  # the checkpoint is saved; a further Ctrl-C while the process exits is absorbed
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return 128 + trainer.stop_signal
    return 0


def with_run_data(cfg, args):
    """The config with the run folder and its data found: for --resume of a RUN/config.yaml, the folder that
    holds it; data.path absolute (relative paths are relative to the current folder), checked against the
    run's fingerprint on --resume (gan_sru.train.run_folder.locate_data)."""
    import copy

    from gan_sru import DataError
    from gan_sru.data.summary import read_sampling
    from gan_sru.train.run_folder import locate_data

    cfg = copy.deepcopy(cfg)
    here = os.path.dirname(os.path.abspath(args.config or "."))
    if (args.resume and os.path.basename(args.config) == "config.yaml"
            and os.path.isdir(os.path.join(here, "checkpoints"))):
        cfg.run_dir, cfg.name = os.path.dirname(here), os.path.basename(here)
    data, force = getattr(args, "data", None), getattr(args, "force_data", False)
    if cfg.data.source != "file":
        if data is not None and args.resume:
            raise DataError(f"--data {data}: the run's data is built in (data.source: {cfg.data.source}); "
                            "expected no --data")
        return cfg
    if not args.resume:
        data = None  # a new run's --data is its data.path (train/launch.py train_config)
    run_path = os.path.join(cfg.run_dir, cfg.name)
    record = read_sampling(run_path) if args.resume else None
    if record is None or record["data"].get("fingerprint") is None:
        if not args.resume or record is not None:
            cfg.data.path = os.path.abspath(str(cfg.data.path))
        return cfg
    given = os.path.abspath(str(cfg.data.path))
    if data is None and given != record["data"]["path"] and os.path.exists(given):
        try:  # data.path was changed: the same data at a new place resumes, other data is refused
            return locate_data(run_path, cfg, given, force, flag="data.path", force_flag="--force-data")
        except DataError as e:
            raise DataError(f"--resume: the data changed: {e}") from None
    return locate_data(run_path, cfg, data, force)
