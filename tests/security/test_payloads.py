"""Crafted pickle payloads in every file the project reads: none may run.

Each payload, when unpickled, creates a marker file (builtins.open(marker, "w")) or creates it and returns a
real array (the silent kind). Every test feeds one to a reader, a command or the Python API and asserts that
the marker never appears and that the outcome is the project's own error (or a normal run, where the payload
sits in a member nothing reads). test_payloads_are_live proves that the same bytes do run code when loaded
with pickle allowed, so a missing marker means the reader refused them.
"""
import glob
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gan_sru import CheckpointError, ConfigError, DataError, GanSruError, SequenceGAN
from gan_sru.config import load_config
from gan_sru.data import read_sequences
from gan_sru.train.run_folder import Checkpoint

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = dict(steps=2, batch_size=8, generator_hidden_size=8, discriminator_hidden_size=8, checkpoint_every=2,
            sample_every=1000, log_every=2, holdout_fraction=0.25, progress=False)


class OpenMarker:
    """Unpickles to open(marker, 'w'): creates the marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


class SilentArray:
    """Unpickles to a real (3, 2) array after creating the marker: a payload nothing would notice."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        code = f"[open({self.marker!r}, 'w').close(), __import__('numpy').zeros((3, 2))][1]"
        return eval, (code,)


def object_array(marker, silent=False):
    """A 1-D object array holding a payload and a plain sequence, as np.save(allow_pickle=True) stores it."""
    a = np.empty(2, dtype=object)
    a[0] = SilentArray(marker) if silent else OpenMarker(marker)
    a[1] = np.zeros((3, 2))
    return a


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / "PAYLOAD_RAN"
    yield path
    assert not path.exists(), "a payload ran"


def refused(error, call, *args, pattern=None, **kwargs):
    with pytest.raises(error) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert message.strip() and "\n" not in message.strip()
    if pattern:
        assert pattern in message, message
    return message


def test_payloads_are_live(tmp_path):
    """The positive control: the crafted bytes run their code when pickle is allowed."""
    for silent in (False, True):
        marker = tmp_path / f"control{silent}"
        np.save(tmp_path / "c.npy", object_array(marker, silent), allow_pickle=True)
        np.load(tmp_path / "c.npy", allow_pickle=True)
        assert marker.exists()
    marker = tmp_path / "control_pickle"
    pickle.loads(pickle.dumps(OpenMarker(marker)))
    assert marker.exists()


# ---------------------------------------------------------------- data files

@pytest.mark.parametrize("silent", [False, True])
def test_npy_object_array(tmp_path, marker, silent):
    path = tmp_path / "evil.npy"
    np.save(path, object_array(marker, silent), allow_pickle=True)
    refused(DataError, read_sequences, path, pattern="holds Python objects")


@pytest.mark.parametrize("member", ["data", "sequences", "lengths", "arr_0"])
def test_npz_object_members(tmp_path, marker, member):
    path = tmp_path / "evil.npz"
    arrays = {member: object_array(marker, silent=True)}
    if member == "lengths":
        arrays["data"] = np.zeros((2, 3, 2))
    np.savez(path, **arrays)
    refused(DataError, read_sequences, path, pattern=f"array {member!r} holds Python objects")


def test_npz_payload_in_an_unread_member(tmp_path, marker):
    """A member the reader never opens stays unread: the data loads, the payload does not run."""
    path = tmp_path / "evil.npz"
    np.savez(path, data=np.zeros((2, 3, 2)), extra=object_array(marker))
    assert len(read_sequences(path)) == 2


@pytest.mark.parametrize("name", ["evil.npy", "evil.npz", "evil.csv", "evil.csv.gz", "evil.parquet"])
def test_raw_pickle_bytes_under_a_data_name(tmp_path, marker, name):
    """A bare pickle stream named like a data file is not a data file."""
    path = tmp_path / name
    path.write_bytes(pickle.dumps(object_array(marker), protocol=pickle.HIGHEST_PROTOCOL))
    refused(DataError, read_sequences, path)


