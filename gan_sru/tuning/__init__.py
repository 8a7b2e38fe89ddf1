"""Hyperparameter search with Optuna: many short runs of one config, one study, one best config.

Each trial is an ordinary run folder, RUN_DIR/<study>/trial_NNNN, trained from the user's config with the
trial's values for the keys of SPACE and a wall-time budget. Its score, lower is better, is TimeGAN's
discriminative score under the paper protocol (gan_sru.metrics.protocols) of the run's selected checkpoint,
against a validation split: sequences that neither the trial trained on nor `gan-sru evaluate` later uses
as the held-out floor. The study picks the config whose samples look most real to a fresh classifier;
scoring it on the final held-out set would choose for that set, and its figure would no longer measure the
chosen config (the held-out set must stay unseen by every choice, the search included).

    the data (one seed, random split)   | train (trials train here) | validation | held out (evaluate) |
    a trial's data.holdout_fraction     = the config's holdout_fraction + validation_fraction

Pruning: every checkpoint is scored (train.select: discriminative, on training sequences) and reported to
Optuna (trial.report); a trial the pruner calls hopeless stops at once (PRUNED). Trials run in one process
each; parallel workers are processes sharing the study's storage: a journal file (one machine) or an RDB URL
(sqlite:///..., postgresql://user:pw@host/db; many machines). A study is resumable: the same --study and
--storage go on until N trials are finished. A worker killed mid-trial leaves it RUNNING: with a journal
file, the next worker on the machine marks it FAIL (its process is gone); with an RDB URL, Optuna's
heartbeat does.

The parts: study.py (the Study: trials, pruning, the best config), space.py (the search space),
storage.py (the study's storage and the trials whose worker is gone), validation.py (the split and score).
"""
from .space import SPACE, suggest, to_config_values
from .storage import fail_dead_trials, open_storage
from .study import MAX_FAILURES, Study, SurplusTrial, parse_duration
from .validation import VALIDATION_FRACTION, validation_indices, validation_score

__all__ = ["MAX_FAILURES", "SPACE", "VALIDATION_FRACTION", "Study", "SurplusTrial", "fail_dead_trials",
           "open_storage", "parse_duration", "suggest", "to_config_values", "validation_indices", "validation_score"]
