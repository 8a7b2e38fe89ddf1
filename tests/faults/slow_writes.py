"""Runs a script with every atomic write slowed down:

    python tests/faults/slow_writes.py SECONDS SCRIPT ARGS...


The fault tests kill a trainer in the middle of a checkpoint write; this stretches the moment between
the temporary file being complete and its rename (gan_sru.files.atomic_write renames NAME.PID.tmp over
NAME with os.replace) so that a kill can land there. The production write path has no test hook.
"""
import os
import runpy
import sys
import time

delay = float(sys.argv[1])
_replace = os.replace


def slow_replace(src, dst, *args, **kwargs):
    if str(src).endswith(".tmp"):
        time.sleep(delay)
    return _replace(src, dst, *args, **kwargs)


os.replace = slow_replace
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
