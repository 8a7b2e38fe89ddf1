"""Durations in config values (`train.budget: 15m`) and in the progress bar (time left)."""
import re

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
