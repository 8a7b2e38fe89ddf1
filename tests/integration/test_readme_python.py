"""The README's Python API example runs as written (with train.steps cut from 2000 to 3 so that it takes seconds),
from a folder that looks like the repository: its configs/ and samples/ beside a fresh runs/."""
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_python_example():
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    section = readme[readme.index("## Python API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow  # about 10 s: training, 500 samples, save and load
def test_readme_python_example_runs(tmp_path, monkeypatch):
    code = readme_python_example()
    assert "steps=2000" in code and "SequenceGAN.load(" in code and ".sample(" in code
    for name in ("configs", "samples"):
        os.symlink(os.path.join(REPO, name), tmp_path / name)
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(code.replace("steps=2000", "steps=3"), "README.md (Python API)", "exec"), scope)
    synthetic = scope["synthetic"]
    assert list(synthetic.columns) == ["id", "time", "temperature", "humidity", "load"]
    assert synthetic["id"].nunique() == 500 and not synthetic.isna().any().any()
    assert os.path.isfile(tmp_path / "runs" / "my_model" / "data_summary.txt")
