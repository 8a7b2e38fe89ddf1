"""A pytest plugin (named in tests/conftest.py): prints the fuzz outcome counts after the session and, with
GAN_SRU_FUZZ_COUNTS=FILE, writes them as JSON. Not a conftest.py: `from conftest import ...` in the other
tests must find tests/conftest.py."""
import json
import os
import platform
import resource
import sys
import time

import hypothesis
from fuzz_outcomes import CAMPAIGN, COUNTS, KNOWN_BUGS, MULTILINE, OTHERS, OUTCOMES

STARTED = time.time()
# In `make fuzz` (its own process), a memory bug found by fuzzing ends in a MemoryError, not in the OOM killer
ADDRESS_SPACE = 8 * 2**30
if CAMPAIGN and resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, resource.RLIM_INFINITY))


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                        platform.processor())
    except OSError:
        return platform.processor()


def pytest_terminal_summary(terminalreporter):
    if not COUNTS:
        return
    totals = {o: sum(c[o] for c in COUNTS.values()) for o in OUTCOMES}
    summary = ", ".join(f"{o} {n}" for o, n in totals.items())
    terminalreporter.write_line(f"fuzz inputs: {sum(totals.values())} ({summary})")
    for key in OTHERS:
        terminalreporter.write_line(f"  other: {key}" + (f" (known: {KNOWN_BUGS[key]})" if key in KNOWN_BUGS else ""))
    for family in sorted(COUNTS):
        terminalreporter.write_line(f"  {family}: " + ", ".join(f"{o} {COUNTS[family][o]}" for o in OUTCOMES)
                                    + (f" (multi-line messages {COUNTS[family]['multi-line message']})"
                                       if COUNTS[family]["multi-line message"] else ""))


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("GAN_SRU_FUZZ_COUNTS")
    if not path or not COUNTS:
        return
    families = {f: {o: COUNTS[f][o] for o in (*OUTCOMES, "multi-line message")} for f in sorted(COUNTS)}
    totals = {o: sum(c[o] for c in families.values()) for o in OUTCOMES}
    inputs = sum(totals.values())
    totals["multi-line message"] = sum(c["multi-line message"] for c in families.values())
    report = {
        "command": "make fuzz" if CAMPAIGN else "pytest tests/fuzz",
        "profile": "campaign" if CAMPAIGN else "ci",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(time.time() - STARTED, 1),
        "cpu": _cpu(),
        "python": sys.version.split()[0],
        "hypothesis": hypothesis.__version__,
        "pytest_exit_status": int(exitstatus),
        "inputs": inputs,
        "totals": totals,
        "families": families,
        "multi_line_examples": dict(MULTILINE),
        "other_kinds": {key: {"known_bug": KNOWN_BUGS.get(key), "first_input": text} for key, text in OTHERS.items()},
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