def test_csv_cells_holding_pickle_text(tmp_path, marker):
    """Pickle bytes (protocol 0, text) in CSV cells are text, never unpickled."""
    payload = pickle.dumps(OpenMarker(marker), protocol=0).decode("latin-1").replace("\n", " ")
    path = tmp_path / "evil.csv"
    pd.DataFrame({"id": ["a", "a"], "time": [0, 1], "v": [payload, payload]}).to_csv(path, index=False)
    refused(DataError, read_sequences, path, pattern="hold text, not numbers")


def test_parquet_pickled_extension_type(tmp_path, marker):
    """Arrow's old Python extension type stored a pickle in the field metadata; it is never unpickled."""
    payload = pickle.dumps(OpenMarker(marker))
    field = pa.field("v", pa.float64(), metadata={b"ARROW:extension:name": b"arrow.py_extension_type",
                                                   b"ARROW:extension:metadata": payload})
    table = pa.table({"id": ["a", "a"], "time": [0, 1], "v": pa.array([1.0, 2.0])})
    table = table.cast(pa.schema([table.schema.field("id"), table.schema.field("time"), field]))
    path = tmp_path / "evil.parquet"
    pq.write_table(table, path)
    try:
        sequences = read_sequences(path)
    except DataError as e:
        assert str(e).strip()
    else:
        assert sequences[0].tolist() == [[1.0], [2.0]]


def test_parquet_pandas_metadata_with_pickle(tmp_path, marker):
    """pandas' own metadata block replaced by a pickle: no code runs; the table reads or is refused."""
    table = pa.table({"id": ["a", "a"], "time": [0, 1], "v": [1.0, 2.0]})
    table = table.replace_schema_metadata({b"pandas": pickle.dumps(OpenMarker(marker))})
    path = tmp_path / "evil.parquet"
    pq.write_table(table, path)
    try:
        read_sequences(path)
    except DataError as e:
        assert str(e).strip()


def test_folder_and_glob_with_a_payload(tmp_path, marker):
    folder = tmp_path / "data"
    folder.mkdir()
    np.save(folder / "a.npy", np.zeros((2, 3, 2)))
    np.save(folder / "b.npy", object_array(marker, silent=True), allow_pickle=True)
    refused(DataError, read_sequences, folder, pattern="b.npy: the array holds Python objects")
    refused(DataError, read_sequences, str(folder / "*.npy"), pattern="holds Python objects")


