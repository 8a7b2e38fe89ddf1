"""benchmarks/quality.py's table and picture, from a results document written by hand."""
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import quality  # noqa: E402


def _entry(name, length, disc, floor_disc):
    g = {"discriminative": disc, "predictive": 0.03, "context_fid": 0.5, "correlational": 1.5}
    f = {"discriminative": floor_disc, "predictive": 0.029, "context_fid": 0.08, "correlational": 1.0}
    targets = quality.TARGETS[name]
    g["predictive_above_floor"] = 100 * (0.03 / 0.029 - 1)
    return {"set": name, "length": length, "features": 28, "budget_minutes": 15.0, "steps": 4000,
            "steps_per_second": 4000 / 900, "ms_per_step_per_time_step": 900000 / 4000 / length,
            "protocol": "paper", "num_holdout": 1000, "repeats": 3, "generated": g, "floor": f,
            "discriminative_std": 0.01, "targets": targets,
            "met": {k: g.get(k) is not None and g[k] <= t for k, t in targets.items()}}


def test_table_shows_every_score_next_to_its_floor_and_says_which_targets_are_met(tmp_path):
    fixed = dict(_entry("wide", 24, 0.2, 0.01), set="wide (3000 steps)", budget_minutes=None, steps=3000)
    doc = {"cpu": "Test CPU", "sets": {"wide": _entry("wide", 24, 0.08, 0.01),
                                       "long64": _entry("long64", 64, 0.2, 0.02), "wide (3000 steps)": fixed}}
    table = quality.markdown(doc)
    lines = table.splitlines()
    wide = next(line for line in lines if line.startswith("| wide "))
    assert "0.0800 / 0.0100" in wide and "0.0300 / 0.0290 (+3.4%)" in wide and "0.5000 / 0.0800" in wide
    assert "discriminative ≤ 0.1 met" in wide and "predictive_above_floor ≤ 2.0 NOT met" in wide
    long = next(line for line in lines if line.startswith("| long64 "))
    assert "NOT met" in long and "| 64 x 28 |" in long and "| 15 min | 4000 |" in long
    assert "| wide (3000 steps) | 24 x 28 | 3000 steps | 3000 |" in table  # a --steps row: no time budget
    assert "Test CPU" in table
    doc["sets"]["long64"]["cpu"], doc["sets"]["wide"]["cpu"] = "Other CPU", "Test CPU"  # a row from another machine
    lines = quality.markdown(doc).splitlines()
    assert next(line for line in lines if "long64" in line).startswith("| long64 [Other CPU] | 64 x 28 |")
    assert next(line for line in lines if "wide" in line).startswith("| wide | 24 x 28 |")
    path = tmp_path / "q.png"
    quality.write_plot(doc, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("select", ["none", "discriminative"])
def test_a_fixed_step_run_records_the_scoring_selection_json_reports_and_zero_without_selection(tmp_path, select):
    from gan_sru.config import load_config

    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"), [
        f"run_dir={tmp_path}", "name=r", "data.num_sequences=48", "data.seq_len=8", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.discriminator.hidden_size=8", "train.steps=2",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.select_num=16", f"train.select={select}"])
    mark = quality.train_steps(cfg, progress=False)
    if select == "none":
        assert mark["select_seconds"] == 0.0
    else:
        with open(tmp_path / "r" / "selection.json") as f:
            assert mark["select_seconds"] == json.load(f)["seconds"] > 0


def test_scores_put_the_predictive_mae_above_its_floor_in_percent_and_check_the_wide_target():
    def result(pred, floor):
        scores = {"discriminative": {"mean": 0.05}, "predictive": {"mae": pred}, "context_fid": 0.1,
                  "correlational": {"mean": 1.0}}
        return {"generated": scores, "holdout": dict(scores, predictive={"mae": floor})}

    generated, floors, met = quality._scores(result(0.03059, 0.0300), quality.TARGETS["wide"])
    assert generated["predictive_above_floor"] == pytest.approx(1.967, abs=1e-3) and floors["predictive"] == 0.03
    assert met == {"discriminative": True, "predictive_above_floor": True}
    generated, _, met = quality._scores(result(0.0310, 0.0300), quality.TARGETS["wide"])
    assert generated["predictive_above_floor"] == pytest.approx(3.333, abs=1e-3) and not met["predictive_above_floor"]
    generated, _, met = quality._scores(dict(result(0.03, 0.03), holdout=None), quality.TARGETS["wide"])
    assert generated["predictive_above_floor"] is None and not met["predictive_above_floor"]  # no floor: not met


