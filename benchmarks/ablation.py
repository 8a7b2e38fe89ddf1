"""Ablation of the generator's terms and options on real data sets at one CPU budget per run.

    .venv/bin/python benchmarks/ablation.py [--sets motions,vowels,taylor,elnino,sines] [--lengths 24,64]
                                            [--seeds 0,1,2] [--variants defaults,moment,...] [--budget 40s]
                                            [--protocol fast] [--repeats 3] [--classifiers 10] [--stem ablation]
                                            [--resume] [--no-progress]
    .venv/bin/python benchmarks/ablation.py --table --stem ablation,ablation_b   # merge stems, redraw

Real sets come from what packages on PyPI ship (`pip install -e .[bench]`), chosen for variety:

    set      package      what                                              features  sequences
    motions  sktime       BasicMotions: accelerometer and gyroscope,        6         80 of 100 steps
                          jagged, windows of each recording
    vowels   sktime       JapaneseVowels: cepstrum coefficients of          12        640 of 7-29 steps
                          speakers, variable length (its own lengths)
    taylor   pmdarima     half-hourly electricity demand: smooth with a     1         one of 4032 steps
                          day (48) and a week (336) season
    elnino   statsmodels  monthly Pacific sea surface temperature: smooth,  1         one of 732 months
                          yearly season
    macro    statsmodels  US macro growth rates, quarterly: short, noisy    12        one of 202 quarters
    co2      statsmodels  weekly changes of the Mauna Loa CO2 record        1         one of 2283 weeks
    sunspots statsmodels  yearly sunspot numbers                            1         one of 309 years
    weather  pvlib        hourly weather of a typical year at Greensboro,   19        one of 8760 hours
                          NC (TMY3): irradiance with a day season, smooth
                          temperature and pressure, jumpy wind and clouds

One long series is cut into windows of each length, its held-out share contiguous blocks that no training
window overlaps. Built-in sets come from their configs: `sines` (configs/sines.yaml), `lorenz96`
(configs/lorenz96.yaml) and `factors` (configs/wide.yaml).

Every run trains one variant (VARIANTS: the recipe, or without one of its parts; the plain defaults, or
with one term or option on) for the same train.budget, measured in CPU seconds of the process (the
trainer's clock is time.process_time, so
runs that share a loaded machine get the same work; run with OMP_NUM_THREADS=1), then
gan_sru.commands.evaluate.evaluate_run scores its last checkpoint against the held-out sequences with
--protocol (the discriminative score by --classifiers classifiers, the predictive by --repeats regressors),
reusing the held-out floor of the set, length and seed (kept under RUN_DIR/floors, so that grids side by side
and later ones score it once: floor_file, claim_floor). Writes benchmarks/results/<stem>.json
(merged by run key, so an interrupted grid continues where it stopped), <stem>.md (mean ± std over seeds
per set, length and variant, every score next to its floor) and <stem>.png.
"""
import argparse
import contextlib
import json
import os
import signal
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

# the project's defaults before the recipe: no terms, no oscillators, the default batch, D's shift off
OSCILLATORS = ["model.generator.oscillators=true", "model.generator.oscillator_tuning=true"]
NO_OSCILLATORS = ["model.generator.oscillators=false", "model.generator.oscillator_tuning=false"]
PLAIN = ["train.terms=[]"] + NO_OSCILLATORS + ["train.batch_size=128", "model.discriminator.shift=0.0"]


def _terms(*names, **options):
    """A train.terms override: each named term at weight 1; options={name: "key: value"} adds a term's option."""
    return "train.terms=[" + ", ".join(f"{{name: {n}, weight: 1.0{', ' + options[n] if n in options else ''}}}"
                                       for n in names) + "]"


