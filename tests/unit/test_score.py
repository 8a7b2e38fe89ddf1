"""`gan-sru score`: a run's own training split, held-out split and samples, written as files in data units,
score as `evaluate` scores them (same seed); without --holdout it says what it cannot compute; --only limits
the sections, for `evaluate` too (gan_sru.commands.sections); bad inputs are one-line errors naming the option."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gan_sru import ConfigError, DataError
from gan_sru.commands import evaluate
from gan_sru.commands.main import build_parser
from gan_sru.commands.score import score_files
from gan_sru.commands.sections import SECTIONS, check_sections, only_arg, run_sections
from gan_sru.config import load_config
from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut, training_split
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=80", "data.seq_len=10", "data.num_features=3", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.discriminator.hidden_size=8", "train.steps=2",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.log_every=1", "data.holdout_fraction=0.25"]
FEW = {"discriminative": 5, "predictive": 5, "context_fid": 10}
NUM = 20


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(run folder, folder with train.npy, holdout.npy, fake.npy in data units)."""
    cfg = load_config(os.path.join(REPO, "configs/sines.yaml"), TINY + [f"run_dir={tmp_path_factory.mktemp('r')}"])
    with open(os.devnull, "w") as devnull:
        path = Trainer(cfg, progress=False, out=devnull).train()
    run = TrainedRun(path)
    train, held = training_split(run.cfg, path)
    fake = generate_cut(run, draw_lengths(train.lengths, NUM, 0), 0, None)
    d = tmp_path_factory.mktemp("files")
    for name, seqs in (("train", train.sequences), ("holdout", held.sequences), ("fake", fake)):
        np.save(d / f"{name}.npy", np.stack([run.scaler.inverse(np.asarray(s, np.float64)) for s in seqs]))
    return path, d


def close(a, b):
    return np.allclose(a, b, rtol=1e-3, atol=1e-5)


def test_score_reproduces_evaluate(files, tmp_path):
    run, d = files
    ev = evaluate.evaluate_run(run, num=NUM, repeats=2, seed=0, progress=False, out=str(tmp_path / "ev"),
                               iterations=FEW)
    sc = score_files(str(d / "train.npy"), str(d / "fake.npy"), str(tmp_path / "sc"), str(d / "holdout.npy"),
                     num=NUM, repeats=2, seed=0, iterations=FEW, progress=False, log=lambda m: None)
    assert (sc["num_real"], sc["num_holdout"], sc["num_generated"]) == (ev["num_real"], ev["num_holdout"], NUM)
    for which in ("generated", "holdout"):
        for name in ("discriminative", "correlational"):
            assert close(sc[which][name]["mean"], ev[which][name]["mean"]), (which, name)
        assert close(sc[which]["predictive"]["mae"], ev[which]["predictive"]["mae"])
        assert close(sc[which]["mmd2"], ev[which]["mmd2"]) and close(sc[which]["context_fid"], ev[which]["context_fid"])
    assert close(sc["memorisation"]["median_ratio"], ev["memorisation"]["median_ratio"])
    assert sc["privacy"]["membership_inference"]["auc"] == pytest.approx(ev["privacy"]["membership_inference"]["auc"])
    m = json.loads((tmp_path / "sc" / "metrics.json").read_text())
    assert m["privacy"]["adversarial_accuracy"]["n"] >= 2
    assert (tmp_path / "sc" / "report.html").stat().st_size > 10_000 and (tmp_path / "sc" / "report.md").exists()


def test_score_cli_without_holdout_and_only(files, tmp_path):
    _, d = files
    out = tmp_path / "o"
    p = subprocess.run([sys.executable, "-m", "gan_sru", "score", "--real", str(d / "train.npy"), "--fake",
                        str(d / "fake.npy"), "--out", str(out), "--only", "privacy,memorisation", "--no-progress"],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "not computed: privacy (no --holdout: at least 2 held-out sequences are needed)" in p.stdout
    assert "[1/2] memorisation" in p.stderr and "[2/2] privacy" in p.stderr
    m = json.loads((out / "metrics.json").read_text())
    assert m["generated"] is None and m["privacy"] is None and m["memorisation"]["holdout"] is None
    assert "Not computed: privacy" in (out / "report.md").read_text()


def test_score_errors(files, tmp_path):
    _, d = files
    np.save(tmp_path / "two.npy", np.zeros((4, 10, 2)))
    with pytest.raises(DataError, match="--fake .*two.npy: features .*expected those of --real .*train.npy"):
        score_files(str(d / "train.npy"), str(tmp_path / "two.npy"), str(tmp_path / "o"), log=lambda m: None)
    with pytest.raises(DataError, match="--real .*missing.npy"):
        score_files(str(tmp_path / "missing.npy"), str(d / "fake.npy"), str(tmp_path / "o"), log=lambda m: None)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "--real", "a", "--fake", "b", "--out", "c", "--only", "beauty"])