def test_table_mode_rewrites_the_table_and_picture_from_the_json_keeping_its_cpu(tmp_path, monkeypatch):
    selected = dict(_entry("wide", 24, 0.06, 0.02), select="discriminative", evaluated_step=1250)
    (tmp_path / "quality.json").write_text(json.dumps({"cpu": "Other CPU", "sets": {"wide": selected}}))
    monkeypatch.setattr(sys, "argv", ["quality.py", "--table", "--out", str(tmp_path)])
    quality.main()
    table = (tmp_path / "quality.md").read_text()
    assert "Other CPU" in table and "| 15 min | 4000, selected 1250 |" in table
    assert (tmp_path / "quality.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "quality.json").read_text())["sets"]["wide"] == selected  # nothing trained


def test_table_mode_without_results_says_which_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["quality.py", "--table", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match=r"--table: no results in .*quality.json"):
        quality.main()


def test_budgets_default_per_set_one_number_for_all_or_pairs_and_bad_text_names_the_part():
    import pytest

    sets = ["wide", "long128", "sines"]
    assert quality.parse_budgets(None, sets) == {s: quality.BUDGETS[s] for s in sets}
    assert quality.parse_budgets("2.5", sets) == {"wide": 2.5, "long128": 2.5, "sines": 2.5}
    assert quality.parse_budgets(1.0, sets) == {"wide": 1.0, "long128": 1.0, "sines": 1.0}  # --quick's number
    assert quality.parse_budgets("long128=30, sines=1", sets) == {"wide": quality.BUDGETS["wide"],
                                                                 "long128": 30.0, "sines": 1.0}
    assert quality.parse_budgets(None, ["mine"]) == {"mine": quality.DEFAULT_BUDGET}
    for text, words in (("long64=5", "'long64' is not one of --sets (wide, long128, sines)"),
                        ("wide=0", "'0' is not a positive number of minutes"),
                        ("wide=x", "could not convert string to float"),
                        ("wide=1,sines", "'sines' is not SET=MINUTES")):
        with pytest.raises(SystemExit, match=r"--minutes .*" + words.replace("(", r"\(").replace(")", r"\)")):
            quality.parse_budgets(text, sets)


def test_rescore_extends_a_rows_repeats_from_its_run_folder_and_keeps_the_row(tmp_path, monkeypatch):
    """--rescore scores the row's checkpoint again with more seeded repeats: the first ones are the row's own,
    the new row keeps the training's figures, the old row stays; an unknown row is named with the rows."""
    from gan_sru.commands import evaluate
    from gan_sru.config import load_config

    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"), [
        f"run_dir={tmp_path}", "name=r", "data.num_sequences=64", "data.seq_len=8", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.discriminator.hidden_size=8", "train.steps=2",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.select=none"])
    quality.train_steps(cfg, progress=False)
    run = tmp_path / "r"
    # the real scores with few training iterations (the protocol's take minutes)
    iterations = {"discriminative": 20, "predictive": 20, "context_fid": 5}
    original = evaluate.evaluate_run
    monkeypatch.setattr(evaluate, "evaluate_run", lambda *a, **kw: original(*a, **dict(kw, iterations=iterations)))
    first = evaluate.evaluate_run(str(run), step=2, num=12, repeats=3, seed=0, progress=False, protocol="fast")
    row = dict(_entry("sines", 8, first["generated"]["discriminative"]["mean"], 0.0), protocol="fast",
               num_holdout=12, evaluated_step=2, evaluation=first["out"], steps=2)
    out = tmp_path / "results"
    out.mkdir()
    (out / "quality.json").write_text(json.dumps({"cpu": "Test CPU", "sets": {"sines": row}}))
    monkeypatch.setattr(sys, "argv", ["quality.py", "--rescore", "sines", "--repeats", "5", "--out", str(out),
                                      "--no-progress"])
    quality.main()
    sets = json.loads((out / "quality.json").read_text())["sets"]
    assert sets["sines"] == row
    new = sets["sines [5 repeats]"]
    assert new["repeats"] == 5 and new["rescored_from"] == "sines" and new["steps"] == 2
    assert new["discriminative_scores"][:3] == first["generated"]["discriminative"]["scores"]
    assert new["evaluation"] == str(run / "evaluation_5_repeats")
    assert (run / "evaluation_5_repeats" / "metrics.json").exists() and (run / "evaluation" / "metrics.json").exists()
    assert "sines [5 repeats]" in (out / "quality.md").read_text()
    monkeypatch.setattr(sys, "argv", ["quality.py", "--rescore", "wide", "--out", str(out)])
    with pytest.raises(SystemExit, match=r"--rescore 'wide': no such row in .*quality.json; rows: \['sines'"):
        quality.main()

