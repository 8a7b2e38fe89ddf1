"""Fuzzing the command line and the Python API on a tiny trained run: random `generate` and `train` argument
lists through gan_sru.commands.main.main (in this process), `score` with good and damaged --real, --holdout
and --fake files (conftest.score_inputs), and random SequenceGAN.sample() arguments.
A command must exit 0, or 2 with an `error: ...` line (argparse's usage error included), never a traceback;
sample() must return or raise the project's error or a TypeError / ValueError naming the argument."""
import numpy as np
import pytest
from conftest import score_inputs
from fuzz_outcomes import call, cli, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from gan_sru import SequenceGAN
from gan_sru.commands.main import main

TINY = dict(steps=2, batch_size=8, generator_hidden_size=8, discriminator_hidden_size=8, checkpoint_every=2,
            sample_every=1000, log_every=2, holdout_fraction=0.25, progress=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A saved tiny run trained on ragged (L_i, 2) arrays."""
    rng = np.random.default_rng(0)
    data = [rng.normal(size=(n, 2)) for n in rng.integers(4, 9, size=16)]
    return SequenceGAN(**TINY).fit(data).save(str(tmp_path_factory.mktemp("fuzz_run") / "run"))


NUMBERS = st.one_of(st.integers(-3, 12).map(str), st.sampled_from(
    ["0", "-1", "2.5", "1e3", "", " ", "abc", "3 ", "0x10", "100000000", "4294967296", "-9223372036854775809",
     "1000000", "200000", "nan", "inf", "٣"]))
OUT_NAMES = st.sampled_from(["s.csv", "s.csv.gz", "s.parquet", "s.npz", "s.npy", "s.txt", "s", "s.CSV", ".csv",
                             "dir/s.csv", "exists.csv", "s.npy.gz", "folder.csv"])  # no NUL: argv cannot hold one


@st.composite
def generate_argv(draw, run, folder):
    argv = ["generate", "--run", draw(st.sampled_from([run, run, run, str(folder / "missing"), str(folder),
                                                       str(folder / "exists.csv"), ""]))]
    options = {"--num": NUMBERS, "--length": NUMBERS, "--seed": NUMBERS,
               "--checkpoint": st.one_of(NUMBERS, st.sampled_from(["latest", "best", "2", "3"])),
               "--start": st.sampled_from(["0", "2024-01-01", "x", "1e308", "-5", "2024-13-40"]),
               "--condition": st.sampled_from(["a=1", "x", "="]), "--conditions": st.sampled_from(["none.csv", ""]),
               "--bogus": st.just("1")}
    for flag in draw(st.lists(st.sampled_from(sorted(options)), max_size=4, unique=True)):
        argv += [flag, draw(options[flag])]
    if draw(st.integers(0, 9)):  # --out FILE: no pictures, so each input stays fast
        argv += ["--out", str(folder / draw(OUT_NAMES))]
        if draw(st.booleans()):
            argv.append("--overwrite")
    if "--num" not in argv and draw(st.integers(0, 3)):
        argv += ["--num", str(draw(st.integers(1, 6)))]
    return argv


@fuzz_settings(20, 500)
@given(data=st.data())
def test_generate_arguments(run, tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("gen")
    (folder / "exists.csv").write_text("x")
    (folder / "folder.csv").mkdir()
    argv = data.draw(generate_argv(run, folder))
    cli("cli: generate", main, argv)


DATA_FILES = {"good.csv": "id,time,a\n" + "".join(f"{s},{t},{t * 0.1}\n" for s in "pqrstuvw" for t in range(6)),
              "bad.csv": "id,time,a\nq,0,x\n", "huge.csv": "id,time,a\nq,0,1\nq,1,1e308\n",
              "const.csv": "id,time,a,b\n" + "".join(f"{s},{t},{t},5\n" for s in "pqrstuvw" for t in range(6))}
SETS = st.sampled_from(["train.steps=1", "train.steps=0", "train.steps=-1", "seed=4294967296", "seed=-1",
                        "data.window=3", "data.window=1", "data.missing=drop", "data.missing=maybe",
                        "data.max_file_bytes=10", "data.max_file_bytes=0", "data.holdout_fraction=1",
                        "data.num_buckets=0", "data.csv_feature_columns=[b]", "data.csv_id_column=null",
                        "train.batch_size=0", "model.generator.name=nope", "nonsense", "=", "data.path=",
                        "data.path=/dev/zero", "data.source=sines", "run_dir=", "name=../x", "name=ok"])


@fuzz_settings(10, 150)
@given(data_file=st.sampled_from(sorted(DATA_FILES) + ["missing.csv"]), sets=st.lists(SETS, max_size=3),
       extra=st.lists(st.sampled_from(["--resume", "--no-progress", "--bogus", "-c", "cuda", "--data", "x.csv"]),
                      max_size=2))
def test_train_arguments(tmp_path_factory, data_file, sets, extra):
    """Each argv ends with tiny sizes and one step, so a valid one trains in about a second."""
    folder = tmp_path_factory.mktemp("train")
    for name, text in DATA_FILES.items():
        (folder / name).write_text(text)
    argv = ["train", "--config", "configs/user_data.yaml", "--no-progress", "--set", f"run_dir={folder / 'runs'}",
            "--set", f"data.path={folder / data_file}", *[a for s in sets for a in ("--set", s)], *extra,
            "--set", "train.steps=1", "--set", "model.generator.hidden_size=4",
            "--set", "model.discriminator.hidden_size=4", "--set", "train.batch_size=4"]
    cli("cli: train", main, argv)


SCORE_OPTIONS = {"--only": st.sampled_from(["privacy", "memorisation", "separability", "privacy,memorisation",
                                             "separability,privacy", "beauty", ",", "privacy,"]),
                 "--num": NUMBERS, "--seed": NUMBERS,
                 "--feature-columns": st.sampled_from(["a", "a,b", "a,zz", "", ",", "feature 0", "id"]),
                 "--id-column": st.sampled_from(["id", "time", "x", ""]),
                 "--time-column": st.sampled_from(["time", "x"]),
                 "--protocol": st.sampled_from(["fast", "slow"])}


@fuzz_settings(20, 600)
@given(data=st.data())
def test_score_files(tmp_path_factory, data):
    """Each argv computes cheap sections only (no fidelity: its GRUs and encoder train for seconds), so a valid
    one runs in well under a second; a file's defect shows before any section."""
    folder = tmp_path_factory.mktemp("score")
    argv = ["score", *score_inputs(data.draw, folder), "--out", str(folder / "out"), "--no-progress"]
    options = data.draw(st.lists(st.sampled_from(sorted(SCORE_OPTIONS)), max_size=3, unique=True))
    for flag in options:
        argv += [flag, data.draw(SCORE_OPTIONS[flag])]
    if "--only" not in options:
        argv += ["--only", "privacy"]
    cli("cli: score", main, argv)


ARGS = st.one_of(st.integers(-2, 8), st.sampled_from([2.5, "3", True, None, -1, 0, 10**7, 2**64, float("nan"),
                                                      np.int64(3), np.float32(2.0), [3], b"3"]))


@pytest.fixture(scope="module")
def model(run):
    return SequenceGAN.load(run, progress=False)


LENGTHS = st.one_of(st.none(), st.none(), st.integers(-2, 8), st.sampled_from(
    [2.5, "3", True, -1, 0, 10**5, 10**7, 2**64, float("nan"), np.int64(3), np.float32(2.0), [3], b"3"]))


@fuzz_settings(20, 800)
@given(num=st.one_of(st.integers(1, 6), ARGS), seed=st.one_of(st.integers(0, 2**63 - 1), ARGS), length=LENGTHS,
       start=st.sampled_from([None, None, None, 0, "x"]))
def test_api_sample_arguments(model, num, seed, length, start):
    def promised(result):
        assert len(result) == num and all(np.all(np.isfinite(np.asarray(s, np.float64))) for s in result)

    call("api: sample", model.sample, num_sequences=num, seed=seed, length=length, start=start,
         check=promised, python_errors=True)