def test_sections_parse_check_and_run_in_one_order():
    assert only_arg(" privacy, memorisation ,") == ("privacy", "memorisation")
    assert check_sections(["fidelity"]) == ("fidelity",)
    assert check_sections("fidelity,privacy") == ("fidelity", "privacy")
    with pytest.raises(ConfigError, match="--only: unknown sections 'beauty', 'x'; expected a comma-separated list "
                                          "of fidelity, separability, memorisation, privacy"):
        check_sections("beauty,privacy,x")
    with pytest.raises(ConfigError, match="names no section"):
        check_sections(",")
    ran, logged = [], []
    run_sections(("privacy", "fidelity"), {s: (lambda s=s: ran.append(s)) for s in SECTIONS}, logged.append)
    assert ran == ["fidelity", "privacy"] and logged == ["[1/2] fidelity", "[2/2] privacy"]  # SECTIONS' order


@pytest.mark.parametrize("command", ["evaluate", "score"])
def test_only_refuses_an_unknown_section_naming_the_known_ones(command, capsys):
    files = ["--run", "r"] if command == "evaluate" else ["--real", "a", "--fake", "b", "--out", "c"]
    assert build_parser().parse_args([command, *files, "--only", "privacy"]).only == ("privacy",)
    assert build_parser().parse_args([command, *files]).only == SECTIONS
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, *files, "--only", "privacy,beauty"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"gan-sru {command}: error: argument --only: unknown section 'beauty'; expected a "
                   "comma-separated list of fidelity, separability, memorisation, privacy")


def test_evaluate_only_computes_the_named_sections(files, tmp_path):
    run, _ = files
    with pytest.raises(ConfigError, match="unknown section 'beauty'"):
        evaluate.evaluate_run(run, num=NUM, progress=False, out=str(tmp_path / "x"), only=("beauty",))
    assert not (tmp_path / "x").exists()  # refused before anything ran
    logged = []
    one = evaluate.evaluate_run(run, num=NUM, repeats=1, seed=0, progress=False, out=str(tmp_path / "one"),
                                only=("privacy",), log=logged.append)
    assert logged == ["[1/1] privacy"] and one["sections"] == ["privacy"]
    assert one["privacy"]["membership_inference"] is not None
    assert all(one[k] is None for k in ("generated", "holdout", "separability", "memorisation"))
    assert one["pictures"] == {} and sorted(os.listdir(tmp_path / "one")) == ["metrics.json", "report.html",
                                                                             "report.md"]
    report = (tmp_path / "one" / "report.md").read_text()
    assert "not computed: fidelity, separability, memorisation" in report and "## Pictures" not in report
    two = evaluate.evaluate_run(run, num=NUM, repeats=1, seed=0, progress=False, out=str(tmp_path / "two"),
                                only=("memorisation", "privacy"))
    assert two["privacy"] == one["privacy"]  # a section does not depend on which others run
    assert two["memorisation"] is not None and set(two["pictures"]) == {"memorisation"}
    sc = score_files(*(str(files[1] / f"{n}.npy") for n in ("train", "fake")), str(tmp_path / "sc"),
                     str(files[1] / "holdout.npy"), num=NUM, only=("privacy",), progress=False, log=lambda m: None)
    assert sc["sections"] == one["sections"] and sc["generated"] is None and sc["privacy"] is not None


def test_evaluate_cli_only_privacy(files):
    run, _ = files
    p = subprocess.run([sys.executable, "-m", "gan_sru", "evaluate", "--run", run, "--only", "privacy", "--num",
                        str(NUM), "--no-progress"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "sections privacy:" in p.stdout and "privacy: membership attack AUC" in p.stdout
    assert "| score |" not in p.stdout and "Traceback" not in p.stderr
    m = json.loads((Path(run) / "evaluation" / "metrics.json").read_text())
    assert m["sections"] == ["privacy"] and m["generated"] is None and m["privacy"] is not None
