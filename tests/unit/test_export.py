"""`gan-sru export`: the .nnp (nnabla's NNP loader) and the .onnx (onnxruntime) give `generate`'s samples on the
same noise, for the default generator, one with every optional part and conditional runs (attributes and Gumbel
noise as inputs, categories one-hot); the metadata rebuilds the run's encoding; the docs' onnxruntime script writes
`generate`'s table; errors are one clear line.

Tolerance: both files compute what `generate` computes, in float32, with the same weights; they differ only in
the order of float32 operations (F.affine instead of the BLAS matmul, the recurrence unrolled in plain ops
instead of the numba kernel, onnxruntime's own sigmoid/tanh, layer normalisation as ReduceMean/Pow ops) and in
the inverse scaling done in float32 instead of float64. Measured here: at most 2e-7 of a feature's range
(about 3 float32 roundings of the output), except where layer normalisation acts on a 3-feature input (the
"full" generator): dividing by a row's small standard deviation amplifies the rounding differences to 7e-6
in onnxruntime. TOL = 5e-5 of each feature's range leaves a 7x margin over that worst case, while the trained
weights instead of their moving average (4 steps of training) are already 1e-2 off (checked below).
Conditional runs (no layer normalisation): at most 1.7e-7 of the range, the one-hot channels equal; checked to
COND_TOL = 1e-5, and each step's category exactly.
"""
import argparse
import io
import json
import os
import re
import sys

import nnabla as nn
import numpy as np
import onnx
import onnxruntime as ort
import pandas as pd
import pytest
from conftest import unwritable
from nnabla.utils.nnp_graph import NnpLoader

from gan_sru import CheckpointError, ConfigError, DataError, sampling
from gan_sru.commands import export as export_cmd
from gan_sru.commands.main import build_parser
from gan_sru.commands.main import main as cli
from gan_sru.conditional.conditions import draw_attribute_rows
from gan_sru.config import load_config
from gan_sru.data.attributes import Encoding
from gan_sru.data.categorical import Categories
from gan_sru.export import ExportError, export_generator
from gan_sru.networks import sample_noise
from gan_sru.onnx_graph import float_comparisons, single_assignment
from gan_sru.sampling import Reference, TrainedRun
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=64", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.generator.noise_dim=3", "model.discriminator.hidden_size=8", "train.steps=4",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.log_every=2"]
# every optional part of the generator: two directions, no per-sequence noise
FULL = ["model.generator.bidirectional=true", "model.generator.static_noise_dim=0"]
# the oscillator bank on the log grid, its frequencies tuned per sequence (sin, cos, exp, tanh of the per-sequence
# noise)
OSCILLATORS = ["model.generator.oscillators=true", "model.generator.oscillator_tuning=true",
               "model.generator.oscillator_grid=log"]
TOL = 5e-5  # of each feature's range; see the module docstring
COND_TOL = 1e-5  # conditional runs: of each feature's range, and absolute for the one-hot channels
B = 5
LENGTHS = np.array([8, 3, 8, 5, 2])


def train_tiny(tmp_path_factory, extra=()):
    cfg = load_config(os.path.join(REPO, "configs/sines.yaml"),
                      TINY + list(extra) + [f"run_dir={tmp_path_factory.mktemp('runs')}"])
    nn.clear_parameters()  # the two runs' generators differ in shape
    with open(os.devnull, "w") as devnull:
        return Trainer(cfg, progress=False, out=devnull).train()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {"default": train_tiny(tmp_path_factory), "full": train_tiny(tmp_path_factory, FULL),
            "oscillators": train_tiny(tmp_path_factory, OSCILLATORS)}


# conditional runs: the labelled sines (a class attribute, a per-step state, the oscillator bank with per-class
# gains); a long CSV table with dates, a text and a numeric attribute and no per-sequence noise; the same table
# with a per-step integer category only
CLASSES = ["data.source=sines_classes", "data.num_sequences=60", "data.num_features=2", "data.seq_len=8",
           "data.holdout_fraction=0.25", "model.generator.oscillators=true", "model.generator.oscillator_grid=linear"]