# variant -> its --set overrides. The recipe (gan_sru/recipe.py) with nothing set, without each of its parts
# or with one option added; the recipe before sequence_moment joined it (recipe_no_sequence_moment...); the
# plain defaults, and with one term or option. Terms and options that the grids removed from the project
# (2026-11-28; the learning-rate schedule, the output noise, layer_norm, the hinge and Wasserstein losses,
# the conv1d discriminator and dropout, 2026-11-29) stay in REMOVED, so the table still names their rows;
# recipe_least_squares too, the loss the recipe has used since 2026-11-30 (its "recipe" rows before that date
# used the logistic loss), and the generator's SRU options of 2026-11-30: recipe_g_bidirectional, part of the
# recipe since for data of up to 16 features (earlier "recipe" rows ran G in one direction), recipe_weight_c
# and recipe_g_identity, removed; G's time input and output activation of 2026-12-01 (recipe_no_time_feature,
# recipe_sigmoid_margin, recipe_output_identity) and two D updates per G update (recipe_n_critic_2), removed;
# unequal learning rates (recipe_d_lr_double) and Adam's beta1 (recipe_beta1_0) of 2026-11-29, removed.
# From 48 steps the recipe sets train.lr 0.002 since 2026-12-02: its earlier "recipe" rows there ran 0.001
# (recipe_lr_0001 since), its "recipe_lr_double" rows 0.002. recipe_crop_24 (the first half of the budget on
# 24-step crops, train.crop of commit a70c79a) was removed on 2026-12-03, sequence_moment's tails: true
# (recipe_tails) on 2026-12-04; D's max_pool (recipe_d_max_pool: its head also read the time-max of its SRU
# output, commit 6f11e35) and G's output_margin (recipe_output_margin: its sigmoid stretched to (-0.1, 1.1) and
# clipped to [0, 1], a draft) on 2026-12-05; G writing in the data's principal directions on 2026-12-05
# (model.generator.principal_output, commit dfe5d31: recipe_principal, its linear output clipped to [0, 1];
# recipe_principal_sample_clip, its first form, commit cbdc23a, clipped only when sampling); D reading the
# data's principal coordinates at unit std on 2026-12-05 (model.discriminator.whiten, commit 1ff950d: recipe_d_whiten).
# Since 2026-12-05 the recipe sets model.discriminator.shift 0.125: its earlier "recipe" rows ran without it
# (recipe_no_d_shift since), its "recipe_d_shift" rows with it. Since 2026-12-06 only from 48 to 127 steps:
# outside, its 2026-12-05 "recipe" rows ran with the shift (recipe_d_shift since). sequence_moment's lags
# (recipe_lags_8: autocorrelations at lags 2-8) was removed on 2026-12-06. Until 2026-12-07 the size rules gave G
# three layers from 128 steps: "recipe" rows there ran them (recipe_g_layers_3 since). Until 2026-12-07 the recipe's
# batch was 128 at 256 steps too: "recipe" rows there ran it (recipe_batch_128 since), its recipe_batch_32 rows the
# batch it has since.
OLD_RECIPE = [_terms("moment", "innovation")]
VARIANTS = {
    "recipe": [],
    "recipe_no_oscillators": NO_OSCILLATORS,
    "recipe_no_innovation": [_terms("moment", "sequence_moment")],
    "recipe_no_moment": [_terms("innovation", "sequence_moment")],
    "recipe_noise_from_data": ["model.generator.noise_dim=null"],  # a config's noise_dim replaced by the size rule
    "recipe_ema_999": ["train.g_ema=0.999"],  # G's sampling average over ~700 updates instead of ~140
    "recipe_batch_32": ["train.batch_size=32"],  # a quarter of the default batch
    "recipe_batch_64": ["train.batch_size=64"],  # sets of 512+ sequences: half the default batch
    "recipe_batch_256": ["train.batch_size=256"],  # and twice it
    "recipe_batch_128": ["train.batch_size=128"],  # the config's batch, which the recipe lowers from 256 steps
    "recipe_d_layers_2": ["model.discriminator.num_layers=2"],
    "recipe_g_layers_3": ["model.generator.num_layers=3"],  # a third layer
    "recipe_lr_half": ["train.lr=0.0005"],
    "recipe_lr_double": ["train.lr=0.002"],
    "recipe_lr_0001": ["train.lr=0.001"],  # the config's rate, which the recipe keeps below 48 steps
    "recipe_lr_0004": ["train.lr=0.004"],  # twice the recipe's rate from 48 steps
    "recipe_no_d_shift": ["model.discriminator.shift=0.0"],  # D reads every window from its first step
    "recipe_d_shift": ["model.discriminator.shift=0.125"],  # D's random starts outside 48-127 steps too
    "recipe_no_sequence_moment": OLD_RECIPE,
    "recipe_no_sequence_moment_no_oscillators": OLD_RECIPE + NO_OSCILLATORS,
    "recipe_no_sequence_moment_no_innovation": [_terms("moment")],
    "recipe_no_sequence_moment_no_moment": [_terms("innovation")],
    "defaults": PLAIN,
    "moment": PLAIN + [_terms("moment")],
    "innovation": PLAIN + [_terms("innovation")],
    "sequence_moment": PLAIN + [_terms("sequence_moment")],
    "oscillators": PLAIN + OSCILLATORS,
    "moment_oscillators": PLAIN + [_terms("moment")] + OSCILLATORS,
}
REMOVED = ("marginal", "sequence_whitened", "window_covariance", "predictor", "step_profile", "r1", "highway",
           "moment_highway", "recipe_no_sequence_moment_highway", "recipe_no_sequence_moment_initial_state",
           "recipe_no_sequence_moment_pooled_stats", "recipe_no_sequence_moment_step_features",
           "recipe_no_sequence_moment_minibatch_std", "recipe_lr_cosine", "recipe_output_noise",
           "recipe_no_sequence_moment_output_noise", "recipe_layer_norm", "recipe_no_sequence_moment_layer_norm",
           "recipe_batch_reference", "recipe_reference_every_sequence", "recipe_hinge", "recipe_wasserstein",
           "recipe_d_conv1d", "recipe_dropout", "recipe_least_squares", "recipe_weight_c", "recipe_g_identity",
           "recipe_g_bidirectional", "recipe_no_time_feature", "recipe_sigmoid_margin", "recipe_output_identity",
           "recipe_n_critic_2", "recipe_d_lr_double", "recipe_beta1_0", "recipe_crop_24", "recipe_tails",
           "recipe_d_max_pool", "recipe_output_margin", "recipe_principal", "recipe_principal_sample_clip",
           "recipe_d_whiten", "recipe_lags_8")
