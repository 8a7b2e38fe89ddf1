"""A trained generator as a file that runs without this project: `.nnp` (nnabla) or `.onnx`.

The length L is fixed at export, and so is the batch size B of a `.nnp`: the time-major graph bakes B and L
into its reshapes, broadcasts and constants (nnabla's variable batch size assumes dim 0 is the batch). The
`.onnx` file has a dynamic batch axis: nnabla-converter writes the batch-1 network, which an ONNX Scan runs
once per sequence (`batch_scan`).
Its weights are the checkpoint's moving average of the generator's weights when the run kept one
(train.g_ema > 0), else the trained weights: the same ones `gan-sru generate` uses. Batch-major, float32:

    inputs   noise         (B, L, Z) standard normal: noise per step (Z = noise_dim)
             static_noise  (B, S)    standard normal: noise per sequence (S = static_noise_dim; absent when 0)
             attributes    (B, W)    a conditional run's encoded attributes (one-hot labels, numbers min-max
                                     scaled to the training range; `sampling_metadata`); absent without
                                     data.attributes
             gumbel_noise  (B, L, K) Gumbel(0, 1) noise of the categorical features' K channels: each step's
                                     category is argmax(logits + noise), a draw from the generator's
                                     probabilities (zeros: the likeliest); absent without data.categorical
             mask          (B, L)    1 at valid steps, 0 at right padding (all 1: full length)
    output   samples       (B, L, C + K) the C continuous features in the data's units (the run's min-max
                                     scaling inverted, as `gan-sru generate` writes them), then one one-hot
                                     block per categorical feature; 0 at padded steps

Given the same noise (transposed to the generator's time-major (L, B, Z)) and attributes, `samples` equals
`scaler.inverse(TrainedRun.sample(...))` to float32 rounding (tests/unit/test_export.py). The `.onnx` file's
metadata holds what turns `samples` into `generate`'s table (`sampling_metadata`).

Both formats hold only plain nnabla operations: the SRU is built with `impl="ref"` (the recurrence
unrolled over time and `F.affine` instead of the BLAS matmul; a PythonFunction cannot be serialised), so
the file grows linearly with L. `.nnp` is written by nnabla's own saver (`nnabla.utils.save`); `.onnx` is
converted from it by nnabla-converter's `OnnxExporter` (opset 13), whose repeated shape constants are then
renamed to single assignments and whose boolean comparisons are cast to float as nnabla's are, so that
`onnx.checker` accepts the model.
"""
import contextlib
import io
import json
import logging
import os
import tempfile
from collections import OrderedDict

import nnabla as nn
import nnabla.functions as F
import numpy as np

from gan_sru import ConfigError, GanSruError
from gan_sru.files import atomic_write
from gan_sru.networks import noise_shapes, unconditional_inputs
from gan_sru.onnx_graph import batch_scan, float_comparisons, single_assignment
from gan_sru.registry import GENERATORS

FORMATS = ("nnp", "onnx")
NETWORK = "generator"
OUTPUT = "samples"
INPUTS = ("noise", "static_noise", "attributes", "gumbel_noise", "mask")  # the order of the file's inputs
ONNX_OPSET = "13"
DEFAULT_BATCH_SIZE = 64
ONNX_INSTALL = ("pip install 'onnx~=1.13.0' && pip install --no-deps 'nnabla-converter==1.39.*' "
                "(its declared dependencies pull in TensorFlow, which the ONNX exporter does not use)")


class ExportError(GanSruError):
    """The generator cannot be exported, or the exported file cannot be written."""


# Longest exported length. The file unrolls the recurrence over L steps (~60 functions a step for a 2-layer
# SRU), and nnabla's saver looks each function's inputs up in a list of every variable so far
# (nnabla.core.graph_def ProtoFunction._proto_call): its time grows faster than L squared
# (docs/results/2026-11-28-export-cost.md), and very long lengths crash it.
MAX_EXPORT_LENGTH = 256


def length_error(length):
    """The one-line refusal of an export length above MAX_EXPORT_LENGTH, or None."""
    if length <= MAX_EXPORT_LENGTH:
        return None
    return (f"--length {length}: at most {MAX_EXPORT_LENGTH} steps can be exported (the file unrolls the "
            "recurrence over every step and nnabla's saver takes time superlinear in the steps); export a shorter "
            "length, or use `gan-sru generate` for longer sequences")