TABLE = ["data.source=file", "data.csv_id_column=id", "data.csv_time_column=time",
         "data.csv_feature_columns=[temp, load]", "model.generator.noise_dim=3", "data.holdout_fraction=0.25"]
CONDITIONAL = {"classes": CLASSES,
               "table": TABLE + ["data.attributes=[kind, size]", "model.generator.static_noise_dim=0"],
               "events": TABLE + ["data.categorical=[event]"]}
TINY_CONDITIONAL = ["train.steps=2", "train.batch_size=8", "train.checkpoint_every=2", "train.sample_every=1000",
                    "train.log_every=2", "model.generator.hidden_size=8", "model.discriminator.hidden_size=8"]


def write_table(path):
    """40 sequences of 8 hourly steps: features temp and load, attributes kind (a/b) and size (a number), a
    per-step event (0, 1, 2)."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        kind, size = "ab"[i % 2], float(np.round(rng.uniform(1, 5), 3))
        for t in range(8):
            rows.append({"id": f"s{i}", "time": pd.Timestamp("2024-01-01") + pd.Timedelta(hours=t),
                         "temp": rng.normal() + size, "load": rng.normal(), "kind": kind, "size": size,
                         "event": int(rng.integers(0, 3))})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def conditional_runs(tmp_path_factory):
    table = write_table(tmp_path_factory.mktemp("data") / "table.csv")
    out = {}
    for name, extra in CONDITIONAL.items():
        path = [f"data.path={table}"] if "data.source=file" in extra else []
        cfg = load_config(None, TINY_CONDITIONAL + extra + path + [f"name={name}",
                                                                   f"run_dir={tmp_path_factory.mktemp('runs')}"])
        nn.clear_parameters()
        with open(os.devnull, "w") as devnull:
            out[name] = Trainer(cfg, progress=False, out=devnull).train()
    return out


@pytest.fixture(scope="module")
def exported(conditional_runs, tmp_path_factory):
    """Each conditional run's .onnx, exported once."""
    folder = tmp_path_factory.mktemp("exported")
    out = {name: str(folder / f"{name}.onnx") for name in conditional_runs}
    for name, path in out.items():
        export_generator(conditional_runs[name], path, "onnx")
    nn.clear_parameters()
    return out


def reference(run_path, step, length, seed):
    """What the project's generate path gives: noise as the Sampler draws it (one batch of B), its
    samples in data units, and the run's scaler. Leaves no parameters behind."""
    run = TrainedRun(run_path, step)
    gcfg = run.cfg["model"]["generator"]
    noise = sample_noise(gcfg, length, B, np.random.default_rng([seed, sampling._GENERATE_STREAM]))
    x = run.sampler.sample(length, B, seed, LENGTHS)
    ref = run.scaler.inverse(x)
    nn.clear_parameters()
    return noise, ref, run.scaler


def exported_inputs(noise, length):
    """The exported network's batch-major feed for the generator's time-major noise."""
    feed = {"noise": np.ascontiguousarray(noise["step"].transpose(1, 0, 2))}
    if noise["static"].shape[1] > 0:
        feed["static_noise"] = noise["static"]
    feed["mask"] = (np.arange(length)[None, :] < LENGTHS[:, None]).astype(np.float32)
    return feed


def run_nnp(path, feed):
    net = NnpLoader(str(path)).get_network("generator")
    assert sorted(net.inputs) == sorted(feed) and list(net.outputs) == ["samples"]
    for k, v in feed.items():
        net.inputs[k].d = v
    y = net.outputs["samples"]
    y.forward(clear_buffer=True)
    return y.d.copy()


def run_onnx(path, feed):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == list(feed) and [o.name for o in sess.get_outputs()] == ["samples"]
    return sess.run(["samples"], feed)[0]


