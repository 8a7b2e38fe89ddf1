"""benchmarks/holdout_split.py end to end on a short series: every split's counts add up, the reference row
comes from an independent series, and the floors are finite scores."""
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_benchmark_writes_each_splits_counts_and_floors(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "holdout_split.py"), "--rows", "600",
                          "--window", "12", "--kinds", "factors", "--blocks", "2", "--num", "60", "--repeats", "1",
                          "--protocol", "fast", "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads((tmp_path / "holdout_split.json").read_text())["rows"]
    assert [r["split"] for r in rows] == ["independent series (reference)", "random", "blocks (2)"]
    windows = 600 - 12 + 1
    ref, random, blocks = rows
    assert ref["held_out"] == windows and ref["left_out"] == 0
    assert random["train"] + random["held_out"] == windows and random["left_out"] == 0
    assert random["held_out"] == blocks["held_out"] == round(windows * 0.1)
    assert blocks["left_out"] > 0 and blocks["train"] + blocks["held_out"] + blocks["left_out"] == windows
    assert blocks["left_out"] <= 2 * 2 * 11  # at most the 11 windows on either side of each of the 2 runs
    for r in rows:
        assert 0 <= r["discriminative"] <= 0.5 and 0 < r["predictive"] < 1
    assert "| factors | blocks (2) |" in out.stdout
