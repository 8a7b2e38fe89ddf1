"""What every picture shares: exact pixel sizes on an Agg canvas (matplotlib's object API, never pyplot), the
real/generated colours, atomic PNG writes, and common value limits."""
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gan_sru.files import atomic_write

DPI = 100
REAL_COLOR = "tab:blue"
FAKE_COLOR = "tab:orange"


def figure(size):
    """A figure of exactly ``size`` = (width, height) pixels at ``DPI``."""
    w, h = size
    fig = Figure(figsize=(w / DPI, h / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def save(fig, path):
    """Write ``fig`` as a PNG at ``path`` (atomically) and return the path."""
    return atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=DPI), make_dirs=True)


def value_limits(seq_sets):
    """Common y-limits for several sets of sequences, with a small margin."""
    vals = [s for seqs in seq_sets for s in seqs if s.size]
    lo = min((float(np.min(s)) for s in vals), default=0.0)
    hi = max((float(np.max(s)) for s in vals), default=1.0)
    pad = 0.05 * (hi - lo) if hi > lo else 0.5
    return lo - pad, hi + pad
