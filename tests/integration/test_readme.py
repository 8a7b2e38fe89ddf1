"""The README stays a short user's guide that is true: its make targets, commands, pictures and links exist,
and so do the commands of the documentation pages (docs/**/*.md)."""
import glob
import os
import re
import shlex

import pytest

from gan_sru.commands.main import build_parser

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
MAKEFILE = open(os.path.join(ROOT, "Makefile"), encoding="utf-8").read()
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))


def test_readme_is_a_short_guide():
    lines = README.splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; the user's guide stays within ~300"
    long = [i + 1 for i, line in enumerate(lines) if len(line) > 120]
    assert not long, f"README.md lines over 120 characters: {long}"
    assert not re.search(r"/(work|home|root|tmp)/\w", README), "README.md shows a machine-specific path"
    for section in ("## Install and run", "## Your own data in three commands", "## Python API", "## Results"):
        assert section in README


def test_make_targets_named_in_readme_exist():
    named = set(re.findall(r"`make ([a-z-]+)`", README)) | set(re.findall(r"^make ([a-z-]+)", README, re.M))
    assert {"train", "test"} <= named
    targets = set(re.findall(r"^([a-z-]+):", MAKEFILE, re.M))
    assert named <= targets, f"README names make targets the Makefile lacks: {named - targets}"


def readme_commands():
    """Every `gan-sru ...` / `python train.py ...` line of the README's and the docs' code blocks, as argv
    for the CLI (a launcher's prefix such as `mpirun -n 4` dropped)."""
    out = []
    texts = [README] + [open(path, encoding="utf-8").read() for path in DOCS]
    # every fenced block with its language (a ```python block must not shift which fences open and close)
    blocks = [found for text in texts for found in re.findall(r"```([\w-]*)\n(.*?)```", text, re.S)]
    for lang, block in blocks:
        if lang not in ("", "bash"):
            continue
        for line in block.replace("\\\n", " ").splitlines():  # a command continued with a backslash is one line
            line = line.split("#")[0].strip().lstrip("$ ").strip()
            line = re.sub(r"^(mpirun|srun)( -n \d+| --[\w=-]+)* ", "", line)
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
        if path and path.startswith("configs/"):  # the repository's configs; other paths are examples
            assert os.path.exists(os.path.join(ROOT, path)), path


def test_readme_pictures_exist():
    for path in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert os.path.exists(os.path.join(ROOT, path)), f"README shows {path}, which does not exist"


def _anchors(text):
    """GitHub's anchors for a Markdown text's headings: lower case, punctuation dropped, spaces to hyphens."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def _local_links(text):
    """(target file or '', anchor or '') of every inline or reference link that is not a web address,
    outside code blocks."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"^\[[^\]]+\]: (\S+)", text, re.M)
    for target in targets:
        if not re.match(r"[a-z]+:", target):
            path, _, anchor = target.partition("#")
            yield path, anchor


def test_local_links_resolve():
    """Every relative link of the README names a file that exists, and every #anchor a heading of its file.
    The docs' own links are checked by mkdocs build --strict (tests/integration/test_docs.py)."""
    checked = 0
    for path, anchor in _local_links(README):
        target = os.path.normpath(os.path.join(ROOT, path)) if path else os.path.join(ROOT, "README.md")
        assert os.path.exists(target), f"README.md links to {path}, which does not exist"
        if anchor and target.endswith(".md"):
            assert anchor in _anchors(open(target, encoding="utf-8").read()), \
                f"README.md links to {path}#{anchor}: no such heading"
        checked += 1
    assert checked >= 10
    reference_links = set(re.findall(r"\]\[([\w-]+)\]", README))
    defined = set(re.findall(r"^\[([\w-]+)\]: ", README, re.M))
    assert reference_links <= defined, f"README.md uses undefined reference links {reference_links - defined}"


def test_readme_links_the_docs_it_names():
    """Each docs page the README links is a page of the site (named in mkdocs.yml's nav)."""
    nav = open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8").read()
    for path, _ in _local_links(README):
        if path.startswith("docs/") and path.endswith(".md"):
            assert path[len("docs/"):] in nav, f"README.md links {path}, which mkdocs.yml's nav lacks"


def test_anchor_rule():
    assert _anchors("## Sample quality on wide and long data (issue #11)\n### Python API\n") == {
        "sample-quality-on-wide-and-long-data-issue-11", "python-api"}
