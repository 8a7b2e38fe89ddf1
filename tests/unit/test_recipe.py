"""gan_sru/recipe.py: facts measured from sequences, choices with reasons, the user's keys kept, recipe.json."""
import json

import numpy as np
import pytest

from gan_sru.recipe import choose, data_facts, recipe_lines, write_recipe


def sines(n=64, length=48, period=12, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(length)[:, None]
    return [np.sin(2 * np.pi * t / period + rng.uniform(0, 6.3)) * np.array([1.0, 10.0])
            + noise * rng.standard_normal((length, 2)) for _ in range(n)]


def test_facts_of_smooth_seasonal_data():
    f = data_facts(sines())
    assert (f["width"], f["length"], f["count"]) == (2, 48, 64)
    assert f["season"] == 12
    assert f["smoothness"] > 0.8  # the changes of a sine are a sine
    assert f["scale_ratio"] == pytest.approx(10.0, rel=0.05)


def test_facts_of_white_noise():
    rng = np.random.default_rng(1)
    f = data_facts([rng.standard_normal((48, 3)) for _ in range(32)])
    assert f["season"] is None
    assert f["smoothness"] == pytest.approx(-0.5, abs=0.1)  # differences of white noise: -1/2 at lag 1


def test_choices_follow_the_data_and_keep_the_users_keys():
    smooth = choose(data_facts(sines()))
    assert smooth["train.batch_size"][0] == 16  # 64 sequences: a quarter
    assert smooth["model.generator.hidden_size"][0] == 48 and smooth["train.budget"][0] == "15m"
    assert [t["name"] for t in smooth["train.terms"][0]] == ["moment", "innovation", "sequence_moment"]
    assert smooth["model.generator.oscillators"][0] is True
    assert smooth["model.generator.bidirectional"][0] is True
    assert "model.discriminator.shift" not in choose(data_facts(sines()), user={"model.discriminator.shift"})
    wide, why = choose({**data_facts(sines()), "width": 28})["model.generator.bidirectional"]
    assert wide is False and "28 features" in why
    assert choose({**data_facts(sines()), "width": 16})["model.generator.bidirectional"][0] is True
    assert "model.generator.bidirectional" not in choose(data_facts(sines()), user={"model.generator.bidirectional"})
    assert "train.terms" not in choose(data_facts(sines()), user={"train.terms"})
    many = choose(data_facts(sines(n=600)))
    assert "train.batch_size" not in many  # enough sequences for the default batch
    kept = choose(data_facts(sines()), user={"train.batch_size", "train.budget"})
    assert "train.batch_size" not in kept and "train.budget" not in kept and "train.steps" not in kept


def test_long_windows_get_twice_the_learning_rate():
    assert "train.lr" not in choose(data_facts(sines(length=24)))  # the config's 0.001
    for length in (48, 64, 256):
        lr, why = choose(data_facts(sines(length=length)))["train.lr"]
        assert lr == 0.002 and f"{length} steps" in why and "2026-12-02-long-rate.md" in why
    assert "train.lr" not in choose(data_facts(sines(length=64)), user={"train.lr"})


def test_long_windows_get_a_batch_of_at_most_8192_steps():
    assert "train.batch_size" not in choose(data_facts(sines(n=600, length=128)))  # the config's 128
    for length, batch in ((256, 32), (300, 16), (1024, 8), (4096, 8)):
        value, why = choose(data_facts(sines(n=600, length=length)))["train.batch_size"]
        assert value == batch and f"{length} steps" in why and "2026-12-07-long-batch.md" in why
    assert choose(data_facts(sines(n=64, length=256)))["train.batch_size"][0] == 16  # few sequences: the smaller
    assert "train.batch_size" not in choose(data_facts(sines(n=600, length=256)), user={"train.batch_size"})


def test_recipe_json_and_lines(tmp_path):
    facts = data_facts(sines())
    choices = choose(facts)
    path = write_recipe(str(tmp_path), facts, choices)
    doc = json.loads(open(path).read())
    assert doc["facts"]["season"] == 12
    assert doc["choices"]["train.batch_size"] == {"value": 16, "reason": choices["train.batch_size"][1]}
    lines = recipe_lines(choices)
    assert len(lines) == len(choices) and lines[0].startswith("recipe: model.generator.hidden_size = 48 (")


def test_no_sequences_is_refused():
    with pytest.raises(ValueError, match="no sequences"):
        data_facts([])


# ------------------------------------------------------------------ the recipe in training

def series_csv(path, n=400):
    """One smooth two-feature series as a wide CSV (time + two columns), for `train --data` without a config."""
    t = np.arange(n)
    rows = ["time,temp,load"] + [f"{i},{np.sin(i / 9):.5f},{np.cos(i / 5) + 0.01 * (i % 3):.5f}" for i in t]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_set_keys_are_what_the_config_was_given():
    from gan_sru.config import load_config, resolve_config, set_keys

    cfg = load_config(None, ["train.lr=0.002", "data.window=12"])
    assert set_keys(cfg) == {"train.lr", "data.window"}
    assert set_keys(resolve_config(cfg)) == set_keys(cfg)  # resolving again keeps what is unset unset
    cfg.train.batch_size = 16  # code that sets a key sets it
    assert "train.batch_size" in set_keys(cfg)


def test_train_with_only_a_data_file_uses_the_recipe(tmp_path, monkeypatch, capfd):
    from gan_sru.commands.main import main
    from gan_sru.config import load_config

    data = series_csv(tmp_path / "plant 7.csv")
    monkeypatch.chdir(tmp_path)
    rc = main(["train", "--data", str(data), "--window", "16", "--no-progress", "--set", "train.budget=3s",
               "--set", "model.generator.hidden_size=32", "--set", "train.checkpoint_every=1000000"])
    assert rc == 0
    out = capfd.readouterr().out
    run = tmp_path / "runs" / "plant_7"  # named after the file
    doc = json.loads((run / "recipe.json").read_text())
    assert doc["facts"]["width"] == 2 and doc["facts"]["length"] == 16
    # the keys the user set stay theirs: not chosen, and the run's config holds the user's values
    assert "model.generator.hidden_size" not in doc["choices"] and "train.budget" not in doc["choices"]
    cfg = load_config(str(run / "config.yaml"))
    assert cfg.model.generator.hidden_size == 32 and cfg.data.window == 16 and cfg.train.budget == "3s"
    chosen = doc["choices"]["model.discriminator.hidden_size"]
    assert cfg.model.discriminator.hidden_size == chosen["value"]
    for key, choice in doc["choices"].items():  # every choice printed with its reason, one line each
        assert f"recipe: {key} = {json.dumps(choice['value'])} ({choice['reason']})" in out


def test_a_run_without_steps_or_budget_gets_the_default_budget(tmp_path):
    from gan_sru.config import load_config
    from gan_sru.recipe import DEFAULT_BUDGET, STEP_CAP, apply_recipe

    cfg = load_config(None, ["data.source=file", f"data.path={tmp_path / 'x.csv'}"])
    out, _, choices = apply_recipe(cfg, sines())
    assert (out.train.budget, out.train.steps) == (DEFAULT_BUDGET, STEP_CAP)
    out, _, choices = apply_recipe(load_config(None, ["train.steps=300"]), sines())
    assert out.train.budget is None and out.train.steps == 300 and "train.budget" not in choices


def test_ds_shift_from_48_to_127_steps_and_none_outside():
    """D's random starts from 48 to 127 steps (they scored worse on BasicMotions at 24 steps and on the weather
    set at 128); the reason names the length and the results page."""
    for length in (48, 64, 127):
        shift, why = choose(data_facts(sines(length=length)))["model.discriminator.shift"]
        assert shift == 0.125 and f"{length} steps" in why and "2026-12-05-d-shift.md" in why
    for length in (8, 24, 47, 128, 256):
        shift, why = choose(data_facts(sines(length=length)))["model.discriminator.shift"]
        assert shift == 0.0 and f"{length} steps" in why and "2026-12-06-lags-shift-length.md" in why
    assert "BasicMotions" in choose(data_facts(sines(length=24)))["model.discriminator.shift"][1]
    assert "weather set" in choose(data_facts(sines(length=128)))["model.discriminator.shift"][1]
    assert "model.discriminator.shift" not in choose(data_facts(sines(length=24)), user={"model.discriminator.shift"})


def test_the_recipes_learning_rate_reaches_the_config_and_the_users_rate_stays():
    from gan_sru.config import load_config
    from gan_sru.recipe import apply_recipe

    assert apply_recipe(load_config(None, []), sines(length=64))[0].train.lr == 0.002
    assert apply_recipe(load_config(None, []), sines(length=24))[0].train.lr == 0.001
    assert apply_recipe(load_config(None, ["train.lr=0.0005"]), sines(length=64))[0].train.lr == 0.0005


def test_the_recipes_shift_reaches_the_config_and_the_users_value_stays():
    from gan_sru.config import load_config
    from gan_sru.recipe import apply_recipe

    assert apply_recipe(load_config(None, []), sines())[0].model.discriminator.shift == 0.125
    assert apply_recipe(load_config(None, []), sines(length=24))[0].model.discriminator.shift == 0.0
    off = load_config(None, ["model.discriminator.shift=0"])
    assert apply_recipe(off, sines())[0].model.discriminator.shift == 0.0
    on = load_config(None, ["model.discriminator.shift=0.25"])
    assert apply_recipe(on, sines(length=24))[0].model.discriminator.shift == 0.25


def test_train_needs_a_config_or_a_data_file(capsys):
    from gan_sru.commands.main import main

    assert main(["train", "--no-progress"]) != 0
    assert "expected --config FILE, or --data FILE" in capsys.readouterr().err


def test_a_key_set_on_a_default_section_stays_set():
    """Code that sets train.steps on a config whose train section was never given (the Python API does) sets
    it: resolving the config again keeps it, and the recipe leaves it alone."""
    from gan_sru.config import load_config, resolve_config, set_keys
    from gan_sru.recipe import apply_recipe

    cfg = load_config(None)
    cfg["train"]["steps"] = 2
    again = resolve_config(cfg)
    assert again.train.steps == 2 and set_keys(again) == {"train.steps"}
    out, _, choices = apply_recipe(again, sines())
    assert out.train.steps == 2 and out.train.budget is None and "train.budget" not in choices
