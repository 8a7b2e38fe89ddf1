"""An Optuna study's storage, and the trials whose worker process is gone."""
import os
import socket


def open_storage(storage):
    """A journal file path -> JournalStorage; a URL (with ://) -> RDBStorage with a heartbeat."""
    import optuna

    if "://" in storage:
        return optuna.storages.RDBStorage(storage, heartbeat_interval=30, grace_period=120)
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    folder = os.path.dirname(os.path.abspath(storage))
    os.makedirs(folder, exist_ok=True)
    return optuna.storages.JournalStorage(JournalFileBackend(storage, lock_obj=JournalFileOpenLock(storage)))


def process_start(pid):
    """A process's start time in clock ticks since boot (Linux /proc), or None: with the pid it names one process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def alive(pid, started):
    """Whether process `pid` (started at `started` clock ticks, None: unknown) still runs on this machine."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError):
        return True
    return started is None or process_start(pid) in (None, started)


def fail_dead_trials(study, log=print):
    """Mark FAIL the RUNNING trials of this machine whose worker process is gone (journal storage has no
    heartbeat; an RDB storage's heartbeat does this across machines). Returns their numbers."""
    from optuna.trial import TrialState

    failed = []
    host = socket.gethostname()
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        attrs = t.user_attrs
        if attrs.get("host") != host or "pid" not in attrs or alive(attrs["pid"], attrs.get("started")):
            continue
        try:
            study._storage.set_trial_user_attr(t._trial_id, "failed_because",
                                               f"worker process {attrs['pid']} on {host} ended mid-trial")
            study._storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
        except Exception:  # noqa: BLE001  (another worker marked it first)
            continue
        failed.append(t.number)
        log(f"trial {t.number}: its worker (pid {attrs['pid']}) is gone; marked FAIL, the study goes on")
    return failed
