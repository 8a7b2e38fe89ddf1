"""Data-parallel training over MPI: one small communicator interface and its backends.

    comm = start(context="cpu")         # NullCommunicator when no launcher started this process (no MPI import)
    comm.rank, comm.size, comm.is_root  # rank 0 alone writes the run folder
    comm.local_batch(batch_size)        # this rank's share of the global batch; ConfigError unless it divides
    comm.broadcast_variables(vs)        # rank 0's `.d` of every Variable on every rank (one packed buffer)
    comm.broadcast_object(obj)
    means = comm.all_reduce_mean(params, extras)   # ONE packed float32 buffer per call: every param's `.g`
                                                   # and a few scalars (losses, a stop flag), averaged over ranks
    comm.collective(fn, root_only=False)  # fn's error on any rank is raised on every rank (none waits forever)
    comm.check_same(value, what)          # refuse ranks whose `value` differs from rank 0's
    with guard(comm): ...                 # an error on some ranks only: print it, MPI_Abort the whole job

Backends: NullCommunicator (one process), MpiCommunicator (mpi4py, host buffers: CPU contexts) and
NcclCommunicator (train/nccl.py; CUDA contexts: the gradients through nnabla's
MultiProcessDataParallelCommunicator over NCCL, the rest through mpi4py). train/replicas.py keeps the ranks'
copies of the model identical. The launcher's world is read in train/world.py, batches are sharded and buffers
packed in train/sharding.py, and train/rank_errors.py turns an error on some ranks into the end of the job;
their names are importable from here too.
"""
import hashlib
import json
import os
import pickle
import sys
import time

import numpy as np

from gan_sru import ConfigError, GanSruError

from .rank_errors import EVERY_RANK, guard, leave_unless_root, on_every_rank
from .sharding import pack, shard_arrays, shard_slice, unpack
from .world import LAUNCHERS, Launch, detect_launch, world_size_comment

__all__ = ["DEFAULT_PEER_TIMEOUT_S", "EVERY_RANK", "LAUNCHERS", "PEER_TIMEOUT_STATUS", "Launch", "MpiCommunicator",
           "NullCommunicator", "detect_launch", "differences", "guard", "leave_unless_root", "on_every_rank", "pack",
           "shard_arrays", "shard_slice", "unpack", "world_size_comment"]

# train.peer_timeout's default, in seconds, and the exit status of every rank when a peer does not answer in time
DEFAULT_PEER_TIMEOUT_S = 300.0
PEER_TIMEOUT_STATUS = 124