def test_train_command_on_a_payload(tmp_path, marker):
    """`train.py --set data.path=evil.npy`: exit 2 with one line, no run folder, no payload."""
    path = tmp_path / "evil.npy"
    np.save(path, object_array(marker, silent=True), allow_pickle=True)
    runs = tmp_path / "runs"
    proc = subprocess.run([sys.executable, os.path.join(REPO, "train.py"), "--config",
                           os.path.join(REPO, "configs", "user_data.yaml"), "--set", f"data.path={path}",
                           "--set", f"run_dir={runs}"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "holds Python objects" in proc.stderr and "Traceback" not in proc.stderr
    assert not runs.exists() or not os.listdir(runs)


# ---------------------------------------------------------------- configs

TAGS = ["!!python/object/apply:builtins.open [{m}, w]", "!!python/object/new:builtins.open [{m}, w]",
        "!!python/name:os.system", "!!python/module:os", "!!python/object:__main__.X {{}}"]


@pytest.mark.parametrize("tag", TAGS)
def test_yaml_python_tags(tmp_path, marker, tag):
    value = tag.format(m=str(marker))
    path = tmp_path / "evil.yaml"
    path.write_text(f"name: x\ntrain:\n  steps: {value}\n")
    refused(ConfigError, load_config, path)
    path.write_text(f"{value}\n")
    refused(ConfigError, load_config, path)
    refused(ConfigError, load_config, None, [f"train.steps={value}"])


def test_yaml_alias_bomb(tmp_path):
    """Nine levels of nine aliases (9**9 leaves if copied): refused by type at once, nothing expanded."""
    lines = ["a: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{k}: &l{k} [{', '.join([f'*l{k - 1}'] * 9)}]" for k in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\ntrain:\n  steps: *l8\n")
    refused(ConfigError, load_config, path)
    path.write_text("train:\n  steps: &s [1, 1]\n  batch_size: [*s, *s, *s, *s]\n")
    refused(ConfigError, load_config, path)


# ---------------------------------------------------------------- run folders and checkpoints

@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny model trained on an (N, L, C) array and saved: a run folder with data/training_data.npy."""
    x = np.random.default_rng(0).normal(size=(16, 6, 2))
    model = SequenceGAN(**TINY).fit(x)
    return model.save(str(tmp_path_factory.mktemp("model") / "model"))


def copy_of(trained, tmp_path):
    folder = str(tmp_path / "shared_model")
    shutil.copytree(trained, folder)
    return folder


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "gan_sru", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def clean_outcome(proc):
    """Exit 0, or exit 2 with a one-line error and no traceback."""
    assert proc.returncode in (0, 2), proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:
        assert proc.stderr.strip().splitlines()[-1].startswith("error: ")


def test_run_folder_with_a_pickled_training_data_file(trained, tmp_path, marker):
    """A shared model folder whose data/training_data.npy was replaced by a pickled array: sampling, generate
    and evaluate never run it (they sample from the folder's own record, or refuse the data file)."""
    folder = copy_of(trained, tmp_path)
    data_files = glob.glob(os.path.join(folder, "**", "training_data.npy"), recursive=True)
    assert data_files, os.listdir(folder)
    for path in data_files:
        np.save(path, object_array(marker, silent=True), allow_pickle=True)
    try:
        assert len(SequenceGAN.load(folder, progress=False).sample(3)) == 3
    except GanSruError as e:
        assert str(e).strip()
    clean_outcome(cli("generate", "--run", folder, "--num", "3", "--out", str(tmp_path / "s.csv"), cwd=tmp_path))
    clean_outcome(cli("evaluate", "--run", folder, cwd=tmp_path))


def test_checkpoint_with_an_object_member(trained, tmp_path, marker):
    """Checkpoints are .npz read with allow_pickle=False: an object member is a CheckpointError."""
    folder = copy_of(trained, tmp_path)
    checkpoints = sorted(glob.glob(os.path.join(folder, "checkpoints", "step_*.npz")))
    assert checkpoints
    with np.load(checkpoints[-1], allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    key = next(k for k in members if k.startswith("param/"))
    members[key] = object_array(marker, silent=True)
    for path in checkpoints:
        np.savez(path, **members)
    refused(CheckpointError, Checkpoint.load, checkpoints[-1])
    try:
        SequenceGAN.load(folder, progress=False).sample(3)
    except GanSruError as e:
        assert str(e).strip()
    clean_outcome(cli("generate", "--run", folder, "--num", "3", "--out", str(tmp_path / "s.csv"), cwd=tmp_path))
    # a bare pickle under a checkpoint's name
    with open(checkpoints[-1], "wb") as f:
        pickle.dump(object_array(marker), f)
    refused(CheckpointError, Checkpoint.load, checkpoints[-1])


def test_run_folder_config_with_a_python_tag(trained, tmp_path, marker):
    folder = copy_of(trained, tmp_path)
    config = os.path.join(folder, "config.yaml")
    with open(config, "a") as f:
        f.write(f"evil: !!python/object/apply:builtins.open [{marker}, w]\n")
    refused(GanSruError, SequenceGAN.load, folder)
    clean_outcome(cli("generate", "--run", folder, "--num", "3", "--out", str(tmp_path / "s.csv"), cwd=tmp_path))