ORDER = list(VARIANTS) + list(REMOVED)  # the table's order of variants
# (base, new) pairs the .md compares, where the rows hold both
COMPARISONS = [("defaults", "recipe"), ("recipe_no_sequence_moment", "recipe"), ("recipe_batch_reference", "recipe"),
               ("recipe", "recipe_least_squares"), ("recipe", "recipe_weight_c"), ("recipe", "recipe_g_bidirectional"),
               ("recipe", "recipe_g_identity"), ("recipe_g_bidirectional", "recipe_no_time_feature"),
               ("recipe_g_bidirectional", "recipe_sigmoid_margin"),
               ("recipe_g_bidirectional", "recipe_output_identity"), ("recipe", "recipe_n_critic_2"),
               ("recipe", "recipe_no_time_feature"), ("recipe", "recipe_sigmoid_margin"),
               ("recipe", "recipe_d_max_pool"), ("recipe", "recipe_principal"),
               ("recipe", "recipe_principal_sample_clip"), ("recipe", "recipe_d_whiten"), ("recipe", "recipe_d_shift"),
               ("recipe_no_d_shift", "recipe"), ("recipe", "recipe_lags_8"), ("recipe", "recipe_g_layers_3"),
               ("recipe", "recipe_batch_64"), ("recipe", "recipe_batch_32"), ("recipe_batch_128", "recipe")]
REAL_SETS = ("motions", "vowels", "taylor", "elnino", "macro", "co2", "sunspots", "weather")
BUILT_IN = {"sines": "sines", "lorenz96": "lorenz96", "factors": "wide"}  # set -> its config
SCORES = ("discriminative", "predictive", "context_fid", "correlational")
RESULTS = os.path.join(REPO, "benchmarks", "results")


