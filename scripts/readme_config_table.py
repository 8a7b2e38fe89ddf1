"""Rewrites the README's config reference from the schema: `python scripts/readme_config_table.py`.

The table sits between the lines that start with `| key | type |` and the first line after it that does
not start with `|`; tests/test_readme.py checks that it equals gan_sru.config.schema_markdown().
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gan_sru  # noqa: E402, F401, I001
import gan_sru.models  # noqa: E402, F401, I001  (the registries name the allowed networks)
from gan_sru.config import schema_markdown  # noqa: E402

path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
lines = open(path, encoding="utf-8").read().split("\n")
start = next(i for i, line in enumerate(lines) if line.startswith("| key | type |"))
end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
lines[start:end] = schema_markdown().rstrip("\n").split("\n")
with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(lines))
print(f"{path}: config reference rewritten ({end - start} -> {len(schema_markdown().splitlines())} lines)")
