"""The fuzz campaign's bookkeeping: Hypothesis settings (a bounded CI size, a large `make fuzz` size), the
stored example database, and the outcome of every generated input.

Outcomes: "ran" (the call returned and its result kept its promises), "clear error" (the project's own error:
a GanSruError such as DataError or ConfigError, whose message should be one line: those that span lines are
also counted as "multi-line message" and listed in the JSON; for the CLI, exit status 2 with a one-line `error: ...` or
argparse's usage error; for the Python API also a TypeError / ValueError raised by gan_sru itself, naming
the argument), "other" (anything else: a bug). An "other" fails the test, so Hypothesis shrinks it and
stores it in the database, and the next run replays it first.

GAN_SRU_FUZZ=campaign selects the large size; GAN_SRU_FUZZ_COUNTS=FILE writes the counts there as JSON
at the end of the session (tests/fuzz/conftest.py).
"""
import contextlib
import io
import os
import traceback
from collections import Counter, defaultdict

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from gan_sru import GanSruError

HERE = os.path.dirname(os.path.abspath(__file__))
DATABASE = DirectoryBasedExampleDatabase(os.path.join(HERE, "examples"))
CAMPAIGN = os.environ.get("GAN_SRU_FUZZ") == "campaign"
COUNTS = defaultdict(Counter)  # family -> Counter of outcomes
MULTILINE = defaultdict(list)  # family -> clear errors whose message spans lines (first few), a wart to report
OUTCOMES = ("ran", "clear error", "other")


def fuzz_settings(ci, campaign):
    """Hypothesis settings for a family: `ci` examples in the bounded run, `campaign` in `make fuzz`."""
    return settings(max_examples=campaign if CAMPAIGN else ci, deadline=None, database=DATABASE,
                    suppress_health_check=list(HealthCheck), print_blob=True)


class Other(AssertionError):
    """An input that ended neither in a result nor in one of the project's own errors."""


# Bugs found by the campaign in code outside the readers, not fixed yet: signature -> what is wrong. Their
# inputs count as "other" and are listed in the JSON, but do not fail the test; delete an entry with its fix.
KNOWN_BUGS = {}  # signature -> why it is tolerated; empty: every 'other' fails
OTHERS = {}  # signature -> the first input's traceback, for the JSON


def signature(error):
    """'<type> in gan_sru/<file>:<function>' of the innermost frame inside the package (else the innermost)."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f"{os.sep}gan_sru{os.sep}" in f.filename] or frames
    where = f"gan_sru/{ours[-1].filename.split(f'{os.sep}gan_sru{os.sep}')[-1]}:{ours[-1].name}" if ours else "?"
    return f"{type(error).__name__} in {where}"


def record(family, outcome, detail="", error=None):
    COUNTS[family][outcome] += 1
    if outcome == "other":
        key = signature(error) if error is not None else f"{family}: {detail[:80]}"
        OTHERS.setdefault(key, detail[-1500:])
        if key not in KNOWN_BUGS:
            raise Other(f"{family}: {detail}")


def ours(error, family):
    """A GanSruError with a message; one that spans lines is noted in MULTILINE."""
    if not isinstance(error, GanSruError) or not str(error).strip():
        return False
    if "\n" in str(error).strip():
        COUNTS[family]["multi-line message"] += 1
        if len(MULTILINE[family]) < 3:
            MULTILINE[family].append(str(error)[:500])
    return True


def raised_by_gan_sru(error):
    """A TypeError / ValueError whose innermost frame is in the gan_sru package (a deliberate check)."""
    frames = traceback.extract_tb(error.__traceback__)
    return (isinstance(error, (TypeError, ValueError)) and bool(frames)
            and f"{os.sep}gan_sru{os.sep}" in frames[-1].filename and bool(str(error).strip()))


def call(family, function, *args, check=None, python_errors=False, **kwargs):
    """Run function(*args, **kwargs) and record its outcome; `check(result)` asserts what success promises.
    python_errors: a TypeError / ValueError raised by gan_sru itself is a clear error too (API arguments).
    Returns the result, or None after a clear error."""
    try:
        result = function(*args, **kwargs)
    except Exception as e:  # classified below: ours is a clear error, anything else is recorded as a bug
        if ours(e, family) or (python_errors and raised_by_gan_sru(e)):
            record(family, "clear error")
            return None
        record(family, "other", "".join(traceback.format_exception(e))[-3000:], e)
        return None
    if check is not None:
        try:
            check(result)
        except AssertionError as e:
            record(family, "other", f"a result that breaks its promise: {e}")
    record(family, "ran")
    return result


def cli(family, main, argv):
    """gan_sru.commands.main.main(argv) in this process; exit 0 ran, 2 with one `error:` line (or argparse's
    usage error) a clear error. Returns the exit status."""
    import nnabla as nn

    nn.clear_parameters()  # each command runs in a fresh process in real use: no parameters left from the last
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:
                code = e.code
    except Exception as e:  # a traceback escaped the command: always a bug
        record(family, "other", f"argv {argv!r}: " + "".join(traceback.format_exception(e))[-3000:], e)
        return None
    lines = err.getvalue().strip().splitlines()
    if code == 0:
        record(family, "ran")
    elif code == 2 and lines and (lines[-1].startswith("error: ") or ": error: " in lines[-1]) \
            and "Traceback" not in err.getvalue():
        record(family, "clear error")
    else:
        record(family, "other", f"argv {argv!r}: exit {code!r}, stderr {err.getvalue()[-2000:]!r}")
    return code
