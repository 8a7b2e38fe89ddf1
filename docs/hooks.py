"""MkDocs hooks: pages built from the project's own definitions and result files, so they cannot drift.

- `<!-- config-table -->` in a page becomes `gan_sru.config.schema_markdown()`: every config key with its
  type, default, allowed values and meaning.
- `<!-- include benchmarks/results/NAME.md -->` becomes that file's text (tables a benchmark script wrote).
- The pictures under `samples/` and the files under `benchmarks/results/` join the site as `img/NAME` and
  `results/files/NAME`, so pages link them and `mkdocs build --strict` checks those links.
"""
import glob
import os
import re

from mkdocs.structure.files import File

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r"<!-- include (benchmarks/results/[\w.-]+\.md) -->")


def config_table():
    """The config reference table, from the config definition (imports the package and its networks)."""
    import gan_sru.models  # noqa: F401  (the registries name the allowed networks)
    from gan_sru.config import schema_markdown
    return schema_markdown()


def on_files(files, config):
    """Adds samples/*.png as img/NAME and benchmarks/results/* as results/files/NAME."""
    for pattern, folder in (("samples/*.png", "img"), ("benchmarks/results/*", "results/files")):
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            if os.path.isfile(path) and not path.endswith(".tmp"):
                files.append(File.generated(config, f"{folder}/{os.path.basename(path)}", abs_src_path=path))
    return files


def on_page_markdown(markdown, page, config, files):
    if "<!-- config-table -->" in markdown:
        markdown = markdown.replace("<!-- config-table -->", config_table())

    def include(match):
        with open(os.path.join(ROOT, match.group(1)), encoding="utf-8") as f:
            return f.read()
    return INCLUDE.sub(include, markdown)
