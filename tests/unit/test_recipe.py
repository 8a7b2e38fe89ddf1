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
    assert smooth["train.batch_size"][0] == 16 and [t["name"] for t in smooth["train.terms"][0]] == \
        ["moment", "predictor"]
    assert smooth["model.generator.hidden_size"][0] == 48 and smooth["train.budget"][0] == "15m"
    rng = np.random.default_rng(1)
    noisy = choose(data_facts([rng.standard_normal((48, 3)) for _ in range(32)]))
    assert [t["name"] for t in noisy["train.terms"][0]] == ["moment"]
    kept = choose(data_facts(sines()), user={"train.batch_size", "train.budget"})
    assert "train.batch_size" not in kept and "train.budget" not in kept


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
