"""The SRU layer's speed does not depend on whether NumPy was imported before gan_sru.

Each case runs in a fresh process: NumPy (and pandas' habit of importing it) first, or gan_sru first, and
the BLAS left to gan_sru.ops.blas's choice or forced with GAN_SRU_BLAS. It times one SRU layer at
(L, B, D) = (64, 32, 256), forward + backward (median of --repeats), and writes
benchmarks/results/blas_import_order.{json,md}.

    python benchmarks/blas_import_order.py [--repeats 30]
"""
import argparse
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [("numpy first", "numpy", None), ("gan_sru first", "gan_sru", None),
         ("numpy first, NumPy's BLAS", "numpy", "numpy"), ("numpy first, SciPy's BLAS", "numpy", "scipy")]
CHILD = r"""
import sys, time
if sys.argv[1] == "numpy":
    import numpy as np
    import gan_sru
else:
    import gan_sru
    import numpy as np
import nnabla as nn, nnabla.functions as F
from gan_sru.ops import blas
from gan_sru.ops.sru import sru
L, B, D = 64, 32, 256
x = nn.Variable.from_numpy_array(np.random.default_rng(0).standard_normal((L, B, D)).astype(np.float32))
x.need_grad = True
h, _ = sru(x, D, num_layers=1)
loss = F.sum(h)
times = []
for i in range(int(sys.argv[2]) + 3):
    t0 = time.perf_counter()
    loss.forward(clear_no_need_grad=True)
    loss.backward(clear_buffer=True)
    times.append(time.perf_counter() - t0)
times = sorted(times[3:])
print(blas.backend(), blas.openblas_cores(), 1e3 * times[len(times) // 2])
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    args = ap.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    rows = []
    for label, first, forced in CASES:
        env = dict(os.environ, PYTHONPATH=ROOT)
        env.pop("GAN_SRU_BLAS", None)
        if forced:
            env["GAN_SRU_BLAS"] = forced
        out = subprocess.run([sys.executable, "-c", CHILD, first, str(args.repeats)], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        backend, rest = out.split(" ", 1)
        cores, ms = rest.rsplit(" ", 1)
        rows.append({"case": label, "backend": backend, "cores": cores, "ms": round(float(ms), 2)})
        print(f"{label:<28} BLAS {backend:<6} {float(ms):8.2f} ms   OpenBLAS cores {cores}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    report = {"cpu": cpu, "shape": [64, 32, 256], "repeats": args.repeats, "rows": rows}
    with open(os.path.join(args.out, "blas_import_order.json"), "w") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(args.out, "blas_import_order.md"), "w") as f:
        f.write(f"SRU layer (L, B, D) = (64, 32, 256), forward + backward, median of {args.repeats}; CPU: {cpu}\n\n"
                "| case | BLAS | ms |\n|---|---|---|\n")
        f.writelines(f"| {r['case']} | {r['backend']} | {r['ms']} |\n" for r in rows)


if __name__ == "__main__":
    main()
