"""SRU speed against the `ref` SRU and nnabla's LSTM and GRU, forward and backward, side by side.

    python benchmarks/sru_speed.py [--shapes 64x32x256,...] [--repeats 5] [--quick]

Prints a table, writes benchmarks/results/sru_speed.json and sru_speed.png. Times are medians of
`--repeats` runs after a warm-up, on the current nnabla context (CPU by default). Targets,
checked at (64, 32, 256) in the same run: the SRU layer's forward+backward >= 25x faster than
`PF.lstm`, and the fused recurrence alone >= 20x faster than the `ref` recurrence.
On a machine with a CUDA GPU and CuPy it also measures the CUDA kernels' effective bandwidth
against a device-to-device copy (`gan_sru.ops.sru.bandwidth.bandwidth_benchmark`).
"""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gan_sru  # noqa: E402, F401, I001

import nnabla as nn  # noqa: E402
import nnabla.functions as F  # noqa: E402
import nnabla.parametric_functions as PF  # noqa: E402
import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from gan_sru.ops.sru import sru, sru_recurrence  # noqa: E402

SHAPES = [(32, 32, 256), (64, 32, 256), (128, 32, 512), (100, 64, 512)]
TARGET_SHAPE = (64, 32, 256)
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def time_graph(loss, params, repeats):
    """Median forward and backward ms of `loss` (forward with clear_no_need_grad, backward clear_buffer)."""
    loss.forward(clear_no_need_grad=True)
    loss.backward(clear_buffer=True)
    fwd, bwd = [], []
    for _ in range(repeats):
        for p in params:
            p.grad.zero()
        t0 = time.perf_counter()
        loss.forward(clear_no_need_grad=True)
        t1 = time.perf_counter()
        loss.backward(clear_buffer=True)
        t2 = time.perf_counter()
        fwd.append(t1 - t0)
        bwd.append(t2 - t1)
    return float(np.median(fwd) * 1e3), float(np.median(bwd) * 1e3)