def _flat(value, prefix=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flat(v, f"{prefix}{k}.")
    else:
        yield prefix.rstrip("."), value


def differences(a, b, limit=4):
    """'key: A vs B' for the first keys where the nested dicts `a` and `b` differ."""
    fa, fb = dict(_flat(a)), dict(_flat(b))
    keys = sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
    return [f"{k or 'value'}: {fa.get(k)!r} vs {fb.get(k)!r}" for k in keys[:limit]]


# ---------------------------------------------------------------- backends

class NullCommunicator:
    """One process: every collective is the identity. The interface that the MPI backends implement."""
    backend, rank, size, local_rank, device_id, launch = "none", 0, 1, 0, None, None

    def __init__(self):
        self.bytes_reduced = 0  # float32 bytes all-reduced so far (for `gan-sru profile` and the benchmark)
        self.reductions = 0
        # profiling only: a barrier before each all-reduce, its seconds summed here (waiting for the slowest
        # rank), so that the all-reduce's own time is the transfer alone
        self.measure_wait, self.wait_s = False, 0.0
        # longest wait for the other ranks at the all-reduce and barriers (train.peer_timeout, set by start_ranks)
        self.timeout_s = DEFAULT_PEER_TIMEOUT_S

    @property
    def is_root(self):
        return self.rank == 0

    def local_batch(self, batch_size):
        s = shard_slice(batch_size, self.rank, self.size)
        return s.stop - s.start

    def describe(self):
        return "world_size: 1 (one process)"

    def broadcast_variables(self, variables):
        pass

    def broadcast_object(self, obj):
        return obj

    def all_reduce_mean(self, params, extras=()):
        return [float(x) for x in extras]

    def collective(self, fn, root_only=False):
        return fn()

    def agree_first(self, value):
        """The first rank's non-None `value`, on every rank."""
        return value

    def check_same(self, value, what, error=ConfigError, hint=""):
        pass

    def barrier(self):
        pass

    def abort(self, status):
        os._exit(status)


def _portable(error):
    """`error` if it survives pickling (to travel to the other ranks), else a RuntimeError that says what it was."""
    if error is None:
        return None
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


class MpiCommunicator(NullCommunicator):
    """MPI_COMM_WORLD through mpi4py; the gradients travel in one float32 host buffer per call (MPI_SUM, then
    divided by the world size)."""
    backend = "mpi4py"

    def __init__(self, MPI, launch):
        super().__init__()
        self.MPI, self.world, self.launch = MPI, MPI.COMM_WORLD, launch
        self.rank, self.size = self.world.Get_rank(), self.world.Get_size()
        node = self.world.Split_type(MPI.COMM_TYPE_SHARED)
        self.local_rank = node.Get_rank()
        node.Free()
        self._buffers = {}

    def describe(self):
        return (f"world_size: {self.size} ({self.launch.launcher if self.launch else 'MPI'}, {self.backend} backend; "
                f"rank 0 writes the run folder)")

    def _buffer(self, n):
        if n not in self._buffers:
            self._buffers[n] = np.empty(n, np.float32)
        return self._buffers[n]

    def broadcast_variables(self, variables):
        buf = self._buffer(sum(v.size for v in variables))
        if self.is_root:
            pack([v.d for v in variables], (), buf)
        self.world.Bcast(buf, root=0)
        if not self.is_root:
            for v, view in zip(variables, unpack(buf, [v.shape for v in variables])[0]):
                v.d = view

    def broadcast_object(self, obj):
        return self.world.bcast(obj, root=0)

    def all_reduce_mean(self, params, extras=()):
        # nnabla hands out its host arrays by reference: the means are written back through these views
        grads = [p.grad.get_data("rw") for p in params]
        buf = self._buffer(sum(g.size for g in grads) + len(extras))
        pack(grads, extras, buf)
        self._wait()
        self._complete(self.world.Iallreduce(self.MPI.IN_PLACE, buf, op=self.MPI.SUM), "the gradient all-reduce")
        buf /= self.size
        views, means = unpack(buf, [g.shape for g in grads])
        for g, view in zip(grads, views):
            np.copyto(g, view)
        self.bytes_reduced += buf.nbytes
        self.reductions += 1
        return means

    def collective(self, fn, root_only=False):
        result = error = None
        if self.is_root or not root_only:
            try:
                result = fn()
            except Exception as e:  # any failure: the other ranks must hear of it, or they wait forever
                error = e
        if root_only:
            sent, result = self.world.bcast((_portable(error), result if error is None else None), root=0)
            failed = [(0, sent)] if sent is not None else []
        else:
            failed = [(r, e) for r, e in enumerate(self.world.allgather(_portable(error))) if e is not None]
        if failed:
            rank, e = failed[0]
            if rank == self.rank:
                raise on_every_rank(error)
            if isinstance(e, GanSruError) and rank != 0:
                e = type(e)(f"on rank {rank} of {self.size}: {e}")
            raise on_every_rank(e)
        return result

    def agree_first(self, value):
        return next((v for v in self.world.allgather(value) if v is not None), None)

    def check_same(self, value, what, error=ConfigError, hint=""):
        digest = hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()
        digests = self.world.allgather(digest)
        odd = [r for r, d in enumerate(digests) if d != digests[0]]
        if not odd:
            return
        values = self.world.gather(value, root=0)  # every rank knows `odd`: all take this branch
        detail = "; ".join(differences(values[0], values[odd[0]])) if self.is_root else None
        detail = self.world.bcast(detail, root=0)
        raise on_every_rank(error(
            f"the {self.size} ranks hold different {what}: rank{'s' if len(odd) > 1 else ''} "
            f"{', '.join(map(str, odd))} differ{'' if len(odd) > 1 else 's'} from rank 0"
            f"{f' (rank 0 vs rank {odd[0]}: {detail})' if detail else ''}{hint}"))

    def barrier(self):
        self._complete(self.world.Ibarrier(), "a barrier")

    def _complete(self, request, what):
        """Wait for a non-blocking collective for at most `timeout_s` (polling, sleeps up to 10 ms). A rank that
        stopped (SIGSTOP, a hung file system) or died leaves the others waiting forever in a blocking call;
        here every waiting rank prints the error and MPI_Abort ends the whole job with PEER_TIMEOUT_STATUS,
        before any checkpoint of the unfinished step is written."""
        deadline = time.monotonic() + self.timeout_s
        pause = 0.0
        while not request.Test():
            if time.monotonic() > deadline:
                print(f"error: rank {self.rank} of {self.size}: no answer from the other ranks at {what} within "
                      f"train.peer_timeout ({self.timeout_s:g} s): a rank stalled or died; ending every rank "
                      f"(MPI_Abort, exit status {PEER_TIMEOUT_STATUS}); nothing of this step was saved, resume "
                      "from the last checkpoint", file=sys.stderr, flush=True)
                self.abort(PEER_TIMEOUT_STATUS)
            time.sleep(pause)
            pause = min(max(2 * pause, 1e-4), 0.01)

    def _wait(self):
        if self.measure_wait:
            t0 = time.perf_counter()
            self.barrier()
            self.wait_s += time.perf_counter() - t0

    def abort(self, status):
        self.world.Abort(status)