def assert_same_samples(got, ref, scaler, what):
    """Equal to `ref` at valid steps (to TOL of each feature's range), exactly 0 at padded steps."""
    valid = np.arange(got.shape[1])[None, :] < LENGTHS[:, None]
    assert got.shape == ref.shape and got.dtype == np.float32, what
    err = np.abs(got - ref)[valid] / scaler.scale
    assert err.max() <= TOL, f"{what}: max error {err.max():.2e} of the range"
    assert np.all(got[~valid] == 0), what


@pytest.mark.parametrize("name", ["default", "full", "oscillators"])
def test_nnp_and_onnx_give_generates_samples(runs, tmp_path, name):
    run_path = runs[name]
    noise, ref, scaler = reference(run_path, 4, 8, seed=7)
    paths = {fmt: tmp_path / f"generator.{fmt}" for fmt in ("nnp", "onnx")}
    for fmt, path in paths.items():
        info = export_generator(run_path, str(path), fmt, batch_size=B)
        batch = "batch" if fmt == "onnx" else B  # ONNX: a dynamic batch axis
        assert info["step"] == 4 and info["weights"] == "moving average" and info["output"] == (batch, 8, 5)
    nn.clear_parameters()  # the files alone: nothing of the project's parameters is left to lean on
    feed = exported_inputs(noise, 8)
    assert_same_samples(run_nnp(paths["nnp"], feed), ref, scaler, f"{name} nnp")
    assert_same_samples(run_onnx(paths["onnx"], feed), ref, scaler, f"{name} onnx")

    model = onnx.load(str(paths["onnx"]))
    onnx.checker.check_model(model, full_check=True)
    assert {op.domain for op in model.opset_import} == {""} and model.opset_import[0].version == 13
    assert {p.key: p.value for p in model.metadata_props}["gan_sru.checkpoint_step"] == "4"


def test_export_holds_the_moving_average_not_the_trained_weights(runs, tmp_path):
    run_path = runs["default"]
    noise, ref, scaler = reference(run_path, 4, 8, seed=1)
    export_generator(run_path, str(tmp_path / "g.onnx"), "onnx", batch_size=B)
    got = run_onnx(tmp_path / "g.onnx", exported_inputs(noise, 8))
    assert_same_samples(got, ref, scaler, "onnx")

    # the same noise through the trained (not averaged) weights: far outside the tolerance
    run = TrainedRun(run_path, 4)
    for name, var in nn.get_parameters(grad_only=False).items():
        var.d = run.checkpoint.params[name]
    raw = run.scaler.inverse(run.sampler.sample(8, B, 1, LENGTHS))
    valid = np.arange(8)[None, :] < LENGTHS[:, None]
    assert (np.abs(raw - got)[valid] / scaler.scale).max() > 20 * TOL


def test_checkpoint_and_length_flags(runs, tmp_path, capsys):
    """--checkpoint picks the weights; --length longer than training runs the time feature past 1, with a note."""
    run_path = runs["default"]
    noise, ref, scaler = reference(run_path, 2, 12, seed=3)
    args = argparse.Namespace(run=run_path, checkpoint=2, format="nnp", out=str(tmp_path / "g.nnp"),
                              batch_size=B, length=12)
    assert export_cmd.main(args) == 0
    out = capsys.readouterr().out
    assert "checkpoint step 2" in out and "note: --length 12 is longer" in out and "samples (5, 12, 5)" in out
    assert_same_samples(run_nnp(tmp_path / "g.nnp", exported_inputs(noise, 12)), ref, scaler, "step 2, L 12")