def build(model, L, B, D, rng):
    """A loss over one layer of `model` at hidden size D, input width D; returns (loss, variables)."""
    nn.clear_parameters()
    x = nn.Variable((L, B, D), need_grad=True)
    x.d = rng.standard_normal(x.shape)
    if model in ("sru", "sru_ref"):
        h, _ = sru(x, D, num_layers=1, impl="ref" if model == "sru_ref" else "auto")
    elif model == "lstm":
        h0 = nn.Variable.from_numpy_array(np.zeros((1, 1, B, D), np.float32))
        c0 = nn.Variable.from_numpy_array(np.zeros((1, 1, B, D), np.float32))
        h, _, _ = PF.lstm(x, h0, c0)
    elif model == "gru":
        h0 = nn.Variable.from_numpy_array(np.zeros((1, 1, B, D), np.float32))
        h, _ = PF.gru(x, h0)
    elif model in ("recurrence", "recurrence_ref"):
        u = nn.Variable((L, B, 3 * D), need_grad=True)
        u.d = rng.standard_normal(u.shape)
        bias = nn.Variable.from_numpy_array(np.zeros((1, 2, D), np.float32), need_grad=True)
        c0 = nn.Variable.from_numpy_array(np.zeros((B, D), np.float32))
        h, _ = sru_recurrence(u, x, bias, c0, impl="ref" if model == "recurrence_ref" else "fused")
        return F.sum(h), [u, x, bias]
    else:
        raise ValueError(model)
    return F.sum(h), [x] + list(nn.get_parameters().values())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in SHAPES),
                    help="comma-separated LxBxD list")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ref-repeats", type=int, default=2, help="repeats for the slow ref/LSTM/GRU graphs")
    ap.add_argument("--quick", action="store_true", help="only the target shape")
    ap.add_argument("--out", default=RESULTS)
    args = ap.parse_args(argv)
    shapes = [TARGET_SHAPE] if args.quick else [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    models = ["sru", "sru_ref", "lstm", "gru", "recurrence", "recurrence_ref"]
    rng = np.random.default_rng(0)
    rows = []
    for shape in tqdm(shapes, desc="shapes"):
        for model in tqdm(models, desc="x".join(map(str, shape)), leave=False):
            loss, params = build(model, *shape, rng)
            slow = model in ("sru_ref", "lstm", "gru", "recurrence_ref")
            fwd, bwd = time_graph(loss, params, args.ref_repeats if slow else args.repeats)
            rows.append(dict(L=shape[0], B=shape[1], D=shape[2], model=model, forward_ms=fwd, backward_ms=bwd,
                             total_ms=fwd + bwd))

    def total(shape, model):
        return next(r["total_ms"] for r in rows if (r["L"], r["B"], r["D"]) == shape and r["model"] == model)

    print(f"\n{'L':>4} {'B':>4} {'D':>4}  {'model':<15} {'fwd ms':>9} {'bwd ms':>9} {'total ms':>9} {'vs sru':>8}")
    for r in rows:
        shape = (r["L"], r["B"], r["D"])
        base = total(shape, "recurrence" if r["model"].startswith("recurrence") else "sru")
        print(f"{r['L']:>4} {r['B']:>4} {r['D']:>4}  {r['model']:<15} {r['forward_ms']:9.2f} "
              f"{r['backward_ms']:9.2f} {r['total_ms']:9.2f} {r['total_ms'] / base:7.1f}x")
    summary = {}
    if TARGET_SHAPE in shapes:
        summary = {
            "shape": list(TARGET_SHAPE),
            "lstm_over_sru": total(TARGET_SHAPE, "lstm") / total(TARGET_SHAPE, "sru"),
            "gru_over_sru": total(TARGET_SHAPE, "gru") / total(TARGET_SHAPE, "sru"),
            "ref_recurrence_over_fused": total(TARGET_SHAPE, "recurrence_ref") / total(TARGET_SHAPE, "recurrence"),
        }
        summary["lstm_target_met"] = summary["lstm_over_sru"] >= 25
        summary["recurrence_target_met"] = summary["ref_recurrence_over_fused"] >= 20
        print(f"\nat {TARGET_SHAPE}: SRU layer fwd+bwd is {summary['lstm_over_sru']:.1f}x faster than PF.lstm "
              f"(target 25x), {summary['gru_over_sru']:.1f}x faster than PF.gru; the fused recurrence is "
              f"{summary['ref_recurrence_over_fused']:.1f}x faster than the ref recurrence (target 20x)")
    gpu = gpu_bandwidth()
    out = dict(rows=rows, summary=summary, gpu=gpu, context=str(nn.get_current_context()),
               machine=dict(python=platform.python_version(), cpus=os.cpu_count(), platform=platform.platform()))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sru_speed.json"), "w") as f:
        json.dump(out, f, indent=2)
    chart(rows, shapes, models, os.path.join(args.out, "sru_speed.png"))
    print(f"wrote {os.path.join(args.out, 'sru_speed.json')} and sru_speed.png")
    return out


def gpu_bandwidth():
    try:
        from gan_sru.ops.sru import bandwidth
        from gan_sru.ops.sru import cuda as sru_cuda
        if not sru_cuda.is_available():
            return {"skipped": "no CUDA device with CuPy"}
        return bandwidth.bandwidth_benchmark(L=256, B=64, D=1024)
    except Exception as e:  # a benchmark must still write its CPU results
        return {"skipped": f"{type(e).__name__}: {e}"}


def chart(rows, shapes, models, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=100)
    width = 0.8 / len(models)
    for i, m in enumerate(models):
        vals = [next(r["total_ms"] for r in rows if (r["L"], r["B"], r["D"]) == s and r["model"] == m)
                for s in shapes]
        ax.bar(np.arange(len(shapes)) + i * width, vals, width, label=m)
    ax.set_xticks(np.arange(len(shapes)) + 0.4 - width / 2)
    ax.set_xticklabels(["L{} B{} D{}".format(*s) for s in shapes])
    ax.set_yscale("log")
    ax.set_ylabel("forward + backward (ms, log scale)")
    ax.set_title("SRU (fused) vs ref SRU vs nnabla LSTM/GRU, one layer")
    ax.legend(ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
