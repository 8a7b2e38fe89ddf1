"""How long the evaluation scores take: Context-FID and the GRU scores under both protocols, CPU.

    .venv/bin/python benchmarks/metric_time.py [--num 1000] [--length 24] [--features 28]
        [--protocols paper,fast] [--fraction 1.0] [--no-context-fid]

Sets: the built-in `factors` data scaled to [0, 1] (as `evaluate` scores), `real` and `held` two disjoint
sets of --num sequences, `fake` a third one with N(0, 0.05^2) noise added. Times (wall and process CPU):
Context-FID with TS2Vec's default iterations, encoder trained on `real`, `fake` and `held` embedded (what one
`evaluate` does); one repeat of the discriminative score and one predictive score under each protocol.
`evaluate` runs the GRU scores twice (generated and floor), the discriminative one --repeats times.
--fraction trains the GRU scores that fraction of their protocol's iterations (to time slow code at long
lengths; the rows say how many). Writes benchmarks/results/metric_time.json and prints the table.
"""
import argparse
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=1000)
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--protocols", default="paper,fast")
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--no-context-fid", action="store_true")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    args = parser.parse_args()

    import gan_sru  # noqa: F401, I001  (first, before numpy: it picks OpenBLAS's kernels, see gan_sru/__init__.py)
    import numpy as np

    from gan_sru import metrics
    from gan_sru.data import MinMaxScaler, make_factors

    n = args.num
    raw = make_factors(3 * n, args.length, args.features, seed=0)
    scaler = MinMaxScaler().fit(raw[:n])
    real, fake, held = (np.clip(np.stack([scaler.transform(s) for s in raw[k * n:(k + 1) * n]]), 0, 1)
                        .astype(np.float32) for k in range(3))
    fake = np.clip(fake + 0.05 * np.random.RandomState(1).randn(*fake.shape), 0, 1).astype(np.float32)
    rows = []

    def timed(name, fn):
        t0, c0 = time.perf_counter(), time.process_time()
        value = fn()
        rows.append(dict(name=name, wall_s=round(time.perf_counter() - t0, 1), cpu_s=round(time.process_time() - c0, 1),
                         value=value, load=[round(x, 2) for x in os.getloadavg()]))
        print(f"{name:<44} {rows[-1]['wall_s']:>7.1f} s wall {rows[-1]['cpu_s']:>7.1f} s CPU", flush=True)

    if not args.no_context_fid:
        its = metrics.ts2vec.default_iterations(real.size)
        timed(f"Context-FID ({its} iterations, 3 sets embedded)",
              lambda: metrics.context_fids(real, [fake, held], progress=False))
    for protocol in args.protocols.split(","):
        s = metrics.protocol_settings(protocol, args.features)
        for score in ("discriminative", "predictive"):
            s[score]["iterations"] = max(1, round(args.fraction * s[score]["iterations"]))
        timed(f"{protocol}: discriminative, one repeat ({s['discriminative']['iterations']} it.)",
              lambda s=s: metrics.discriminative_score(real, fake, repeats=1, progress=False, **s["discriminative"]))
        timed(f"{protocol}: predictive ({s['predictive']['iterations']} it.)",
              lambda s=s: metrics.predictive_score(fake, real, progress=False, **s["predictive"]))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "metric_time.json"), "w") as f:
        json.dump({"num": n, "length": args.length, "features": args.features, "fraction": args.fraction,
                   "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
