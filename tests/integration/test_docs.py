"""The documentation site builds with warnings as errors, and its generated pages hold what they promise.

One `mkdocs build --strict` into a temporary folder (a few seconds): broken links, anchors and API
references fail it. The config reference page must list every config key (from the config definition and
from every file in configs/), and the API page must document SequenceGAN.
"""
import html
import os
import re
import subprocess
import sys

import pytest
import yaml

from gan_sru.config import load_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # mkdocs-material's banner
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return out


def _page_text(site, page):
    path = os.path.join(site, page, "index.html")
    assert os.path.isfile(path), f"the site has no page {page}/"
    with open(path, encoding="utf-8") as f:
        return html.unescape(f.read())


def _dotted_keys(tree, prefix=""):
    """Dotted keys of a nested mapping (or of a pydantic model's dump), leaves only."""
    if hasattr(tree, "model_dump"):
        tree = tree.model_dump()
    keys = set()
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if hasattr(value, "model_dump") or (isinstance(value, dict) and value):
            keys |= _dotted_keys(value, dotted + ".")
        else:
            keys.add(dotted)
    return keys


def test_config_reference_lists_every_key(site):
    text = _page_text(site, "reference/config")
    listed = set(re.findall(r"<code>([\w.]+)</code>", text))
    keys = _dotted_keys(load_config())
    for name in sorted(os.listdir(os.path.join(ROOT, "configs"))):
        if name.endswith(".yaml"):
            with open(os.path.join(ROOT, "configs", name), encoding="utf-8") as f:
                keys |= _dotted_keys(yaml.safe_load(f) or {})
    assert len(keys) > 50
    missing = sorted(keys - listed)
    assert not missing, f"the config reference page lacks {missing}"
    assert "<table>" in text and "<!-- config-table -->" not in text


def test_api_page_documents_sequence_gan(site):
    text = _page_text(site, "api")
    assert "SequenceGAN" in text
    for method in ("fit", "sample", "save", "load"):
        assert re.search(rf'id="gan_sru\.api\.SequenceGAN\.{method}"', text), f"api page lacks SequenceGAN.{method}"
    for name in ("gan_sru.ops.sru.layer.sru", "gan_sru.data.read_data", "gan_sru.export.export_generator"):
        assert f'id="{name}"' in text, f"api page lacks {name}"


def test_results_pages_include_their_files(site):
    text = _page_text(site, "results/2026-11-28-quality-builtin")
    assert text.count("<tr>") > 40, "the quality page's table of every run (benchmarks/results/quality.md) is missing"
    assert os.path.isfile(os.path.join(site, "results", "files", "quality.json"))
    assert os.path.isfile(os.path.join(site, "img", "real_vs_generated.png"))
