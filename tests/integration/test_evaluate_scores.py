"""`gan-sru evaluate` on a tiny run of the wide built-in set: Context-FID and the correlational score next to
their floors, and the protocol in force written into metrics.json and report.md."""
import json
import os

import pytest

from gan_sru import ConfigError
from gan_sru.commands import evaluate
from gan_sru.commands.main import build_parser
from gan_sru.config import load_config
from gan_sru.metrics import protocol_settings
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=120", "data.seq_len=12", "data.num_features=6", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.discriminator.hidden_size=8", "train.steps=2",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.log_every=1"]
FEW = {"discriminative": 5, "predictive": 5, "context_fid": 20}


@pytest.fixture(scope="module")
def wide_run(tmp_path_factory):
    cfg = load_config(os.path.join(REPO, "configs/wide.yaml"), TINY + [f"run_dir={tmp_path_factory.mktemp('runs')}"])
    with open(os.devnull, "w") as devnull:
        return Trainer(cfg, progress=False, out=devnull).train()


def test_paper_protocol_is_timegans_settings():
    for C, H in ((28, 14), (5, 2), (1, 1)):
        s = protocol_settings("paper", C)
        assert s["discriminative"] == dict(iterations=2000, batch_size=256, hidden_size=H, learning_rate=1e-3)
        assert s["predictive"] == dict(iterations=5000, batch_size=128, hidden_size=H, learning_rate=1e-3)
    assert protocol_settings("fast", 28)["discriminative"]["iterations"] == 300
    with pytest.raises(ConfigError, match="--protocol 'slow': expected one of fast, paper"):
        protocol_settings("slow", 5)
    assert build_parser().parse_args(["evaluate", "--run", "r", "--protocol", "paper"]).protocol == "paper"
    assert build_parser().parse_args(["evaluate", "--run", "r"]).protocol == "fast"


@pytest.mark.parametrize("protocol", ["paper", "fast"])
def test_evaluate_reports_the_new_scores_with_floors(wide_run, tmp_path, protocol):
    evaluate.evaluate_run(wide_run, num=24, repeats=1, seed=0, progress=False, out=str(tmp_path),
                          iterations=FEW, protocol=protocol)
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["protocol"]["name"] == protocol and m["protocol"]["description"].startswith(protocol)
    assert m["iterations"] == FEW and m["protocol"]["context_fid"]["iterations"] == 20
    hidden = 3 if protocol == "paper" else 6  # TimeGAN's C // 2; the fast protocol's max(4, 2 ceil(C / 2))
    assert m["protocol"]["discriminative"]["hidden_size"] == hidden == m["protocol"]["predictive"]["hidden_size"]
    gen, floor = m["generated"], m["holdout"]
    # two generator steps: far from the data, and farther than held-out real data
    assert gen["context_fid"] > floor["context_fid"] > 0
    assert gen["correlational"]["mean"] > floor["correlational"]["mean"] > 0
    report = (tmp_path / "report.md").read_text()
    assert f"protocol: **{protocol}" in report and f"GRU hidden {hidden}" in report
    assert "| Context-FID | " in report and "| correlational | " in report
    assert "](correlation.png)" in report and os.path.getsize(tmp_path / "correlation.png") > 10_000


def test_evaluate_repeats_the_predictive_score_as_the_discriminative_one(wide_run, tmp_path):
    """Both GRU scores are averaged over --repeats fresh GRUs (TimeGAN's metric_iteration), for the generated
    set and the floor; the report shows the regressors' spread."""
    evaluate.evaluate_run(wide_run, num=24, repeats=3, seed=0, progress=False, out=str(tmp_path),
                          iterations=FEW, protocol="paper")
    m = json.loads((tmp_path / "metrics.json").read_text())
    for scores in (m["generated"], m["holdout"]):
        pred = scores["predictive"]
        assert len(pred["scores"]) == 3 == len(scores["discriminative"]["scores"])
        assert pred["mae"] == pytest.approx(sum(pred["scores"]) / 3) and pred["std"] > 0
    report = (tmp_path / "report.md").read_text()
    assert "repeats of the discriminative and predictive scores" in report
    assert f"| predictive (TSTR MAE) | {m['generated']['predictive']['mae']:.4f} ± " in report


def test_evaluate_gives_the_classifier_its_own_repeats(wide_run, tmp_path):
    """repeats={"discriminative": n, "predictive": m}: n classifiers and m regressors, for the generated set and
    the floor; metrics.json and the report name both counts."""
    evaluate.evaluate_run(wide_run, num=24, repeats={"discriminative": 4, "predictive": 2}, seed=0, progress=False,
                          out=str(tmp_path), iterations=FEW, protocol="paper", only=("fidelity",))
    m = json.loads((tmp_path / "metrics.json").read_text())
    for scores in (m["generated"], m["holdout"]):
        assert len(scores["discriminative"]["scores"]) == 4 and len(scores["predictive"]["scores"]) == 2
    assert m["repeats"] == {"discriminative": 4, "predictive": 2}
    assert "(a fresh GRU each): 4 classifiers, 2 regressors" in (tmp_path / "report.md").read_text()
    evaluate.evaluate_run(wide_run, num=24, repeats={"discriminative": 2, "predictive": 2}, seed=0, progress=False,
                          out=str(tmp_path), iterations=FEW, protocol="paper", only=("fidelity",))
    assert json.loads((tmp_path / "metrics.json").read_text())["repeats"] == 2  # one count where both share it


@pytest.mark.parametrize("repeats, words", [
    ({"classifier": 3}, "repeats: unknown keys ['classifier']"),
    ({"discriminative": 0}, "repeats['discriminative'] = 0: expected a whole number, at least 1"),
    ({"predictive": 2.5}, "repeats['predictive'] = 2.5: expected a whole number"),
])
def test_evaluate_refuses_bad_repeats(wide_run, tmp_path, repeats, words):
    with pytest.raises(ConfigError) as e:
        evaluate.evaluate_run(wide_run, num=24, repeats=repeats, progress=False, out=str(tmp_path / "x"))
    assert words in str(e.value) and not (tmp_path / "x").exists()
