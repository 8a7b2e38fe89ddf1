"""The SRU's CUDA kernels on a GPU: effective bandwidth against a device-to-device copy, and a whole SRU layer
against cuDNN's LSTM and GRU (PyTorch) and the official `sru` package, forward + backward, side by side.

    python benchmarks/gpu_speed.py [--quick] [--repeats 20] [--out benchmarks/results/gpu_speed.json]

Needs CuPy and a CUDA device; nnabla is not needed (nnabla-ext-cuda cannot be installed everywhere a GPU is).
PyTorch gives the cuDNN rows and the official `sru` package (2.x, compiled by PyTorch at its first import)
its row; a row whose library is missing or fails is written with the reason instead of a time.

* Bandwidth: `gan_sru.ops.sru.bandwidth.bandwidth_benchmark` at (L, B, D) = (256, 64, 1024) and
  (1024, 32, 2048), float32 and float16: bytes each pass must move (every array read or written once) /
  time, as a share of a device-to-device copy of as many bytes measured in the same run. Then the forward
  and backward at the first shape, in both types, for each prefetch depth in PREFETCHES (how many steps' loads a
  thread keeps in flight; `gan_sru.ops.sru.cuda.PREFETCH` holds the forward's and the backward's).
* Layer: one SRU layer, hidden = input = D, K = 3 (skip input x), weight_c, tanh: u = x W by cuBLAS (CuPy),
  the recurrence kernels, and the backward's two products (dW = x^T du, dx = du W^T + the skip's dx), with
  dh = 1 (the gradient of sum(h)); against `torch.nn.LSTM` / `torch.nn.GRU` (cuDNN) running
  `lstm(x)[0].sum().backward()`, and `sru.SRU(D, D, num_layers=1)` the same way. Each time is the median of
  `--repeats` runs, each timed with CUDA events after warm-up runs. TF32 is off everywhere (float32 means
  float32 arithmetic): `CUPY_TF32=0`, `torch.backends.{cuda.matmul,cudnn}.allow_tf32 = False`. The float16
  rows run everything in float16 storage: the SRU's products and float16 kernels, `module.half()` for
  PyTorch's.

Prints the tables and writes the JSON (the device's name and the library versions in it), the tables as .md and
a picture as .png beside it; `--table` rewrites the .md and .png from the JSON on any machine.
"""
import argparse
import json
import os
import platform
import sys
import time

os.environ["CUPY_TF32"] = "0"  # before CuPy is imported
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from gan_sru.ops.sru import bandwidth  # noqa: E402
from gan_sru.ops.sru import cuda as sru_cuda  # noqa: E402