def check_export_args(fmt, batch_size, length, out):
    """Refuse bad arguments before any work, with the flag and the value named."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if batch_size < 1:
        raise ConfigError(f"--batch-size {batch_size}: expected at least 1")
    if length is not None and length < 2:
        raise ConfigError(f"--length {length}: expected at least 2 steps")
    if length is not None and length_error(length):
        raise ConfigError(length_error(length))
    if os.path.isdir(out):
        raise ExportError(f"--out {out}: is a folder; expected a file name such as {out.rstrip('/')}/generator.{fmt}")
    ext = os.path.splitext(out)[1].lower()
    if fmt == "nnp" and ext != ".nnp":  # nnabla's loader picks the reader by the extension
        raise ConfigError(f"--out {out}: expected a name ending in .nnp for --format nnp (nnabla reads by extension)")
    if fmt == "onnx" and ext == ".nnp":
        raise ConfigError(f"--out {out}: the extension says nnp but --format is onnx")


def build_export_graph(run, batch_size, length):
    """The generator of `run` (a TrainedRun) as a plain-ops graph in the exported layout (module docstring).

    Builds into a private parameter scope holding the run's generator weights (under "G/", as in training), the
    inverse scaling and the graph's constants (the time feature, the Gumbel-softmax temperature). A conditional
    run's graph is the one `generate` samples with (gan_sru.conditional.networks.conditional_generator).
    Returns (scope, inputs, samples) with inputs an ordered {name: nn.Variable}; save and convert inside
    `nn.parameter_scope("", scope)`.
    """
    gcfg, enc = run.cfg.model.generator, run.encoding
    B, L, C = int(batch_size), int(length), run.num_features
    scope = OrderedDict()
    with nn.parameter_scope("G"):
        trained = nn.get_parameters(grad_only=False)
    with nn.parameter_scope("", scope):
        with nn.parameter_scope("G"):
            for name, var in trained.items():
                nn.parameter.set_parameter(name, var)
        shapes = noise_shapes(gcfg, L, B, enc)
        given = {"noise": nn.Variable((B, L, shapes["step"][2])), "mask": nn.Variable((B, L))}  # batch-major
        noise = {"step": F.transpose(given["noise"], (1, 0, 2)), "static": nn.Variable(shapes["static"])}
        if "gumbel" in shapes:
            given["gumbel_noise"] = nn.Variable((B, L, shapes["gumbel"][2]))
            noise["gumbel"] = F.transpose(given["gumbel_noise"], (1, 0, 2))
        mask = F.transpose(given["mask"], (1, 0))
        build = GENERATORS.lookup(gcfg.name)
        if enc is None:
            with nn.parameter_scope("G"):
                fake = build(gcfg, unconditional_inputs(gcfg, noise, L, run.max_len, "ref"), mask, C, run.max_len,
                             train=False, impl="ref")  # (L, B, C)
        else:
            from gan_sru.conditional.networks import conditional_generator

            fake, given["attributes"], _ = conditional_generator(build, gcfg, enc, noise, mask, C, run.max_len,
                                                                 False, {"impl": "ref"})  # (L, B, C + K)
        if gcfg.static_noise_dim > 0:
            given["static_noise"] = noise["static"]
        inputs = OrderedDict((k, given[k]) for k in INPUTS if given.get(k) is not None)
        with nn.parameter_scope("scaler"):
            span = nn.parameter.get_parameter_or_create(
                "scale", (1, 1, C), run.scaler.inverse_scale.astype(np.float32).reshape(1, 1, C), need_grad=False)
            low = nn.parameter.get_parameter_or_create(
                "min", (1, 1, C), run.scaler.min.astype(np.float32).reshape(1, 1, C), need_grad=False)
        valid = F.broadcast(F.reshape(inputs["mask"], (B, L, 1)), (B, L, C))
        samples = (F.transpose(fake, (1, 0, 2)) * F.broadcast(span, (B, L, C))
                   + F.broadcast(low, (B, L, C))) * valid
        _store_constants(samples, inputs)
    return scope, inputs, samples


def _store_constants(output, inputs):
    """Register every leaf of the graph that is neither an input nor a parameter (arrays made with
    `nn.Variable.from_numpy_array`, e.g. the time feature t / (max_len - 1)) as a fixed parameter, so that
    the saver writes its values; otherwise it would become an input that nothing feeds."""
    known = {v.data for v in nn.get_parameters(grad_only=False).values()} | {v.data for v in inputs.values()}
    leaves = []

    def visit(f):
        for v in f.inputs:
            if v.parent is None and v.data not in known:
                known.add(v.data)
                leaves.append(v)

    output.visit(visit)
    with nn.parameter_scope("constants"):
        for i, v in enumerate(leaves):
            v.need_grad = False
            nn.parameter.set_parameter(f"c{i}", v)


@contextlib.contextmanager
def _quiet():
    """Silence nnabla's INFO log and the converter's progress prints (they name temporary files)."""
    from nnabla.logger import logger

    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        logger.setLevel(level)


def _save_nnp(path, inputs, samples, batch_size):
    """nnabla's saver: one network and a 'runtime' executor naming the inputs and the output."""
    from nnabla.utils.save import save

    contents = {
        "networks": [{"name": NETWORK, "batch_size": batch_size, "outputs": {OUTPUT: samples},
                      "names": dict(inputs)}],
        "executors": [{"name": "runtime", "network": NETWORK, "data": list(inputs), "output": [OUTPUT]}],
    }
    save(path, contents, variable_batch_size=False)  # fixed sizes: dim 0 is not the batch inside the SRU


