"""report.html: written by evaluate for a tiny wide run, parses, needs nothing outside itself, and carries the
scores with floors and readings, the privacy section and the run's config."""
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

from gan_sru import plots
from gan_sru.commands import evaluate
from gan_sru.config import load_config
from gan_sru.metrics.statistics import TSNE_MAX_POINTS, tsne_projection
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
    assert 'alt="pca"' in text and 'alt="tsne"' in text
    assert f"t-SNE of {result['num_real']} real and {result['num_generated']} generated sequences" in text
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


def _result(num=4):
    """A metrics.json dict with a score, the privacy section left out and a PCA picture named."""
    return {"generated": {"discriminative": {"mean": 0.06, "std": 0.01, "scores": [0.05, 0.07]}},
            "holdout": {"discriminative": {"mean": 0.005, "std": 0.0}}, "num_real": num, "num_generated": num,
            "num_holdout": 200, "seed": 3, "pictures": {"pca": "pca.png", "scores": "scores.png"}}


def test_tsne_projection_shapes_cap_and_seed():
    rng = np.random.default_rng(0)
    real = [rng.random((6, 2)) for _ in range(30)]
    fake = [rng.random((6, 2)) + 0.5 for _ in range(12)]
    r, g = tsne_projection(real, fake, seed=1, max_points=20)
    assert r.shape == (20, 2) and g.shape == (12, 2) and np.all(np.isfinite(r)) and np.all(np.isfinite(g))
    r2, g2 = tsne_projection(real, fake, seed=1, max_points=20)
    assert np.array_equal(r, r2) and np.array_equal(g, g2)  # the same seed: the same picture
    r3, _ = tsne_projection(real, fake, seed=2, max_points=20)
    assert not np.allclose(r, r3)
    r, g = tsne_projection(real[:3], [s[:4] for s in fake[:2]], seed=0)  # different lengths, below the cap
    assert r.shape == (3, 2) and g.shape == (2, 2)
    same = [np.full((6, 2), 0.5)] * 5
    r, g = tsne_projection(same, same, seed=0)  # t-SNE's PCA start is undefined: one point
    assert r.shape == g.shape == (5, 2) and not r.any() and not g.any()


def test_report_shows_tsne_beside_pca(tmp_path):
    rng = np.random.default_rng(0)
    real, fake = [rng.random((5, 3)) for _ in range(9)], [rng.random((5, 3)) for _ in range(7)]
    plots.pca_scatter(rng.random((4, 2)), rng.random((4, 2)), tmp_path / "pca.png")
    text = open(write_html(_result(), str(tmp_path), real, fake)).read()
    row = re.search(r"<h3>Real vs generated in a shared 2-D embedding</h3><div class=row>(.*?)</div>", text, re.S)
    assert row, "no embedding row in report.html"
    assert re.findall(r'<figure><img alt="(\w+)"', row.group(1)) == ["pca", "tsne"]
    assert (f"t-SNE of 9 real and 7 generated sequences together (capped at {TSNE_MAX_POINTS} of each"
            in row.group(1)) and "random_state 3" in row.group(1)
    text = open(write_html(_result(), str(tmp_path))).read()  # no sets: the PCA picture alone, no t-SNE
    assert 'alt="pca"' in text and "t-SNE" not in text


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Headings(HTMLParser):
    def __init__(self):
        super().__init__()
        self.open, self.found, self.tags = None, [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("h1", "h2", "h3"):
            self.open = [tag, ""]

    def handle_data(self, data):
        if self.open:
            self.open[1] += data

    def handle_endtag(self, tag):
        if self.open and tag == self.open[0]:
            self.found.append((tag, self.open[1].strip()))
            self.open = None


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium is not installed (no chromium on PATH, e.g. "
                    "/usr/bin/chromium): the browser parse of report.html cannot run")
def test_report_parses_in_headless_chromium(tmp_path):
    """A real browser with every name unresolvable and a dead proxy (no network) loads report.html and its DOM
    has the report's sections, the embedding row's two figures and every picture."""
    rng = np.random.default_rng(0)
    real = [rng.random((5, 3)) for _ in range(12)]
    fake = [rng.random((5, 3)) for _ in range(12)]
    plots.pca_scatter(rng.random((4, 2)), rng.random((4, 2)), tmp_path / "pca.png")
    plots.scores_bar({"disc gen": 0.06}, tmp_path / "scores.png")
    path = write_html(_result(12), str(tmp_path), real, fake, "a: 1\n", {"features": 3}, title="Browser check")
    proc = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
         "--dump-dom", f"file://{os.path.abspath(path)}"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}"
    dom = Headings()
    dom.feed(proc.stdout)
    dom.close()
    assert ("h1", "Browser check") in dom.found, f"no h1 in the DOM Chromium built: {proc.stdout[:500]}"
    assert [t for h, t in dom.found if h == "h2"] == ["Scores", "Privacy", "Pictures", "Data", "Config", "Settings"]
    h3 = [t for h, t in dom.found if h == "h3"]
    assert h3[:2] == ["Marginal distribution of each feature", "Real vs generated in a shared 2-D embedding"]
    assert "scores next to their floors" in h3
    assert dom.tags.count("figure") == 2 and dom.tags.count("img") == 4 and "script" not in dom.tags


def test_conditional_pictures_are_embedded(tmp_path):
    plots.pca_scatter(np.zeros((2, 2)), np.ones((2, 2)), tmp_path / "per_class.png")
    result = {**_result(), "conditional": {"sampling": "attributes resampled", "categorical": {},
                                           "pictures": {"per_class.png": "per_class.png"}}}
    text = open(write_html(result, str(tmp_path))).read()
    assert "<h2>Conditional generation</h2><pre>Sampling: attributes resampled.</pre>" in text.replace("\n", "")
    assert '<h3>each class, real vs generated</h3>\n<img alt="per_class.png" src="data:image/png;base64,' in text
    assert "![" not in text and "## Conditional" not in text
