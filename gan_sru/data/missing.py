"""Missing values (empty cells, NA, NaN): refuse them, leave out what holds them, or fill them in.

    error        the default: a DataError that says how many values are missing and where the first is
    drop         leave out every sequence that holds a missing value; when data.window cuts sequences into
                 windows (a wide file), leave out only the windows that hold one (see drop_windows)
    interpolate  fill linearly in time within each sequence (by step when there is no time column);
                 values before the first or after the last known one take the nearest known value
"""
from typing import NamedTuple

import numpy as np

from gan_sru import DataError

POLICIES = ("error", "drop", "interpolate")


class Missing(NamedTuple):
    """raw: the RawData after the policy (with drop and windows: still holding NaN, see drop_windows);
    report: {'values', 'sequences', 'policy', 'first', 'action'} for the data summary."""
    raw: object
    report: dict


def apply_missing(raw, policy, source, windows=False):
    """Apply `policy` to a RawData. windows=True with 'drop': keep the NaN for drop_windows after the cut."""
    if policy not in POLICIES:
        raise ValueError(f"data.missing: got {policy!r}; expected one of {POLICIES}")
    counts = [int(np.isnan(a).sum()) for a in raw.arrays]
    total = sum(counts)
    holding = [i for i, n in enumerate(counts) if n]
    report = {"values": total, "sequences": len(holding), "policy": policy, "first": None,
              "action": "nothing to do: no value is missing"}
    if not total:
        return Missing(raw, report)
    i = holding[0]
    step, feature = np.argwhere(np.isnan(raw.arrays[i]))[0]
    place = raw.places[i]
    report["first"] = f"{place.file}: {place.at(step, feature)}"
    where = (f"{total} missing value{'s' if total > 1 else ''} in {len(holding)} of {len(raw)} "
             f"sequence{'s' if len(raw) > 1 else ''}; the first at {place.at(step, feature)}")
    if policy == "error":
        raise DataError(f"{place.file}: {where}. data.missing is 'error': set data.missing: interpolate (fill "
                        "linearly within each sequence) or drop (leave out the sequences, or windows, that hold "
                        "any), or fill them in the data")
    if policy == "interpolate":
        arrays = list(raw.arrays)
        for i in holding:
            arrays[i] = interpolate(raw.arrays[i], None if raw.times is None else raw.times[i], raw.places[i])
        report["action"] = f"interpolated {total} value{'s' if total > 1 else ''} in {len(holding)} sequence" + \
            ("s" if len(holding) > 1 else "")
        return Missing(type(raw)(arrays, raw.places, raw.times, raw.feature_names, raw.info, raw.extras), report)
    if windows:
        report["action"] = "windows that hold a missing value are left out (see windows)"
        return Missing(raw, report)
    keep = [i for i, n in enumerate(counts) if not n]
    if not keep:
        raise DataError(f"{source}: every sequence holds a missing value ({where}); data.missing: drop leaves "
                        "no sequence; use data.missing: interpolate, or data.window to keep the windows without "
                        "missing values")
    report["action"] = f"dropped {len(holding)} of {len(raw)} sequences ({total} missing values)"
    return Missing(raw.subset(keep), report)


def interpolate(a, times, place):
    """(L, C) float64 with NaN -> filled copy: linear in `times` ((L,) increasing, or the step index when None),
    the nearest known value before the first and after the last known one. A column with no known value
    in the sequence is a DataError naming the sequence and column."""
    a = a.copy()
    x = np.arange(len(a), dtype=np.float64) if times is None else np.asarray(times, np.float64)
    for j in np.flatnonzero(np.isnan(a).any(axis=0)):
        gap = np.isnan(a[:, j])
        if gap.all():
            raise DataError(f"{place.file}: {place.label()}: every value of feature {_name(place, j)} is missing; "
                            "nothing to interpolate from (data.missing: drop leaves such sequences out)")
        a[gap, j] = np.interp(x[gap], x[~gap], a[~gap, j])  # np.interp holds the end values beyond the ends
    return a


def drop_windows(windows, sources, raw, report, window):
    """Leave out the windows (list of (L_w, C) float64) that hold NaN. sources[k]: index in `raw` of the
    sequence window k was cut from. Returns the indices of the kept windows; a DataError when none is left."""
    keep = [k for k, w in enumerate(windows) if not np.isnan(w).any()]
    dropped = len(windows) - len(keep)
    if not keep:
        longest = max(_longest_run(a) for a in raw.arrays)
        place = raw.places[sources[0]] if len(sources) else raw.places[0]
        raise DataError(f"{place.file}: every one of the {len(windows)} windows of {window} steps holds a missing "
                        f"value; data.missing: drop leaves none (the longest stretch without missing values is "
                        f"{longest} steps, first missing value at {report['first']}); use a data.window of at "
                        f"most {longest}, or data.missing: interpolate")
    if dropped:
        report["action"] = f"dropped {dropped} of {len(windows)} windows ({report['values']} missing values)"
    return keep


def _longest_run(a):
    """Longest stretch of consecutive steps of (L, C) `a` without NaN."""
    ok = ~np.isnan(a).any(axis=1)
    best = run = 0
    for v in ok:
        run = run + 1 if v else 0
        best = max(best, run)
    return best


def _name(place, j):
    columns = getattr(place, "columns", None)
    return repr(columns[j]) if columns is not None else str(j)
