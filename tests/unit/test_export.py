"""`gan-sru export`: the .nnp (nnabla's NNP loader) and the .onnx (onnxruntime) give `generate`'s samples on the
same noise, for the default generator and for one with every optional part; errors are one clear line.

Tolerance: both files compute what `generate` computes, in float32, with the same weights; they differ only in
the order of float32 operations (F.affine instead of the BLAS matmul, the recurrence unrolled in plain ops
instead of the numba kernel, onnxruntime's own sigmoid/tanh, layer normalisation as ReduceMean/Pow ops) and in
the inverse scaling done in float32 instead of float64. Measured here: at most 2e-7 of a feature's range
(about 3 float32 roundings of the output), except where layer normalisation acts on a 3-feature input (the
"full" generator): dividing by a row's small standard deviation amplifies the rounding differences to 7e-6
in onnxruntime. TOL = 5e-5 of each feature's range leaves a 7x margin over that worst case, while the trained
weights instead of their moving average (4 steps of training) are already 1e-2 off (checked below).
"""
import argparse
import json
import os
import re
import sys

import nnabla as nn
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import unwritable
from nnabla.utils.nnp_graph import NnpLoader

from gan_sru import CheckpointError, ConfigError, sampling
from gan_sru.commands import export as export_cmd
from gan_sru.commands.main import build_parser
from gan_sru.commands.main import main as cli
from gan_sru.config import load_config
from gan_sru.export import ExportError, export_generator, single_assignment
from gan_sru.networks import sample_noise
from gan_sru.sampling import Reference, TrainedRun
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=64", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.generator.noise_dim=3", "model.discriminator.hidden_size=8", "train.steps=4",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.log_every=2"]
# every optional part of the generator: two directions, the 2018 form, layer norm, no per-sequence noise,
# no time feature, identity output, a negative highway bias, output noise (its channels follow the step noise's)
FULL = ["model.generator.bidirectional=true", "model.generator.weight_c=true", "model.generator.layer_norm=true",
        "model.generator.static_noise_dim=0", "model.generator.time_feature=false",
        "model.generator.output_activation=identity", "model.generator.highway_bias=-1.0",
        "model.generator.output_noise_dim=3"]
# the oscillator bank on the log grid, its frequencies tuned per sequence (sin, cos, exp, tanh of the per-sequence
# noise), and the SRU layers' initial states drawn from that noise
OSCILLATORS = ["model.generator.oscillators=true", "model.generator.oscillator_tuning=true",
               "model.generator.oscillator_grid=log", "model.generator.initial_state=true"]
TOL = 5e-5  # of each feature's range; see the module docstring
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


def test_readme_export_snippets_run(runs, tmp_path, monkeypatch):
    """The export page's Python blocks (docs/export.md) run as written on files that its commands write."""
    page = open(os.path.join(REPO, "docs", "export.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    for fmt in ("onnx", "nnp"):
        assert cli(["export", "--run", runs["default"], "--format", fmt, "--out", f"generator.{fmt}"]) == 0
    run = TrainedRun(runs["default"])
    nn.clear_parameters()
    for block in blocks:
        namespace = {}
        exec(compile(block, "docs/export.md", "exec"), namespace)
        samples = namespace["samples"]
        assert samples.shape == (64, 8, 5) and np.isfinite(samples).all()
        if "table" in namespace:  # the onnxruntime block: a long table with the run's names, one id per sequence
            table = namespace["table"]
            assert list(table.columns) == ["id", "time", "f0", "f1", "f2", "f3", "f4"]
            assert table["id"].nunique() == 64 and len(table) == int(namespace["lengths"].sum())
        # a sigmoid generator: every value within the data's range
        assert np.all(samples >= run.scaler.min - 1e-5) and np.all(samples <= run.scaler.max + 1e-5)


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
