"""A run folder copied to a new place, with its config (and each checkpoint's saved config) pointing at the
copy: sampling, evaluate and --resume read the copy alone."""
import copy
import os
import re
import shutil

from gan_sru import RunFolderError
from gan_sru.config import SCHEMA, dump_config, load_config


def copy_run(source, path, where="copy_run"):
    """Copy run folder `source` to `path` (absolute), a new or empty folder; returns `path`. A failed copy (a full
    disk) leaves nothing at `path`, nor a partial copy beside it. where: the caller named in errors."""
    from gan_sru.train.run_folder import Checkpoint

    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise RunFolderError(f"{where}: {path} already exists; expected a new folder")
    partial = f"{path}.{os.getpid()}.partial"
    try:
        shutil.copytree(source, partial, ignore=shutil.ignore_patterns("run.lock", "*.tmp", "*.partial"))
        cfg = load_config(os.path.join(partial, "config.yaml"), removed="drop")  # a copy to sample from
        relocated = relocate(cfg, source, path)
        dump_config(relocated, os.path.join(partial, "config.yaml"))
        checkpoints = os.path.join(partial, "checkpoints")
        for name in sorted(os.listdir(checkpoints)):
            ckpt = Checkpoint.load(os.path.join(checkpoints, name))
            ckpt.meta["config"] = relocate(ckpt.meta["config"], source, path)
            ckpt.save(os.path.join(checkpoints, name))
        if os.path.isdir(path):
            os.rmdir(path)
        os.replace(partial, path)
    except BaseException as e:
        shutil.rmtree(partial, ignore_errors=True)
        if isinstance(e, OSError):
            # shutil.Error lists (source, destination, reason) per file that failed: the first reason
            reason = e.strerror
            if isinstance(e, shutil.Error) and e.args and e.args[0]:
                found = re.match(r"\[Errno \d+\] ([^:]+)", str(e.args[0][0][2]))
                reason = found.group(1) if found else str(e.args[0][0][2])
            raise RunFolderError(f"{where}: cannot write {path}: {reason or e}; nothing was saved") from None
        raise
    return path


def relocate(cfg, old, new):
    """The config with paths inside run folder `old` moved to `new`, and run_dir/name naming `new`."""
    cfg = copy.deepcopy(cfg)
    path = cfg["data"].get("path")
    if path and os.path.abspath(path).startswith(old + os.sep):
        cfg["data"]["path"] = new + os.path.abspath(path)[len(old):]
    name = os.path.basename(new)
    if SCHEMA["name"].allowed.fullmatch(name):
        cfg["run_dir"], cfg["name"] = os.path.dirname(new), name
    return cfg
