import gan_sru  # noqa: F401, I001
import gan_sru.models  # noqa: F401, I001  (fills the network registry, as the entry points do)
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager

import nnabla as nn
import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

# tests/fuzz/fuzz_report.py reports the fuzz tests' outcome counts; a plugin, since a second conftest.py
# would shadow this one for `from conftest import ...`
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
pytest_plugins = ["fuzz_report"]


@pytest.fixture(autouse=True)
def fresh_nnabla_state():
    """Every test starts on the CPU context with no parameters and a fixed seed."""
    nn.clear_parameters()
    nn.set_default_context(nn.Context(["cpu:float"], "CpuCachedArray", "0"))
    nn.set_auto_forward(False)
    np.random.seed(0)
    yield
    nn.clear_parameters()


def max_rel_err(actual, expected):
    """Normwise relative error: max |a - e| / max |e| (elementwise ratios are ill-posed near zero)."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    scale = max(np.abs(expected).max(), 1e-12)
    return float(np.abs(actual - expected).max() / scale)


def numeric_grad(f, array, index, eps=1e-6):
    """Central finite difference of the scalar f() in array[index] (the array is changed in place and restored)."""
    old = array[index]
    array[index] = old + eps
    up = f()
    array[index] = old - eps
    down = f()
    array[index] = old
    return (up - down) / (2 * eps)


def batch_mean(value_of, batches):
    """The mean over `batches` calls of value_of() (a scalar nnabla Variable, forwarded here) and its standard
    error: what a term averages to over independent batches."""
    vals = []
    for _ in range(batches):
        v = value_of()
        v.forward()
        vals.append(float(v.d))
    return np.mean(vals), np.std(vals) / np.sqrt(batches)


def fresh_generator(gcfg, L, B, C, seed=0, impl="auto"):
    """An inference generator graph (L, B, C) with new parameters drawn from `seed`, every step valid."""
    from gan_sru.networks import generator_graph

    nn.clear_parameters()
    nn.random.prng = np.random.RandomState(seed)
    g = generator_graph(gcfg, L, B, C, L, train=False, impl=impl)
    g.mask.d = 1.0
    return g


def generator_output(g, noise):
    """The graph's samples for a dict of noise arrays."""
    for k, v in noise.items():
        g.noise[k].d = v
    g.fake.forward(clear_buffer=True)
    return g.fake.d.copy()


@contextmanager
def unwritable(folder):
    """Make `folder` refuse new files: chmod for ordinary users; root ignores modes, so `chattr +i`."""
    folder = str(folder)
    if os.geteuid() != 0:
        os.chmod(folder, 0o500)
        undo = ["chmod", "700", folder]
    else:
        if not shutil.which("chattr"):
            pytest.skip("running as root without chattr: cannot make a folder unwritable")
        r = subprocess.run(["chattr", "+i", folder], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"chattr +i is not supported here: {r.stderr.strip()}")
        undo = ["chattr", "-i", folder]
    try:
        yield
    finally:
        subprocess.run(undo, check=True)


@pytest.fixture
def tmpfs(tmp_path):
    """tmpfs(size) -> an empty tmpfs folder of that size, unmounted afterwards (needs root)."""
    mounted = []

    def mount(size):
        folder = tmp_path / f"tmpfs{len(mounted)}"
        folder.mkdir()
        if not shutil.which("mount"):
            pytest.skip("no mount command")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", str(folder)], check=True)


def mutate_yaml(draw, text, bits, scalars, max_edits, max_cut, ops=("delete", "insert", "value", "swap", "indent")):
    """For Hypothesis strategies: `text` (YAML) with 1..max_edits random edits: delete up to max_cut characters,
    insert drawn `bits`, replace a value with a drawn scalar, swap two lines, or re-indent one."""
    from hypothesis import strategies as st

    for _ in range(draw(st.integers(1, max_edits))):
        op = draw(st.sampled_from(list(ops)))
        i = draw(st.integers(0, len(text)))
        if op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, max_cut)):]
        elif op == "insert":
            text = text[:i] + "".join(draw(st.lists(bits, min_size=1, max_size=4))) + text[i:]
        else:
            lines = text.split("\n")
            k = draw(st.integers(0, len(lines) - 1))
            if op == "value" and ": " in lines[k]:
                lines[k] = lines[k].split(": ", 1)[0] + ": " + draw(scalars)
            elif op == "swap":
                j = draw(st.integers(0, len(lines) - 1))
                lines[k], lines[j] = lines[j], lines[k]
            else:
                lines[k] = " " * draw(st.integers(0, 5)) + lines[k].lstrip()
            text = "\n".join(lines)
    return text


# `gan-sru score`'s file inputs (--real, --holdout, --fake): small files in data units, good or with one defect
SCORE_FORMATS = (".csv", ".npy", ".parquet")
SCORE_DEFECTS = ("good", "wrong columns", "wrong width", "empty file", "header only", "nan", "inf", "text cell",
                 "one sequence", "one step", "missing file", "not data")


def write_score_file(path, fmt, defect, seed=0):
    """Write one score input at `path` + fmt and return its path: 6 sequences of 8 steps and features (a, b)
    (an (N, L, C) array for .npy), in data units, with `defect` (one of SCORE_DEFECTS) built in."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n, steps, names = 6, 8, ["a", "b"]
    if defect == "one sequence":
        n = 1
    elif defect == "one step":
        steps = 1
    elif defect == "wrong columns":
        names = ["a", "c"]
    elif defect == "wrong width":
        names = ["a", "b", "c"]
    x = rng.normal(10.0, 3.0, size=(n, steps, len(names)))
    if defect in ("nan", "inf"):
        x[n // 2, steps // 2, 0] = np.nan if defect == "nan" else np.inf
    path = f"{path}{fmt}"
    if defect == "missing file":
        return path
    if defect in ("empty file", "not data"):
        with open(path, "wb") as f:
            f.write(b"" if defect == "empty file" else b"\x00\xffnot a data file\n" * 3)
        return path
    if defect == "header only":
        x = x[:0]
    if fmt == ".npy":
        np.save(path, x)
        return path
    frame = pd.DataFrame({"id": np.repeat(np.arange(len(x)), steps), "time": np.tile(np.arange(steps), len(x)),
                          **{name: x[..., k].ravel() for k, name in enumerate(names)}})
    if defect == "text cell":
        frame["a"] = frame["a"].astype(object)
        frame.loc[len(frame) // 2, "a"] = "x"
    if fmt == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.astype({"a": str} if defect == "text cell" else {}).to_parquet(path, index=False)
    return path


def score_inputs(draw, folder):
    """For Hypothesis strategies: --real, --holdout (now and then left out) and --fake options naming files
    written into `folder`, mostly of one format, each good or with a drawn defect (write_score_file)."""
    from hypothesis import strategies as st

    fmt = draw(st.sampled_from(SCORE_FORMATS))
    argv = []
    for option in ("--real", "--holdout", "--fake"):
        if option == "--holdout" and not draw(st.integers(0, 3)):
            continue
        kind = fmt if draw(st.integers(0, 5)) else draw(st.sampled_from(SCORE_FORMATS))
        defect = draw(st.sampled_from(("good",) * len(SCORE_DEFECTS) + SCORE_DEFECTS))
        argv += [option, write_score_file(os.path.join(str(folder), option[2:]), kind, defect,
                                          draw(st.integers(0, 3)))]
    return argv
