"""Durations in config values (`train.budget: 15m`) and in the progress bar (time left), and the budget of
a run across its resumes."""
import re
import time

from gan_sru import ConfigError

DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(text, what="train.budget"):
    """'90s', '15m', '1h30m', '2.5m' -> seconds (float > 0); a ConfigError names `what` and the text otherwise."""
    text = str(text).strip()
    ok = re.fullmatch(r"(?:[0-9]+(?:\.[0-9]+)?[hms])+", text, flags=re.ASCII)
    seconds = sum(float(n) * DURATION_UNITS[u] for n, u in re.findall(r"([0-9.]+)([hms])", text)) if ok else 0
    if not 0 < seconds < float("inf"):
        raise ConfigError(f"{what} {text!r}: expected a duration such as 90s, 15m, 1h or 1h30m")
    return seconds


def clock_text(seconds):
    """Seconds as the progress bar's time left: 1h02m, 3m05s, 42s."""
    s = int(round(seconds))
    h, m = divmod(s, 3600)
    m, s = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class Budget:
    """train.budget across a run's resumes: the seconds allowed (None: no budget), those spent before this
    process started training (`before`, from the checkpoint's "elapsed_s") and those since, measured by
    `clock`: wall seconds; a benchmark sets time.process_time, so that runs sharing a loaded machine get the
    same work."""

    def __init__(self, text=None, clock=time.perf_counter):
        self.seconds, self.before, self.clock, self._t0 = None, 0.0, clock, None
        self.allow(text)

    def allow(self, text):
        """Set the seconds allowed from a duration text ('15m'); None: no budget."""
        self.seconds = None if text is None else parse_duration(text, "train.budget")

    def start(self):
        self._t0 = self.clock()

    def elapsed(self):
        """Seconds since `start` (0 before it)."""
        return 0.0 if self._t0 is None else self.clock() - self._t0

    def spent(self):
        """`before` + `elapsed()`: what the budget is measured against."""
        return self.before + self.elapsed()

    def exhausted(self):
        return self.seconds is not None and self.spent() >= self.seconds

    def left_text(self):
        """The time left as the progress bar shows it (1h02m, 3m05s, 42s)."""
        return clock_text(max(self.seconds - self.spent(), 0.0))