def _sktime_long(loader):
    """An sktime multi-index (instance, time) frame as a long table: id, time, feature columns."""
    X, _ = loader(return_type="pd-multiindex")
    X = X.reset_index()
    X.columns = ["id", "time"] + [f"x{i}" for i in range(X.shape[1] - 2)]
    return X


# TMY3 columns kept: the measured and modelled values; flags, codes, constant and mostly-missing columns dropped
TMY3_COLUMNS = ("ETR", "ETRN", "GHI", "DNI", "DHI", "GH illum", "DN illum", "DH illum", "Zenith lum", "TotCld",
                "OpqCld", "Dry-bulb", "Dew-point", "RHum", "Pressure", "Wdir", "Wspd", "Hvis", "Pwat")


def tmy3_weather():
    """pvlib's bundled typical meteorological year for Greensboro, NC: 8760 hours of TMY3_COLUMNS."""
    import pandas as pd
    import pvlib
    from pvlib.iotools import read_tmy3

    d, _ = read_tmy3(os.path.join(os.path.dirname(pvlib.__file__), "data", "723170TYA.CSV"), map_variables=False)
    short = {c.split(" (")[0]: c for c in d.columns}
    return pd.DataFrame({name: d[short[name]].to_numpy(float) for name in TMY3_COLUMNS})


def real_csv(name, data_dir):
    """Write the real data set `name` as a CSV (long: id, time, features; or one series: time, features);
    its path and whether it holds several sequences."""
    import numpy as np
    import pandas as pd

    path = os.path.join(data_dir, f"{name}.csv")
    several = name in ("motions", "vowels")
    if os.path.exists(path):
        return path, several
    if name == "motions":
        from sktime.datasets import load_basic_motions
        d = _sktime_long(load_basic_motions)
    elif name == "vowels":
        from sktime.datasets import load_japanese_vowels
        d = _sktime_long(load_japanese_vowels)
    elif name == "taylor":
        import pmdarima.datasets
        d = pd.DataFrame({"demand": pmdarima.datasets.load_taylor()})
    elif name == "macro":
        import statsmodels.api as sm
        d = sm.datasets.macrodata.load_pandas().data.drop(columns=["year", "quarter"])
        # growth: log-differences of the positive series, differences of the others (levels trend, so
        # held-out blocks of levels lie outside the training range)
        d = pd.DataFrame({c: (np.log(d[c]).diff() if (d[c] > 0).all() else d[c].diff()) for c in d}).iloc[1:]
    elif name == "co2":  # weekly changes of the Mauna Loa record (levels trend), gaps interpolated
        import statsmodels.api as sm
        d = sm.datasets.co2.load_pandas().data.interpolate(limit_direction="both").diff().iloc[1:]
    elif name == "sunspots":
        import statsmodels.api as sm
        d = sm.datasets.sunspots.load_pandas().data.drop(columns=["YEAR"])
    elif name == "weather":
        d = tmy3_weather()
    elif name == "elnino":
        import statsmodels.api as sm
        months = sm.datasets.elnino.load_pandas().data.drop(columns=["YEAR"])
        d = pd.DataFrame({"temperature": months.to_numpy(dtype=float).reshape(-1)})
    else:
        raise SystemExit(f"--sets: unknown real set {name!r}; "
                         f"expected one of {', '.join(REAL_SETS + tuple(BUILT_IN))}")
    if not several:
        d = d.astype(float)
        d.insert(0, "time", range(len(d)))
    from gan_sru.files import atomic_write_text

    # atomic: grids started side by side write the same file, and none may read another's half-written one
    atomic_write_text(path, d.to_csv(index=False), make_dirs=True)
    return path, several