BANDWIDTH_SHAPES = [(256, 64, 1024), (1024, 32, 2048)]
PREFETCHES = [1, 2, 4, 8]
DTYPES = ["float32", "float16"]
LAYER_SHAPES = [(100, 64, 512), (256, 64, 1024)]  # PyTorch's fastrnns benchmark size, and a larger one
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def median_ms(start_stop, run, warmup, repeats):
    """Median milliseconds of run(), each run timed by `start_stop()` -> (record start, record stop, elapsed)."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeats):
        begin, end, elapsed = start_stop()
        begin()
        run()
        end()
        times.append(elapsed())
    return float(np.median(times))


def cupy_timer(cp):
    def start_stop():
        a, b = cp.cuda.Event(), cp.cuda.Event()

        def elapsed():
            b.synchronize()
            return cp.cuda.get_elapsed_time(a, b)
        return (lambda: a.record(cp.cuda.Stream.null)), (lambda: b.record(cp.cuda.Stream.null)), elapsed
    return start_stop


def torch_timer(torch):
    def start_stop():
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def elapsed():
            b.synchronize()
            return a.elapsed_time(b)
        return a.record, b.record, elapsed
    return start_stop


class CupySruLayer:
    """One SRU layer on CuPy arrays: cuBLAS products around the recurrence kernels (K = 3, one direction)."""

    def __init__(self, cp, D, dtype, seed=0):
        rs = cp.random.RandomState(seed)
        self.cp, self.D, self.dtype = cp, D, dtype
        bound = float(np.sqrt(3.0 / D))
        self.W = rs.uniform(-bound, bound, (D, 3 * D)).astype(dtype)
        self.bias = cp.zeros((1, 2, D), dtype)
        self.wc = rs.uniform(-0.5, 0.5, (1, 2, D)).astype(dtype)

    def forward(self, x):
        L, B, D = x.shape
        u = (x.reshape(L * B, D) @ self.W).reshape(L, B, 1, 3, D)
        h, c = sru_cuda.forward(u, x, self.bias, None, self.wc)
        return u, h, c

    def backward(self, x, u, c, dh):
        L, B, D = x.shape
        g = sru_cuda.backward(u, x, self.bias, None, self.wc, None, c, dh, None)
        du = g["du"].reshape(L * B, 3 * D).astype(self.dtype, copy=False)
        dW = x.reshape(L * B, D).T @ du
        dx = (du @ self.W.T).reshape(L, B, D) + g["dx"]
        return dx, dW, g

    def step(self, x, dh):
        u, h, c = self.forward(x)
        return self.backward(x, u, c, dh)


def sru_layer_times(cp, L, B, D, dtype, warmup, repeats):
    layer = CupySruLayer(cp, D, dtype)
    x = cp.random.RandomState(1).standard_normal((L, B, D)).astype(dtype)
    dh = cp.ones((L, B, 1, D), dtype)
    t = cupy_timer(cp)
    fwd = median_ms(t, lambda: layer.forward(x), warmup, repeats)
    both = median_ms(t, lambda: layer.step(x, dh), warmup, repeats)
    return {"forward_ms": fwd, "forward_backward_ms": both}


def torch_rnn_times(torch, make, L, B, D, dtype, warmup, repeats):
    model = make().cuda().to(getattr(torch, dtype))
    x = torch.randn(L, B, D, device="cuda", dtype=getattr(torch, dtype), requires_grad=True)
    t = torch_timer(torch)

    def fwd():
        with torch.no_grad():
            model(x)

    def both():
        model(x)[0].sum().backward()

    return {"forward_ms": median_ms(t, fwd, warmup, repeats), "forward_backward_ms": median_ms(t, both, warmup,
                                                                                               repeats)}


def optional(fn):
    """fn()'s result, or {"error": why} when its library is missing or it fails."""
    try:
        return fn()
    except Exception as e:  # a missing or broken comparison library must not lose the other rows
        return {"error": f"{type(e).__name__}: {e}"[:500]}


def torch_models(torch, D):
    """{row name: a callable making the PyTorch module} for the comparison rows at hidden size D."""
    def official():
        import sru  # the official package: compiles its CUDA kernels on first import
        return sru.SRU(D, D, num_layers=1)
    return {"lstm": lambda: torch.nn.LSTM(D, D), "gru": lambda: torch.nn.GRU(D, D), "official_sru": official}


def layer_rows(cp, shapes, dtype, warmup, repeats):
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch_error = None
    except ImportError as e:
        torch, torch_error = None, f"ImportError: {e}"
    rows = []
    for L, B, D in shapes:
        row = {"L": L, "B": B, "D": D, "dtype": dtype,
               "sru": sru_layer_times(cp, L, B, D, getattr(cp, dtype), warmup, repeats)}
        for name in ("lstm", "gru", "official_sru"):
            if torch is None:
                row[name] = {"error": torch_error}
                continue
            make = torch_models(torch, D)[name]
            row[name] = optional(lambda make=make, shape=(L, B, D): torch_rnn_times(torch, make, *shape, dtype,
                                                                                   warmup, repeats))
            if "forward_backward_ms" in row[name]:
                row[f"{name}_over_sru"] = row[name]["forward_backward_ms"] / row["sru"]["forward_backward_ms"]
        rows.append(row)
    return rows


def fmt(v, digits=3):
    return "n/a" if v is None else f"{v:.{digits}f}"


