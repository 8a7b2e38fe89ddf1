"""Property tests of the sampling inputs: SequenceGAN.sample's arguments, generate's --start, --data paths and
damaged sampling.json records. Each may only succeed or raise this project's error (or, for the API's
arguments, TypeError / ValueError naming the argument); never a bare NumPy, pandas, JSON or Python error."""
import json
import os
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gan_sru import CheckpointError, DataError, SequenceGAN
from gan_sru.sampling import Reference, TrainedRun, parse_start
from gan_sru.train.run_folder import locate_data

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
ARGUMENT = st.one_of(st.integers(-10, 6), st.integers(10 ** 6 + 1, 10 ** 30), st.floats(allow_nan=True),
                     st.text(max_size=6), st.booleans(), st.none(), st.just([2]))
JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.floats(allow_nan=False),
                              st.text(max_size=5)),
                    lambda kids: st.one_of(st.lists(kids, max_size=4),
                                           st.dictionaries(st.sampled_from(["format", "data", "lengths", "attributes",
                                                                            "reference", "sequences", "path"]),
                                                           kids, max_size=5)), max_leaves=30)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A tiny model trained on a CSV file (so that it records a fingerprint), as a DataFrame-layout run."""
    import pandas as pd

    folder = tmp_path_factory.mktemp("fuzz_sampling")
    rng = np.random.default_rng(0)
    pd.DataFrame({"id": np.repeat(np.arange(8), 6), "time": np.tile(np.arange(6), 8),
                  "x": rng.normal(size=48), "y": rng.normal(size=48)}).to_csv(folder / "d.csv", index=False)
    return SequenceGAN(progress=False, steps=2, checkpoint_every=2, batch_size=8, generator_hidden_size=8,
                       discriminator_hidden_size=8, run=str(folder / "run")).fit(str(folder / "d.csv"))


@settings(FUZZ, max_examples=150)
@given(num=ARGUMENT, seed=ARGUMENT, length=ARGUMENT)
def test_sample_arguments(model, num, seed, length):
    try:
        df = model.sample(num_sequences=num, seed=seed, length=length)
    except (TypeError, ValueError) as e:
        names = [n for n, v in (("num_sequences", num), ("seed", seed), ("length", length))]
        assert any(str(e).startswith(f"{n}=") for n in names), str(e)
        return
    assert df["id"].nunique() == num and not df.isna().any().any()


@settings(FUZZ, max_examples=300)
@given(text=st.one_of(st.text(max_size=30), st.from_regex(r"20[0-9]{2}-[0-9]{2}-[0-9]{2}( [0-9:]{0,8})?",
                                                          fullmatch=True)),
       kind=st.sampled_from(["dates", "numbers"]))
def test_start_text(text, kind):
    try:
        value = parse_start(text, kind)
    except DataError as e:
        assert str(e).startswith(f"start {text!r}: ")
        return
    assert np.isfinite(value)


@settings(FUZZ, max_examples=100)
@given(path=st.text(max_size=20))
def test_data_paths(model, path):
    try:
        cfg = locate_data(model.run, model.cfg, data=path)
    except DataError as e:
        assert str(e).startswith("--data ")
        return
    assert os.path.isfile(cfg["data"]["path"])  # only the training file itself (same bytes) is accepted


@settings(FUZZ, max_examples=150)
@given(record=st.one_of(JSON, st.binary(max_size=60)))
def test_damaged_sampling_records(model, tmp_path, record):
    folder = tmp_path / "copy"
    if not folder.exists():
        shutil.copytree(model.run, folder)
    run = TrainedRun(str(folder))
    with open(folder / "sampling.json", "wb") as f:
        f.write(record if isinstance(record, bytes) else json.dumps(record).encode())
    try:
        ref = Reference.of_run(run)
    except CheckpointError as e:
        assert "sampling.json: not a readable sampling record" in str(e)
        return
    assert ref.lengths.min() >= 1