def run_config(name, length, seed, variant, args):
    """The config of one run: the set's data at `length`, the variant's term, the budget."""
    from gan_sru.config import load_config

    big = 10 ** 9
    run = f"{name}_L{length}_s{seed}_{variant}_{args.budget}"  # grids of other budgets can run side by side
    common = [f"name={run}", f"run_dir={args.run_dir}", f"seed={seed}", f"train.budget={args.budget}",
              f"train.steps={big}", f"train.checkpoint_every={big}", f"train.sample_every={big}",
              "train.select=none", "train.keep_checkpoints=1"]
    if name in BUILT_IN:
        return load_config(os.path.join(REPO, "configs", f"{BUILT_IN[name]}.yaml"),
                           common + [f"data.seq_len={length}"] + VARIANTS[variant])
    path, several = real_csv(name, args.data_dir)
    if name == "vowels":  # variable-length sequences of at most 29 steps: their own lengths at every length
        data = [f"data.path={path}", "data.holdout_fraction=0.2"]
    elif several:  # windows of each recording, a quarter of a window apart
        data = [f"data.path={path}", f"data.window={length}", f"data.window_stride={max(1, length // 4)}",
                "data.holdout_split=blocks", "data.holdout_fraction=0.2"]
    else:
        data = [f"data.path={path}", "data.csv_id_column=null", f"data.window={length}",
                "data.holdout_split=blocks", "data.holdout_fraction=0.2"]
    data = ["data.source=file", "data.csv_time_column=time"] + data
    return load_config(None, common + data + VARIANTS[variant])


def floor_file(run_dir, data, seed, protocol, repeats):
    """Where the held-out floor of one set, length and seed is kept: run_dir/floors/<digest>.json, the digest of
    what the floor depends on (the scaled training and held-out sequences, the seed, the protocol, the repeats
    and the scoring code). Grids side by side and later ones reuse it; a change to any of these makes a new one."""
    import glob
    import hashlib

    import numpy as np

    h = hashlib.sha256(json.dumps([seed, protocol, repeats], sort_keys=True).encode())
    for part in (data.train.sequences, data.holdout.sequences):
        for s in part:
            h.update(np.ascontiguousarray(s, np.float64).tobytes())
    code = sorted(glob.glob(os.path.join(REPO, "gan_sru", "metrics", "*.py")))
    for path in code + [os.path.join(REPO, "gan_sru", "commands", "evaluate.py")]:
        with open(path, "rb") as f:
            h.update(f.read())
    return os.path.join(run_dir, "floors", h.hexdigest()[:20] + ".json")


def read_floor(path):
    """The floor kept at `path` (floor_file), or None when there is none yet."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def claim_floor(path, poll=10.0):
    """The floor at `path`, or None when this process is to score it: it then holds `path`.lock (its pid) until
    release_floor. A process that finds the lock held by a live process waits for that floor instead of scoring
    it again: grids side by side score each floor once, not once per process."""
    lock, said = path + ".lock", False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    while True:
        floor = read_floor(path)
        if floor is not None:
            return floor
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            holder = _lock_holder(lock)
            if holder is None:  # its process died before writing the floor: the claim is taken over
                with contextlib.suppress(FileNotFoundError):
                    os.remove(lock)
                continue
            if not said:
                print(f"waiting for the held-out floor that process {holder} scores ({path})", file=sys.stderr,
                      flush=True)
                said = True
            time.sleep(poll)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        floor = read_floor(path)  # written between the first read and the claim
        if floor is not None:
            release_floor(path)
        return floor


def _lock_holder(lock):
    """The pid that holds a floor's lock, "?" while it is being written, None when that process is gone."""
    try:
        with open(lock) as f:
            text = f.read().strip()
        age = time.time() - os.path.getmtime(lock)
    except FileNotFoundError:
        return "?"  # released meanwhile: the next look finds the floor or claims it
    if not text.isdigit():
        return "?" if age < 60 else None
    from gan_sru.tuning.storage import alive

    pid = int(text)
    if pid == os.getpid():
        return None  # a lock this process does not hold: left by an earlier process of the same pid
    return pid if alive(pid, None) else None