def _nnp_to_onnx(nnp_path, onnx_path, batch_size):
    """nnabla-converter's NNP -> ONNX export; returns the onnx.ModelProto, made SSA and checked."""
    try:
        import onnx
        from nnabla.utils.converter.nnabla import NnpImporter
        from nnabla.utils.converter.onnx import OnnxExporter
    except ImportError as e:
        raise ExportError(f"--format onnx needs nnabla-converter's ONNX exporter and onnx ({e}); "
                          f"install them with: {ONNX_INSTALL}") from e
    with _quiet():
        nnp = NnpImporter(nnp_path, expand_network=True, executor_index=None).execute()
        OnnxExporter(nnp, batch_size, -1, opset=ONNX_OPSET).execute(onnx_path)
    model = onnx.load(onnx_path)
    single_assignment(model.graph)
    float_comparisons(model.graph)
    onnx.checker.check_model(model)
    return model


def sampling_metadata(run):
    """What a user of the exported file needs beside the network to write the table `generate` writes, as
    {key: JSON-able value} (the file's metadata holds each as "gan_sru.<key>"). Read from the run folder only.

      features     {names, min, scale} of the C continuous features: channels 0..C-1 of samples (samples = scaled
                   value * scale + min, already applied in the graph; names f0, f1, ... where the data had none)
      categorical  per categorical feature {name, labels, dtype, channels: [start, stop]}: its one-hot block of
                   samples; its label at a step is labels[argmax(samples[..., start:stop])]
      attributes   per attribute the columns [start, stop] of the `attributes` input it fills and how:
                   {name, kind: "categorical", labels, dtype}: 1 at start + labels.index(value), else 0;
                   {name, kind: "numeric", min, max, dtype}: (value - min) / (max - min), or value - min when
                   max == min (min and max: the training range)
      lengths      {max_len, training: {length: count}}: draw a length per sequence and pass it as the mask
      table        {columns, id, time, time_kind, first, step}: the columns of generate's table in its order;
                   the id column (sequence 0, 1, ...) and time column (None: none) among them; time at step t is
                   first + t * step (time_kind "dates": seconds since 1970, written as naive UTC dates)
    """
    from gan_sru.data.summary import read_summary
    from gan_sru.sampling import Reference

    enc = run.encoding
    C = run.num_features if enc is None else enc.num_continuous
    table = generate_columns(run)
    names = table.pop("features")
    lengths, counts = np.unique(Reference.of_run(run).lengths, return_counts=True)
    categorical, attributes = [], []
    if enc is not None:
        for c, (s, e) in zip(enc.categorical, enc.blocks()):
            categorical.append({"name": c.name, "labels": c.labels, "dtype": c.dtype, "channels": [s, e]})
        for a, (s, e) in zip(enc.attributes, enc.attr_blocks()):
            how = ({"labels": a["categories"].labels, "dtype": a["categories"].dtype}
                   if a["kind"] == "categorical" else {"min": a["min"], "max": a["max"], "dtype": a["dtype"]})
            attributes.append({"name": a["name"], "kind": a["kind"], **how, "columns": [s, e]})
    time = (read_summary(run.folder.path) or {}).get("time") or {}
    table.update(time_kind=time.get("kind") if table["time"] is not None else None,
                 first=float(time.get("first", 0.0)), step=float(time.get("step", 1.0)))
    return {"features": {"names": names, "min": run.scaler.min[:C].tolist(),
                         "scale": run.scaler.inverse_scale[:C].tolist()},
            "categorical": categorical, "attributes": attributes,
            "lengths": {"max_len": int(run.max_len),
                        "training": {str(int(n)): int(c) for n, c in zip(lengths, counts)}},
            "table": table}


