"""The README stays true: its config reference, make targets, commands, pictures and links exist."""
import os
import re
import shlex

import pytest

from gan_sru.commands.main import build_parser
from gan_sru.config import SCHEMA, schema_markdown

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
MAKEFILE = open(os.path.join(ROOT, "Makefile"), encoding="utf-8").read()


def test_config_reference_is_the_schema():
    assert schema_markdown().strip() in README, "regenerate the README table from gan_sru.config.schema_markdown()"
    for key in SCHEMA:
        assert f"`{key}`" in README


def test_make_targets_named_in_readme_exist():
    named = set(re.findall(r"`make ([a-z-]+)`", README)) | set(re.findall(r"^make ([a-z-]+)", README, re.M))
    assert {"train", "test"} <= named
    targets = set(re.findall(r"^([a-z-]+):", MAKEFILE, re.M))
    assert named <= targets, f"README names make targets the Makefile lacks: {named - targets}"


def readme_commands():
    """Every `gan-sru ...` / `python train.py ...` line of the README's code blocks, as argv for the CLI."""
    out = []
    # every fenced block with its language (a ```python block must not shift which fences open and close)
    for lang, block in re.findall(r"```([\w-]*)\n(.*?)```", README, re.S):
        if lang not in ("", "bash"):
            continue
        for line in block.splitlines():
            line = line.split("#")[0].strip().lstrip("$ ").strip()
            if line.startswith("gan-sru "):
                out.append(shlex.split(line)[1:])
            elif line.startswith("python train.py "):
                out.append(["train"] + shlex.split(line)[2:])
    return out


@pytest.mark.parametrize("argv", readme_commands(), ids=lambda a: " ".join(a)[:60])
def test_readme_commands_parse(argv):
    args = build_parser().parse_args(argv)
    for attr in ("config",):
        path = getattr(args, attr, None)
        if path:
            assert os.path.exists(os.path.join(ROOT, path)), path


def test_readme_pictures_exist():
    for path in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert os.path.exists(os.path.join(ROOT, path)), f"README shows {path}, which does not exist"


def _anchors(text):
    """GitHub's anchors for a Markdown text's headings: lower case, punctuation dropped, spaces to hyphens."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def _local_links(text):
    """(target file or '', anchor or '') of every link that is not a web address, outside code blocks."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target):
            path, _, anchor = target.partition("#")
            yield path, anchor


def test_local_links_resolve():
    """Every relative link of the README and of docs/*.md names a file that exists, and every #anchor a heading
    of its file (the measurements' log links back into the README's sections)."""
    docs = os.path.join(ROOT, "docs")
    files = [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    checked = 0
    for md in files:
        text = open(md, encoding="utf-8").read()
        for path, anchor in _local_links(text):
            target = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            assert os.path.exists(target), f"{os.path.relpath(md, ROOT)} links to {path}, which does not exist"
            if anchor and target.endswith(".md"):
                assert anchor in _anchors(open(target, encoding="utf-8").read()), \
                    f"{os.path.relpath(md, ROOT)} links to {path}#{anchor}: no such heading"
            checked += 1
    assert checked >= 10


def test_anchor_rule():
    assert _anchors("## Sample quality on wide and long data (issue #11)\n### Python API\n") == {
        "sample-quality-on-wide-and-long-data-issue-11", "python-api"}