def release_floor(path):
    """Drops this process's claim on the floor at `path` (claim_floor)."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(path + ".lock")


def run_one(key, name, length, seed, variant, args):
    """Train and score one run; its entry for ablation.json. The held-out floor comes from its floor_file when
    one is there, else it is scored and kept there. With args.resume a run folder that holds a checkpoint
    continues its budget (the trainer's own resume), so a run killed while scoring is scored without training.
    A run stopped by a signal (its checkpoint saved) is not scored: SystemExit, and --resume continues it."""
    import shutil

    import nnabla as nn
    from quality import _scores

    from gan_sru.commands.evaluate import evaluate_run
    from gan_sru.data import training_data
    from gan_sru.train import Trainer
    from gan_sru.train.run_folder import RunFolder

    nn.clear_parameters()  # the previous run's networks, of other sizes, are in nnabla's global scope
    cfg = run_config(name, length, seed, variant, args)
    run_path = os.path.join(cfg["run_dir"], cfg["name"])
    resume = args.resume and bool(RunFolder(run_path).list_checkpoints())
    if not resume:
        shutil.rmtree(run_path, ignore_errors=True)  # a benchmark run starts from nothing
    t0 = time.perf_counter()
    trainer = Trainer(cfg, resume=resume, progress=args.progress, out=open(os.devnull, "w"))  # bar: CPU time left
    trainer.budget.clock = time.process_time  # the budget in CPU seconds of this process
    trainer.train()
    train_s = time.perf_counter() - t0
    checkpoints = trainer.run.list_checkpoints()
    if trainer.stop_signal is not None:  # Ctrl-C or a kill: a run short of its budget is no row; the grid stops
        at = f"at step {checkpoints[-1][0]}" if checkpoints else "before its first step"
        raise SystemExit(f"{key}: stopped by {signal.Signals(trainer.stop_signal).name} {at}, before its budget "
                         f"of {args.budget} was spent; not scored. The grid continues with --resume")
    step = checkpoints[-1][0]
    data = training_data(cfg)
    holdout = len(data.holdout)
    repeats = {"discriminative": args.classifiers, "predictive": args.repeats}
    path = floor_file(args.run_dir, data, seed, args.protocol, repeats)
    floor = claim_floor(path)
    try:
        result = evaluate_run(run_path, step=step, num=holdout, repeats=repeats, seed=seed, progress=args.progress,
                              protocol=args.protocol, floor=floor)
        if floor is None:
            from gan_sru.files import atomic_write_text

            atomic_write_text(path, json.dumps(result["holdout"]) + "\n", make_dirs=True)
    finally:
        if floor is None:
            release_floor(path)
    generated, floor, _ = _scores(result, {})
    return {"key": key, "set": name, "length": length, "seed": seed, "variant": variant,
            "overrides": VARIANTS[variant], "budget": args.budget, "steps": step, "train_seconds": round(train_s, 1),
            "protocol": result["protocol"]["name"], "num_holdout": holdout, "repeats": repeats,
            "generated": generated, "floor": floor, "evaluate_seconds": result["seconds"],
            "separability": result["separability"],  # per group of statistics ("step changes": jaggedness)
            **({"resumed": True} if resume else {})}  # train_seconds then counts this process's part only


def summary(rows):
    """{(set, length, variant): {score: (mean, std, n)}} over seeds, and the floors' means."""
    import numpy as np

    groups = {}
    for r in rows:
        groups.setdefault((r["set"], r["length"], r["variant"]), []).append(r)
    out = {}
    for k, rs in groups.items():
        cell = {}
        for s in SCORES:
            v = [r["generated"][s] for r in rs if r["generated"].get(s) is not None]
            f = [r["floor"][s] for r in rs if r["floor"].get(s) is not None]
            cell[s] = (float(np.mean(v)) if v else None, float(np.std(v)) if v else None, len(v),
                       float(np.mean(f)) if f else None)
        cell["steps"] = float(np.mean([r["steps"] for r in rs]))
        sep = [r["separability"] for r in rs if r.get("separability") and r["separability"].get("holdout")]
        cell["step_changes"] = (float(np.mean([x["generated"]["step changes"] for x in sep])),
                                float(np.mean([x["holdout"]["step changes"] for x in sep]))) if sep else None
        out[k] = cell
    return out


def steps_text(cell):
    """The separability of the step changes (0: generated steps as real ones; high: jagged or too smooth)."""
    return "-" if cell is None else f"{cell[0]:.3f} ({cell[1]:.3f})"


def markdown(doc):
    order = ORDER
    cells = summary(doc["rows"])
    lines = [f"CPU: {doc['cpu']}; budget {doc['budget']} per run; protocol {doc['protocol']}; mean ± std over "
             "seeds (n), floor = held-out real vs training real.", "",
             "| set | length | variant | n | steps | discriminative (floor) | predictive MAE (floor) | "
             "Context-FID (floor) | correlational (floor) | step changes (floor) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (name, length, variant) in sorted(cells, key=lambda k: (k[0], k[1], order.index(k[2]))):
        c = cells[(name, length, variant)]

        def fmt(s, d=3, c=c):
            m, sd, n, f = c[s]
            return "-" if m is None else f"{m:.{d}f} ± {sd:.{d}f} ({f:.{d}f})"
        lines.append(f"| {name} | {length} | {variant} | {c['discriminative'][2]} | {c['steps']:.0f} | "
                     f"{fmt('discriminative')} | {fmt('predictive', 4)} | {fmt('context_fid', 2)} | "
                     f"{fmt('correlational', 2)} | {steps_text(c['step_changes'])} |")
    return "\n".join(lines) + "\n"


def picture(doc, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = summary(doc["rows"])
    groups = sorted({(n, L) for n, L, _ in cells})
    variants = [v for v in ORDER if any(k[2] == v for k in cells)]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups) * len(variants) / 3), 4))
    width = 0.8 / max(len(variants), 1)
    for i, v in enumerate(variants):
        xs, ms, sds = [], [], []
        for j, g in enumerate(groups):
            c = cells.get((g[0], g[1], v))
            if c and c["discriminative"][0] is not None:
                xs.append(j + i * width)
                ms.append(c["discriminative"][0])
                sds.append(c["discriminative"][1])
        ax.bar(xs, ms, width, yerr=sds, label=v, capsize=2)
    for j, g in enumerate(groups):  # the floor of each group
        f = next(c["discriminative"][3] for k, c in cells.items() if k[:2] == g)
        ax.hlines(f, j - width / 2, j + 0.8 - width / 2, colors="k", linestyles="dashed")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
    ax.set_xticklabels([f"{n} L={L}" for n, L in groups], rotation=20, ha="right")
    ax.set_ylabel("discriminative score (lower is better; dashed: floor)")
    ax.set_title(f"budget {doc['budget']} per run, {doc['protocol']} protocol, {doc['cpu']}", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def comparison(doc, base="defaults", new="recipe"):
    """Markdown: per set and length, the discriminative score of `base` and `new` (mean ± std over seeds, the
    seeds), the held-out floor, and whether `new` is below `base` by more than the larger std ("one seed" when
    either has fewer than two); "" when the rows hold no pair."""
    cells = summary(doc["rows"])
    pairs = sorted({k[:2] for k in cells if (k[0], k[1], base) in cells and (k[0], k[1], new) in cells})
    if not pairs:
        return ""
    lines = ["", f"Discriminative score, {new} against {base} (mean ± std over seeds; lower is better):", "",
             f"| set | length | {base} | {new} | floor | {new} better beyond the spread |", "|---|---|---|---|---|---|"]
    for name, length in pairs:
        (bm, bs, bn, f), (nm, ns, nn, _) = (cells[(name, length, v)]["discriminative"] for v in (base, new))
        better = "one seed" if min(bn, nn) < 2 else "yes" if bm - nm > max(bs, ns) else \
            ("worse" if nm - bm > max(bs, ns) else "within")
        lines.append(f"| {name} | {length} | {bm:.3f} ± {bs:.3f} ({bn}) | {nm:.3f} ± {ns:.3f} ({nn}) | {f:.3f} | "
                     f"{better} |")
    return "\n".join(lines) + "\n"


def write(doc, stem):
    from gan_sru.files import atomic_write_text

    atomic_write_text(os.path.join(RESULTS, f"{stem}.json"), json.dumps(doc, indent=1) + "\n")
    text = markdown(doc) + "".join(comparison(doc, base, new) for base, new in COMPARISONS)
    atomic_write_text(os.path.join(RESULTS, f"{stem}.md"), f"# Ablation ({doc['command']})\n\n" + text)
    picture(doc, os.path.join(RESULTS, f"{stem}.png"))
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="motions,vowels,taylor,elnino,sines")
    p.add_argument("--lengths", default="24,64")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--variants", default="recipe,defaults")
    p.add_argument("--budget", default="40s", help="CPU time of each run's training, e.g. 40s, 15m")
    p.add_argument("--protocol", default="fast", choices=("fast", "paper"))
    p.add_argument("--repeats", type=int, default=3, help="regressors of the predictive score per run")
    p.add_argument("--classifiers", type=int, default=10, help="classifiers of the discriminative score per run; "
                   "one classifier's score spreads far more than a regressor's (see 2026-11-29-score-noise.md)")
    p.add_argument("--run-dir", default="/tmp/gan_sru_ablation/runs")
    p.add_argument("--data-dir", default="/tmp/gan_sru_ablation/data")
    p.add_argument("--stem", default="ablation", help="benchmarks/results/<stem>.json, .md, .png; with --table, "
                   "several stems separated by commas are merged into the first")
    p.add_argument("--resume", action="store_true", help="a run folder with a checkpoint continues its budget "
                   "instead of starting over (a run whose budget was spent is only scored)")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no bars on stderr (training: steps and CPU time left; scoring: each metric's training)")
    p.add_argument("--table", action="store_true", help="write the .md and .png from the .json; train nothing")
    args = p.parse_args()
    from quality import cpu_model

    stems = args.stem.split(",")
    doc = {"rows": []}
    for stem in stems:  # several stems (grids run side by side): their rows merged into the first
        json_path = os.path.join(RESULTS, f"{stem}.json")
        if os.path.exists(json_path):
            with open(json_path) as f:
                part = json.load(f)
            rows = doc["rows"] + [r for r in part["rows"] if r["key"] not in {r["key"] for r in doc["rows"]}]
            doc = dict(part, rows=rows, command=doc.get("command", part.get("command")))
    args.stem = stems[0]
    if args.table:
        print(write(doc, args.stem), end="")
        return
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: unknown {', '.join(unknown)}; expected some of {', '.join(VARIANTS)}")
    from gan_sru import GanSruError
    from gan_sru.context import set_context

    set_context(argparse.Namespace(context="cpu", device_id="0", type_config="float"))
    doc.update({"cpu": cpu_model(), "budget": args.budget, "protocol": args.protocol,
                "command": "benchmarks/ablation.py " + " ".join(sys.argv[1:])})
    done = {r["key"] for r in doc["rows"]}
    cells = [(name, length, seed, variant, f"{name}_L{length}_s{seed}_{variant}_{args.budget}_{args.protocol}")
             for seed in map(int, args.seeds.split(","))  # seeds outermost: a cut grid has whole seeds
             for name in args.sets.split(",") for length in map(int, args.lengths.split(",")) for variant in variants]
    todo = [c for c in cells if c[-1] not in done]
    for i, (name, length, seed, variant, key) in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {key}: training for {args.budget} of CPU time, then scoring", flush=True)
        try:
            row = run_one(key, name, length, seed, variant, args)
        except GanSruError as e:  # a run the metrics cannot score: reported, the grid goes on
            print(f"{key}: not scored: {e}", flush=True)
            continue
        doc["rows"].append(row)
        print(f"{key}: {row['steps']} steps, discriminative {row['generated']['discriminative']:.3f} "
              f"(floor {row['floor']['discriminative']:.3f})", flush=True)
        write(doc, args.stem)
    print(write(doc, args.stem), end="")


if __name__ == "__main__":
    main()