def markdown(doc):
    """The three tables of a run (bandwidth, prefetch sweep, layer) as Markdown."""
    bw, sweep, layers = doc["bandwidth"], doc["prefetch_sweep"], doc["layer"]
    out = [f"{doc['device']}, CUDA runtime {doc['cuda_runtime']}, driver {doc['driver']}, {doc['versions']}, "
           f"TF32 off, medians of {doc['repeats']}", "",
           f"| (L, B, D) | type | pass | ms | GB/s | copy GB/s | share of copy (prefetch {tuple(doc['prefetch'])}) |",
           "|---|---|---|---|---|---|---|"]
    for r in bw:
        s = r["shape"]
        for p in ("forward", "backward"):
            out.append(f"| ({s['L']}, {s['B']}, {s['D']}) | {r['dtype']} | {p} | {r[p + '_ms']:.3f} | "
                       f"{r[p + '_gbps']:.0f} | {r['copy_gbps']:.0f} | {r[p + '_vs_copy']:.2f} |")
    at = "" if not sweep else " at ({L}, {B}, {D})".format(**sweep[0]["shape"])
    out += ["", f"| prefetch{at} | type | forward share of copy | backward share of copy |", "|---|---|---|---|"]
    for r in sweep:
        out.append(f"| {r['prefetch']} | {r['dtype']} | {r['forward_vs_copy']:.2f} | {r['backward_vs_copy']:.2f} |")
    out += ["", "| (L, B, D) | type | SRU fwd / fwd+bwd ms | LSTM (cuDNN) | GRU (cuDNN) | official sru | "
                "LSTM / SRU (fwd+bwd) |", "|---|---|---|---|---|---|---|"]
    for r in layers:
        cells = []
        for k in ("sru", "lstm", "gru", "official_sru"):
            v = r[k]
            cells.append(f"{fmt(v['forward_ms'])} / {fmt(v['forward_backward_ms'])}" if "forward_ms" in v
                         else "error")
        out.append(f"| ({r['L']}, {r['B']}, {r['D']}) | {r['dtype']} | " + " | ".join(cells)
                   + f" | {fmt(r.get('lstm_over_sru'), 1)} |")
    for r in layers:
        for k in ("lstm", "gru", "official_sru"):
            if "error" in r[k]:
                out.append(f"\n{k} at ({r['L']}, {r['B']}, {r['D']}) {r['dtype']}: {r[k]['error']}")
    return "\n".join(out) + "\n"


