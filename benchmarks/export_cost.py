"""Time of `export_generator(..., "nnp", length=L)` for a tiny trained sines run (hidden size 8, 2 SRU layers),
per length; a refused length is recorded with the time to its error. Writes JSON.

    python benchmarks/export_cost.py --lengths 100 200 400 --out benchmarks/results/export_cost.json
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile
import time

from gan_sru import GanSruError
from gan_sru.config import load_config
from gan_sru.export import export_generator
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lengths", type=int, nargs="+", default=[100, 200, 400])
    p.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results", "export_cost.json"))
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="export_cost_")
    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"), [
        "data.num_sequences=64", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.discriminator.hidden_size=8", "train.steps=2", "train.checkpoint_every=2",
        "train.sample_every=1000", f"run_dir={tmp}", "name=x"])
    with open(os.devnull, "w") as devnull:
        Trainer(cfg, progress=False, out=devnull).train()
    rows = []
    for L in a.lengths:
        t0 = time.perf_counter()
        try:
            export_generator(os.path.join(tmp, "x"), os.path.join(tmp, f"g{L}.nnp"), "nnp", length=L)
            rows.append({"length": L, "seconds": round(time.perf_counter() - t0, 2), "result": "exported"})
        except GanSruError as e:
            rows.append({"length": L, "seconds": round(time.perf_counter() - t0, 2), "result": f"refused: {e}"})
        print(rows[-1], flush=True)
    lines = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Model name")),
               platform.processor())
    with open(a.out, "w") as f:
        json.dump({"cpu": cpu, "cores": os.cpu_count(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