def generate_columns(run):
    """{features, columns, id, time}: the continuous features' names and the columns of the table `generate`
    writes for `run` (gan_sru.sampling.sample_table for a run trained on a table, else id, time, f0, ..., then
    the category and attribute columns), read off that table for one sequence of one step."""
    from gan_sru.data.summary import read_summary
    from gan_sru.sampling import run_layout, sample_table

    enc = run.encoding
    C = run.num_features if enc is None else enc.num_continuous
    extra = {}
    if enc is not None:  # one step's labels: only the names and the order matter here
        extra = {c.name: [np.array(c.labels[:1], dtype=object)] for c in enc.categorical}
        extra.update({a["name"]: [np.array([a["categories"].labels[0] if a["kind"] == "categorical" else a["min"]],
                                           dtype=object)] for a in enc.attributes})
    layout = run_layout(run.folder.path)
    if layout is not None and layout["kind"] == "dataframe":
        df = sample_table(run, [np.zeros((1, C))], extra or None, layout)
        names = list(df.attrs["feature_names"])
        columns = [c for c in df.columns]
        key = layout["id"]["label"] if layout["id"] else columns[0]  # a wide table: sequence numbers first
        time = layout["time"]["label"] if layout["time"] else None
    else:
        summary = read_summary(run.folder.path) or {}
        names = [f["name"] for f in summary.get("features", [])]
        if len(names) != C:
            names = [f"f{k}" for k in range(C)]
        columns, key, time = ["id", "time", *names, *extra], "id", "time"
    return {"features": names, "columns": columns, "id": key, "time": time}


def format_of(out, fmt=None):
    """The export format: `fmt` when given, else from the file name (.nnp or .onnx)."""
    if fmt is not None:
        return fmt
    ext = os.path.splitext(os.fspath(out))[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise ConfigError(f"--out {out}: cannot tell the format from the name; end it in .onnx or .nnp, or pass "
                          "--format")
    return ext


def export_generator(run_path, out, fmt, step=None, batch_size=DEFAULT_BATCH_SIZE, length=None):
    """Write the generator of the run folder `run_path` (checkpoint `step`: a step, "latest" or "best";
    default the selected one when the run has one, else the newest) to `out`.

    fmt: "nnp", "onnx", or None (from the name of `out`); batch_size, length: the fixed B and L of the exported
    network (length default: the run's longest training length). The file appears complete or not at all.
    Returns a dict describing the export: path, format, run, step, weights ("moving average" or "trained"),
    inputs (name -> shape), output (shape) and max_len (the run's longest training length).
    """
    from gan_sru.sampling import TrainedRun, check_run_path

    out = os.fspath(out)
    fmt = format_of(out, fmt)
    check_export_args(fmt, batch_size, length, out)
    check_run_path(run_path)
    run = TrainedRun(run_path, step)
    L = int(length or run.max_len)
    if length_error(L):  # the default, the run's longest training length
        raise ConfigError(length_error(L) + f" (the default is the run's longest training length, {L})")
    B = 1 if fmt == "onnx" else batch_size  # ONNX: the batch-1 graph under a Scan over a dynamic batch
    ema = any(k.startswith("EMA/") for k in run.checkpoint.params)
    with nn.context_scope(nn.Context(["cpu:float"], "CpuCachedArray", "0")):
        scope, inputs, samples = build_export_graph(run, B, L)
        with nn.parameter_scope("", scope), tempfile.TemporaryDirectory(prefix="gan_sru_export_") as tmp:
            nnp_path = os.path.join(tmp, f"{NETWORK}.nnp")
            with _quiet():
                _save_nnp(nnp_path, inputs, samples, B)
            batch = "batch" if fmt == "onnx" else B
            info = {"path": os.path.abspath(out), "format": fmt, "run": run.folder.path, "step": run.step,
                    "weights": "moving average" if ema else "trained",
                    "inputs": {k: (batch, *v.shape[1:]) for k, v in inputs.items()},
                    "output": (batch, *samples.shape[1:]), "max_len": run.max_len}
            if fmt == "nnp":
                with open(nnp_path, "rb") as f:
                    payload = f.read()
            else:
                model = batch_scan(_nnp_to_onnx(nnp_path, os.path.join(tmp, f"{NETWORK}.onnx"), B), OUTPUT)
                meta = {"gan_sru.run": run.folder.path, "gan_sru.checkpoint_step": str(run.step),
                        "gan_sru.weights": info["weights"], "gan_sru.layout": json.dumps(
                            {"inputs": info["inputs"], "output": {OUTPUT: info["output"]}}),
                        **{f"gan_sru.{k}": json.dumps(v) for k, v in sampling_metadata(run).items()}}
                for k, v in meta.items():
                    model.metadata_props.add(key=k, value=v)
                payload = model.SerializeToString()
    try:
        atomic_write(out, lambda f: f.write(payload), make_dirs=True)
    except OSError as e:
        raise ExportError(f"--out {out}: cannot write the exported file ({e.strerror or e})") from e
    return info
