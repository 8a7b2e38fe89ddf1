"""report.html: written by evaluate for a tiny wide run, parses, needs nothing outside itself, and carries the
scores with floors and readings, the privacy section and the run's config."""
import json
import os
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from gan_sru.commands import evaluate
from gan_sru.config import load_config
from gan_sru.report import readings, sample_size_warning, write_html
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=90", "data.seq_len=10", "data.num_features=30", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.discriminator.hidden_size=8", "train.steps=2",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.log_every=1"]
FEW = {"discriminative": 5, "predictive": 5, "context_fid": 10}


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.srcs, self.hrefs = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if "src" in a:
            self.srcs.append(a["src"])
        if "href" in a:
            self.hrefs.append(a["href"])


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    cfg = load_config(os.path.join(REPO, "configs/wide.yaml"), TINY + [f"run_dir={tmp_path_factory.mktemp('runs')}"])
    with open(os.devnull, "w") as devnull:
        run = Trainer(cfg, progress=False, out=devnull).train()
    out = tmp_path_factory.mktemp("eval")
    result = evaluate.evaluate_run(run, num=20, repeats=2, seed=0, progress=False, out=str(out), iterations=FEW)
    return result, out


def test_report_html_is_self_contained(evaluated):
    result, out = evaluated
    text = (out / "report.html").read_text()
    p = Collect()
    p.feed(text)
    p.close()
    assert p.tags[0] == "html" and "table" in p.tags and p.tags.count("img") >= 6
    assert not re.search(r"https?://", text) and not p.hrefs
    assert p.srcs and all(s.startswith("data:image/png;base64,") for s in p.srcs)
    assert "8 of 30 features: the highest-variance ones" in text
    assert "better than chance" in text and "membership attack AUC" in text and "num_features: 30" in text
    assert "fewer than the 50 needed" in text  # 9 held-out sequences: warned
    m = json.loads((out / "metrics.json").read_text())
    assert m["privacy"]["membership_inference"]["n_members"] == m["num_holdout"]
    assert "## Does it give away who was in the training data?" in (out / "report.md").read_text()


def test_readings_and_warning_on_known_numbers(tmp_path):
    result = {"generated": {"discriminative": {"mean": 0.06, "std": 0.01, "scores": [0.05, 0.07]},
                            "predictive": None, "context_fid": 1.5, "correlational": {"mean": 0.2, "std": 0.0},
                            "mmd2": 0.01},
              "holdout": {"discriminative": {"mean": 0.005, "std": 0.0}, "predictive": None, "context_fid": 0.1,
                          "correlational": {"mean": 0.02, "std": 0.0}, "mmd2": 0.0},
              "num_holdout": 200, "pictures": {}}
    r = readings(result)
    assert r["discriminative"] == ("a classifier tells generated from real 6.0% better than chance; held-out real "
                                   "data: 0.5%")
    assert "predictive" not in r and sample_size_warning(result) is None
    rng = np.random.default_rng(0)
    seqs = [rng.random((5, 3)) for _ in range(4)]
    path = write_html(result, str(tmp_path), seqs, seqs, "a: 1\n", {"features": 3})
    text = open(path).read()
    interval = 1.96 * 0.01 / np.sqrt(2)
    assert f"{0.06 - interval:.4g} to {0.06 + interval:.4g}" in text and "Marginal distribution" in text
    assert "fewer than" in sample_size_warning({"num_holdout": 3})