def docs_blocks(condition=None):
    """The export page's Python blocks (docs/export.md): the onnxruntime one (with `condition` in place of its
    own when given) and the nnabla one."""
    page = open(os.path.join(REPO, "docs", "export.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) == 2 and "onnxruntime" in blocks[0]
    if condition is not None:
        blocks[0], count = re.subn(r"^condition = \{.*?\}", f"condition = {condition!r}", blocks[0], flags=re.M)
        assert count == 1
    return blocks


def run_block(block):
    namespace = {}
    exec(compile(block, "docs/export.md", "exec"), namespace)
    return namespace


def generate_table_on_the_same_noise(run_path, namespace, folder, monkeypatch):
    """`gan-sru generate`'s table (its .csv, read back) for the docs block's noise, condition and lengths."""
    from gan_sru.commands.generate import generate

    feed, lengths = namespace["feed"], namespace["lengths"]
    num, length = feed["mask"].shape
    assert np.all(lengths == length)  # the runs here have one training length, which generate draws too
    noise = {"step": feed["noise"].transpose(1, 0, 2), "gumbel": feed.get("gumbel_noise", np.zeros((num, length, 0))),
             "static": feed.get("static_noise", np.zeros((num, 0), np.float32))}
    noise["gumbel"] = noise["gumbel"].transpose(1, 0, 2)

    def same_noise(gcfg, L, batch_size, rng, cond=None):
        assert (L, batch_size) == (length, num)
        return {k: v for k, v in noise.items() if k != "gumbel" or cond is not None and cond.categorical}

    monkeypatch.setattr(sampling, "sample_noise", same_noise)
    conditions = None
    if "attributes" in feed:
        conditions = str(folder / "conditions.csv")
        pd.DataFrame([namespace["condition"]] * num).to_csv(conditions, index=False)
    nn.clear_parameters()
    paths = generate(run_path, num=num, seed=0, out=str(folder / "generated.csv"), progress=False,
                     conditions=conditions)
    nn.clear_parameters()
    return pd.read_csv(paths["file"])


@pytest.mark.parametrize("name, condition, columns", [
    ("default", None, ["id", "time", "f0", "f1", "f2", "f3", "f4"]),
    ("classes", {"class": "c2"}, ["id", "time", "f0", "f1", "state", "class"]),
    ("table", {"kind": "b", "size": 2.5}, ["id", "time", "temp", "load", "kind", "size"]),
    ("events", None, ["id", "time", "temp", "load", "event"]),
])
def test_docs_export_snippet_writes_generates_table(runs, conditional_runs, tmp_path, monkeypatch, capsys, name,
                                                    condition, columns):
    """The export page's onnxruntime block runs as written on a file its command writes, and its table is the one
    `generate` writes on the same noise and condition: the same columns (the data's names), ids, times (dates for
    the table run), category labels and attributes, and the features to TOL of their range. The nnabla block
    runs on the unconditional run's .nnp."""
    run_path = {**runs, **conditional_runs}[name]
    monkeypatch.chdir(tmp_path)
    assert cli(["export", "--run", run_path, "--out", "generator.onnx"]) == 0
    printed = capsys.readouterr().out
    assert ("gumbel_noise Gumbel(0, 1)" in printed) == (name in ("classes", "events"))
    nn.clear_parameters()
    onnx_block, nnp_block = docs_blocks(condition)
    namespace = run_block(onnx_block)
    table = namespace["table"]
    assert list(table.columns) == columns and table["id"].nunique() == 64
    ours = pd.read_csv(io.StringIO(table.to_csv(index=False)))
    theirs = generate_table_on_the_same_noise(run_path, namespace, tmp_path, monkeypatch)
    scale = np.array(json.loads(ort.InferenceSession("generator.onnx").get_modelmeta()
                                .custom_metadata_map["gan_sru.features"])["scale"])
    pd.testing.assert_frame_equal(ours, theirs, check_dtype=False, check_exact=False, rtol=0, atol=TOL * scale.max())
    if name == "table":
        assert theirs["time"].iloc[:3].tolist() == ["2024-01-01 00:00:00", "2024-01-01 01:00:00",
                                                    "2024-01-01 02:00:00"]
    if name == "default":
        run = TrainedRun(run_path)
        nn.clear_parameters()
        assert cli(["export", "--run", run_path, "--out", "generator.nnp"]) == 0
        samples = run_block(nnp_block)["samples"]
        # a sigmoid generator: every value within the data's range
        assert samples.shape == (64, 8, 5) and np.isfinite(samples).all()
        assert np.all(samples >= run.scaler.min - 1e-5) and np.all(samples <= run.scaler.max + 1e-5)


@pytest.mark.parametrize("condition, message", [
    ({"class": "c7"}, r"attribute 'class': value 'c7' was never seen in training; expected one of \['c0', 'c1', "
                      r"'c2'\]$"),
    ({"class": "c1", "colour": "red"}, r"condition 'colour': not an attribute of the model; expected one of "
                                      r"\['class'\]$"),
    ({}, r"condition: no value for attribute 'class'; expected one for each of \['class'\]$"),
    ({"kind": "a", "size": "big"}, r"attribute 'size': value 'big' is not a number; expected a number \(training "
                                   r"range [0-9.]+ to [0-9.]+\)$"),
])
def test_docs_encode_names_a_bad_condition_and_what_was_expected(conditional_runs, exported, condition, message):
    """The docs block's `encode` refuses a condition the file cannot take, as `generate` refuses it (for a label
    never seen in training, the same words as gan_sru's own check)."""
    run = "table" if "size" in condition else "classes"
    meta = json.loads(ort.InferenceSession(exported[run]).get_modelmeta().custom_metadata_map["gan_sru.attributes"])
    encode = run_block(docs_blocks()[0].split("\ncondition = ")[0].replace('"generator.onnx"',
                                                                           repr(exported[run])))["encode"]
    with pytest.raises(ValueError, match=message):
        encode(condition, meta)
    if condition == {"class": "c7"}:
        enc = TrainedRun(conditional_runs["classes"]).encoding
        nn.clear_parameters()
        with pytest.raises(DataError, match=r"column 'class': value 'c7' was never seen in training; expected one of "
                                            r"\['c0', 'c1', 'c2'\]"):
            enc.encode_attributes([["c7"]])


def test_single_assignment_keeps_the_meaning_of_repeated_names():
    """Two Constants under one name with different values: each use reads the one defined before it."""
    h = onnx.helper
    nodes = [h.make_node("Constant", [], ["k"], value=h.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.0])),
             h.make_node("Add", ["x", "k"], ["y1"]),
             h.make_node("Constant", [], ["k"], value=h.make_tensor("v", onnx.TensorProto.FLOAT, [1], [2.0])),
             h.make_node("Mul", ["y1", "k"], ["y"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    with pytest.raises(onnx.checker.ValidationError, match="single static assignment"):
        onnx.checker.check_model(model)
    single_assignment(model.graph)
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([0.0, 1.0, -3.0], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], (x + 1) * 2)


# ---------------------------------------------------------------- errors

def test_unknown_format_is_refused(runs, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["export", "--run", runs["default"], "--format", "tflite", "--out", "g.tflite"])
    assert e.value.code == 2 and "invalid choice: 'tflite' (choose from 'nnp', 'onnx')" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="--format 'tflite': expected one of nnp, onnx"):
        export_generator(runs["default"], str(tmp_path / "g.tflite"), "tflite")


@pytest.mark.parametrize("argv, message", [
    (["--run", "{tmp}/nope"], r"--run {tmp}/nope: no such run folder"),
    (["--checkpoint", "3"], r"no checkpoint at step 3; available: \[2, 4\]"),
    (["--format", "onnx", "--out", "{tmp}/g.nnp"], r"--out {tmp}/g.nnp: the extension says nnp but --format is onnx"),
    (["--out", "{tmp}/g.bin"], r"--out {tmp}/g.bin: expected a name ending in .nnp for --format nnp"),
    (["--out", "{tmp}"], r"--out {tmp}: is a folder"),
    (["--batch-size", "0"], r"--batch-size 0: expected at least 1"),
    (["--length", "1"], r"--length 1: expected at least 2 steps"),
    (["--length", "100000"], r"--length 100000: at most 256 steps can be exported \(the file unrolls the recurrence "
                             r"over every step and nnabla's saver takes time superlinear in the steps\)"),
])
def test_bad_arguments_are_one_clear_line(runs, tmp_path, capsys, argv, message):
    base = {"--run": runs["default"], "--format": "nnp", "--out": "{tmp}/g.nnp"}
    opts = dict(base, **dict(zip(argv[::2], argv[1::2])))
    args = [x.replace("{tmp}", str(tmp_path)) for kv in opts.items() for x in kv]
    assert cli(["export"] + args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert re.search(message.replace("{tmp}", re.escape(str(tmp_path))), err), err
    assert not (tmp_path / "g.nnp").exists()


def test_run_and_checkpoint_errors_are_checkpoint_errors(runs, tmp_path):
    with pytest.raises(CheckpointError, match="no such run folder"):
        export_generator(str(tmp_path / "nope"), str(tmp_path / "g.nnp"), "nnp")
    with pytest.raises(CheckpointError, match="not a run folder"):
        export_generator(str(tmp_path), str(tmp_path / "g.nnp"), "nnp")
    assert os.listdir(tmp_path) == []


def test_unwritable_out_is_refused_and_leaves_nothing(runs, tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    with unwritable(folder):
        with pytest.raises(ExportError, match=rf"--out {re.escape(str(folder))}/g.onnx: cannot write the exported "
                                              r"file \((Permission denied|Operation not permitted)\)"):
            export_generator(runs["default"], str(folder / "g.onnx"), "onnx", batch_size=B)
    assert os.listdir(folder) == []


def test_missing_onnx_exporter_names_the_install(runs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "nnabla.utils.converter.onnx", None)  # as on a machine without it
    with pytest.raises(ExportError, match=r"--format onnx needs nnabla-converter's ONNX exporter .* "
                                          r"pip install --no-deps 'nnabla-converter==1.39.\*'"):
        export_generator(runs["default"], str(tmp_path / "g.onnx"), "onnx", batch_size=B)
    assert not (tmp_path / "g.onnx").exists()


def test_onnx_metadata_names_the_features_scaling_and_lengths_and_the_format_follows_the_name(runs, tmp_path):
    run = TrainedRun(runs["default"])
    info = export_generator(runs["default"], str(tmp_path / "g.onnx"), None, batch_size=B)
    assert info["format"] == "onnx"
    meta = {p.key: p.value for p in onnx.load(str(tmp_path / "g.onnx")).metadata_props}
    features, lengths = json.loads(meta["gan_sru.features"]), json.loads(meta["gan_sru.lengths"])
    assert features["names"] == [f"f{k}" for k in range(5)]
    np.testing.assert_array_equal(features["min"], run.scaler.min)
    np.testing.assert_array_equal(features["scale"], run.scaler.inverse_scale)
    assert lengths["max_len"] == 8 and sum(lengths["training"].values()) == len(Reference.of_run(run).lengths)
    assert export_generator(runs["default"], str(tmp_path / "g.nnp"), None, batch_size=B)["format"] == "nnp"
    with pytest.raises(ConfigError, match=r"--out .*g\.bin: cannot tell the format from the name; end it in "
                                          r"\.onnx or \.nnp, or pass --format"):
        export_generator(runs["default"], str(tmp_path / "g.bin"), None)


@pytest.mark.parametrize("n", [1, 10])
def test_onnx_has_a_dynamic_batch_equal_to_generate_at_any_size(runs, tmp_path, n):
    """One exported file serves batches of 1 and 10: each equals generate's samples for the same noise."""
    run = TrainedRun(runs["default"], 4)
    lengths = np.array([8, 5, 8, 2, 7, 8, 3, 8, 6, 4][:n])
    noise = sample_noise(run.cfg.model.generator, 8, n, np.random.default_rng([3, sampling._GENERATE_STREAM]))
    ref = run.scaler.inverse(run.sampler.sample(8, n, 3, lengths))
    nn.clear_parameters()
    export_generator(runs["default"], str(tmp_path / "g.onnx"), "onnx")
    sess = ort.InferenceSession(str(tmp_path / "g.onnx"), providers=["CPUExecutionProvider"])
    assert [i.shape[0] for i in sess.get_inputs()] == ["batch"] * len(sess.get_inputs())
    feed = {"noise": np.ascontiguousarray(noise["step"].transpose(1, 0, 2)),
            "mask": (np.arange(8)[None, :] < lengths[:, None]).astype(np.float32)}
    if noise["static"].shape[1] > 0:
        feed["static_noise"] = noise["static"]
    got = sess.run(["samples"], {i.name: feed[i.name] for i in sess.get_inputs()})[0]
    valid = feed["mask"].astype(bool)
    assert got.shape == (n, 8, 5) and np.all(got[~valid] == 0)
    assert (np.abs(got - ref)[valid] / run.scaler.scale).max() <= TOL


# ---------------------------------------------------------------- conditional runs

LENGTHS10 = np.array([8, 5, 8, 2, 7, 8, 3, 8, 6, 4])


def conditional_reference(run_path, n, seed):
    """generate's path for n sequences: the noise the Sampler draws (Gumbel noise included), attribute rows
    resampled from training and encoded, the samples in data units ((n, 8, C + K)). Returns (batch-major feed of
    the exported file, samples, run)."""
    run = TrainedRun(run_path)
    enc, lengths = run.encoding, LENGTHS10[:n]
    noise = sample_noise(run.cfg.model.generator, 8, n, np.random.default_rng([seed, sampling._GENERATE_STREAM]), enc)
    feed = {"noise": np.ascontiguousarray(noise["step"].transpose(1, 0, 2))}
    if noise["static"].shape[1] > 0:
        feed["static_noise"] = noise["static"]
    attrs = None
    if enc.attributes:
        rows = draw_attribute_rows(enc, Reference.of_run(run).attributes, n, seed)
        feed["attributes"] = attrs = enc.encode_attributes(rows)
    if enc.categorical:
        feed["gumbel_noise"] = np.ascontiguousarray(noise["gumbel"].transpose(1, 0, 2))
    feed["mask"] = (np.arange(8)[None, :] < lengths[:, None]).astype(np.float32)
    ref = run.scaler.inverse(run.sampler.sample(8, n, seed, lengths, attrs))
    nn.clear_parameters()
    return feed, ref, run


def assert_same_conditional_samples(got, ref, feed, run, what):
    """Continuous channels to COND_TOL of their range, one-hot channels to COND_TOL with the same category at every
    valid step, exactly 0 at padded steps."""
    enc = run.encoding
    C = enc.num_continuous
    valid = feed["mask"].astype(bool)
    assert got.shape == ref.shape and got.dtype == np.float32, what
    err = np.abs(got - ref)[valid]
    assert (err[:, :C] / run.scaler.scale[:C]).max() <= COND_TOL, f"{what}: continuous error {err[:, :C].max():.2e}"
    if enc.categorical:
        assert err[:, C:].max() <= COND_TOL, f"{what}: one-hot error {err[:, C:].max():.2e}"
        np.testing.assert_array_equal(enc.step_codes(got)[valid], enc.step_codes(ref)[valid])
        assert np.allclose(got[valid][:, C:].sum(axis=1), len(enc.categorical), atol=1e-5), what
    assert np.all(got[~valid] == 0), what


@pytest.mark.parametrize("n", [1, 10])
@pytest.mark.parametrize("name", ["classes", "table", "events"])
def test_conditional_onnx_equals_generate_for_the_same_noise_and_attributes(conditional_runs, exported, name, n):
    """One file per conditional run serves batches of 1 and 10; given generate's noise, Gumbel noise and encoded
    attributes it gives generate's samples: the features in data units and each step's category."""
    feed, ref, run = conditional_reference(conditional_runs[name], n, seed=5)
    sess = ort.InferenceSession(exported[name], providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == list(feed)
    assert all(i.shape[0] == "batch" for i in sess.get_inputs())
    assert_same_conditional_samples(sess.run(["samples"], feed)[0], ref, feed, run, f"{name} onnx, batch {n}")


def test_conditional_nnp_equals_generate(conditional_runs, tmp_path):
    feed, ref, run = conditional_reference(conditional_runs["classes"], 5, seed=2)
    info = export_generator(conditional_runs["classes"], str(tmp_path / "g.nnp"), "nnp", batch_size=5)
    assert info["inputs"] == {"noise": (5, 8, 5), "static_noise": (5, 8), "attributes": (5, 3),
                              "gumbel_noise": (5, 8, 3), "mask": (5, 8)} and info["output"] == (5, 8, 5)
    nn.clear_parameters()
    assert_same_conditional_samples(run_nnp(tmp_path / "g.nnp", feed), ref, feed, run, "classes nnp")


@pytest.mark.parametrize("name", ["classes", "table", "events"])
def test_conditional_metadata_round_trips_to_the_runs_encoding(conditional_runs, exported, name):
    """onnx and onnxruntime read the same metadata back, and it rebuilds the run's Encoding (category lists,
    attribute kinds and ranges) with the blocks where the file puts them."""
    model = onnx.load(exported[name])
    onnx.checker.check_model(model, full_check=True)
    stored = {p.key: p.value for p in model.metadata_props}
    assert stored == ort.InferenceSession(exported[name]).get_modelmeta().custom_metadata_map
    meta = {k[len("gan_sru."):]: json.loads(stored[k]) for k in ("gan_sru.features", "gan_sru.categorical",
                                                                  "gan_sru.attributes", "gan_sru.table")}
    run = TrainedRun(conditional_runs[name])
    nn.clear_parameters()
    enc = run.encoding
    C = enc.num_continuous
    assert meta["features"]["names"] == (["f0", "f1"] if name == "classes" else ["temp", "load"])
    np.testing.assert_array_equal(meta["features"]["min"], run.scaler.min[:C])
    rebuilt = Encoding([{"name": a["name"], "kind": a["kind"], "categories": Categories(a["name"], a["labels"],
                                                                                       a["dtype"])}
                        if a["kind"] == "categorical" else {k: a[k] for k in ("name", "kind", "min", "max", "dtype")}
                        for a in meta["attributes"]],
                       [Categories(c["name"], c["labels"], c["dtype"]) for c in meta["categorical"]], C)
    assert rebuilt.to_dict() == enc.to_dict()
    assert [tuple(a["columns"]) for a in meta["attributes"]] == enc.attr_blocks()
    assert [tuple(c["channels"]) for c in meta["categorical"]] == enc.blocks()
    expected = {"classes": ([{"name": "state", "labels": ["high", "low", "mid"]}], [{"name": "class",
                                                                                     "labels": ["c0", "c1", "c2"]}]),
                "table": ([], [{"name": "kind", "labels": ["a", "b"]}, {"name": "size"}]),
                "events": ([{"name": "event", "labels": [0, 1, 2]}], [])}[name]
    assert [{k: c[k] for k in ("name", "labels")} for c in meta["categorical"]] == expected[0]
    assert [{k: a[k] for k in ("name", "labels") if k in a} for a in meta["attributes"]] == expected[1]
    assert meta["table"]["id"] == "id" and meta["table"]["time"] == "time"
    assert meta["table"]["time_kind"] == ("dates" if name != "classes" else "numbers")


def test_float_comparisons_cast_booleans_that_arithmetic_reads():
    """nnabla-converter's GreaterEqual (Less, then Not) feeding a Sub: the boolean is cast to float, as nnabla's
    comparison gives; the Not still reads the Less's boolean."""
    h = onnx.helper
    f = onnx.TensorProto.FLOAT
    nodes = [h.make_node("Less", ["y", "top"], ["ge_less"]), h.make_node("Not", ["ge_less"], ["ge"]),
             h.make_node("Sub", ["ge", "y"], ["out"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, f, [3]) for n in ("y", "top")],
                         [h.make_tensor_value_info("out", f, [3])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
    float_comparisons(model.graph)
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node] == ["Less", "Not", "Cast", "Sub"]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y, top = np.array([0.2, 0.5, 0.3], np.float32), np.full(3, 0.5, np.float32)
    np.testing.assert_array_equal(sess.run(None, {"y": y, "top": top})[0], (y >= top) - y)
