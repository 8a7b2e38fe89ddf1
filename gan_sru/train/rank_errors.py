"""Errors of a data-parallel run: one raised alike on every rank is reported once by rank 0; one raised on
some ranks only ends the whole job (MPI_Abort), since the other ranks would wait for it forever."""
import contextlib
import sys
import traceback

from gan_sru import GanSruError

EVERY_RANK = "gan_sru_every_rank"  # attribute of an exception that every rank raises at the same point


def leave_unless_root(launch):
    """For a refusal that every rank of `launch` makes alike with no MPI to agree over: ranks other than 0 leave
    with status 0, and rank 0 goes on to report it. Were they to fail first, the launcher could kill rank 0
    before its error line reached the terminal; the job still fails, with rank 0's status and message."""
    if launch.rank != 0:
        raise SystemExit(0)


def on_every_rank(error):
    """Mark `error` as raised by every rank at the same point: rank 0 reports it, the others exit quietly."""
    setattr(error, EVERY_RANK, True)
    return error


def exit_status(error):
    """The process exit status for `error`: SystemExit's code, 130 for Ctrl-C, 2 for a GanSruError, else 1."""
    if isinstance(error, SystemExit):
        return error.code if isinstance(error.code, int) else 1
    return 130 if isinstance(error, KeyboardInterrupt) else 2 if isinstance(error, GanSruError) else 1


@contextlib.contextmanager
def guard(comm):
    """Errors of a data-parallel run. Raised on every rank alike (`on_every_rank`): rank 0 re-raises it (the
    CLI prints it once), the others exit with the same status, quietly. Raised on some ranks only: printed
    with its rank, then MPI_Abort ends the whole job, because the other ranks would wait for it forever."""
    try:
        yield
    except BaseException as e:
        if comm.size == 1 or (isinstance(e, SystemExit) and not e.code):
            raise
        if getattr(e, EVERY_RANK, False):
            if comm.is_root:
                raise
            raise SystemExit(exit_status(e)) from None
        if not isinstance(e, (GanSruError, KeyboardInterrupt, SystemExit)):
            traceback.print_exc()
        print(f"error: rank {comm.rank} of {comm.size}: {type(e).__name__ if not str(e) else e}; "
              "ending every rank (MPI_Abort)", file=sys.stderr, flush=True)
        comm.abort(exit_status(e))