def write_plot(doc, path):
    """Left: each pass's share of the copy's bandwidth (the 80% target dashed). Right: a layer's forward +
    backward time, SRU against cuDNN's LSTM and GRU and the official sru, log scale, per shape and type."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from gan_sru.files import atomic_write

    fig = Figure(figsize=(13, 4.6), dpi=100)
    FigureCanvasAgg(fig)
    ax_bw, ax_layer = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    rows = doc["bandwidth"]
    labels = [f"{r['dtype']}\n({r['shape']['L']}, {r['shape']['B']}, {r['shape']['D']})" for r in rows]
    x = np.arange(len(rows))
    for off, p, color in ((-0.2, "forward", "tab:blue"), (0.2, "backward", "tab:orange")):
        ax_bw.bar(x + off, [r[p + "_vs_copy"] for r in rows], 0.4, color=color, label=p)
    ax_bw.axhline(0.8, color="tab:green", linestyle="--", linewidth=1, label="target 0.8")
    ax_bw.set_xticks(x)
    ax_bw.set_xticklabels(labels, fontsize="small")
    ax_bw.set_ylim(0, 1.05)
    ax_bw.set_title(f"recurrence kernels: share of a device copy's bandwidth (prefetch {tuple(doc['prefetch'])})",
                    fontsize="medium")
    ax_bw.legend(fontsize="small", loc="lower right")
    ax_bw.grid(alpha=0.3, axis="y")
    layers = doc["layer"]
    models = [("sru", "SRU (this project)", "tab:green"), ("official_sru", "official sru", "tab:olive"),
              ("gru", "cuDNN GRU", "tab:purple"), ("lstm", "cuDNN LSTM", "tab:red")]
    x = np.arange(len(layers))
    width = 0.8 / len(models)
    for i, (key, name, color) in enumerate(models):
        ms = [r[key].get("forward_backward_ms", np.nan) for r in layers]
        ax_layer.bar(x + (i - (len(models) - 1) / 2) * width, ms, width, color=color, label=name)
    ax_layer.set_yscale("log")
    ax_layer.set_xticks(x)
    ax_layer.set_xticklabels([f"{r['dtype']}\n({r['L']}, {r['B']}, {r['D']})" for r in layers], fontsize="small")
    ax_layer.set_title("one layer, forward + backward, ms (log; lower is better)", fontsize="medium")
    ax_layer.legend(fontsize="small")
    ax_layer.grid(alpha=0.3, axis="y", which="both")
    fig.suptitle(f"SRU CUDA kernels on {doc['device']}")
    fig.tight_layout()
    return atomic_write(path, lambda f: fig.savefig(f, format="png"))


def write_outputs(doc, json_path):
    """The JSON (unless it is where doc came from), its tables (.md) and the picture (.png) beside it."""
    from gan_sru.files import atomic_write

    stem = os.path.splitext(json_path)[0]
    text = markdown(doc)
    print(text)
    atomic_write(stem + ".md", lambda f: f.write(text.encode()))
    write_plot(doc, stem + ".png")
    print(f"wrote {stem}.md, {stem}.png")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small shapes, 3 repeats (a smoke test)")
    ap.add_argument("--out", default=os.path.join(RESULTS, "gpu_speed.json"))
    ap.add_argument("--table", action="store_true", help="rewrite the .md and .png from the JSON; needs no GPU")
    args = ap.parse_args(argv)
    if args.table:
        with open(args.out) as f:
            write_outputs(json.load(f), args.out)
        return
    cp = sru_cuda.cupy_module()
    if not sru_cuda.is_available():
        sys.exit("gpu_speed.py needs a CUDA device that CuPy can see")
    bw_shapes, layer_shapes, repeats = BANDWIDTH_SHAPES, LAYER_SHAPES, args.repeats
    if args.quick:
        bw_shapes, layer_shapes, repeats = [(16, 8, 256)], [(16, 8, 256)], 3
    t0 = time.time()
    bw = [bandwidth.bandwidth_benchmark(L=L, B=B, D=D, warmup=args.warmup, repeat=repeats, dtype=dtype)
          for dtype in DTYPES for L, B, D in bw_shapes]
    default, sweep = sru_cuda.PREFETCH, []
    for dtype in DTYPES:
        for depth in PREFETCHES:  # each depth is its own compiled module
            sru_cuda.PREFETCH = (depth, depth)
            L, B, D = bw_shapes[0]
            sweep.append(dict(bandwidth.bandwidth_benchmark(L=L, B=B, D=D, warmup=args.warmup, repeat=repeats,
                                                            dtype=dtype), prefetch=depth))
    sru_cuda.PREFETCH = default
    layers = [row for dtype in DTYPES for row in layer_rows(cp, layer_shapes, dtype, args.warmup, repeats)]
    versions = {"cupy": cp.__version__, "numpy": np.__version__, "python": platform.python_version()}
    try:
        import torch
        versions["torch"], versions["cudnn"] = torch.__version__, torch.backends.cudnn.version()
    except ImportError:
        pass
    doc = {"device": bw[0]["device"], "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
           "driver": cp.cuda.runtime.driverGetVersion(), "versions": versions, "tf32": False,
           "repeats": repeats, "prefetch": list(default), "bandwidth": bw, "prefetch_sweep": sweep, "layer": layers,
           "seconds": round(time.time() - t0, 1)}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {args.out}")
    try:
        write_outputs(doc, args.out)
    except ImportError as e:  # a GPU machine without this project's requirements: the JSON is the result
        print(markdown(doc))
        print(f"no .md/.png ({e}); `python benchmarks/gpu_speed.py --table` writes them from the JSON")


if __name__ == "__main__":
    main()
