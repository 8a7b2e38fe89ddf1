"""What a run folder records beside its checkpoints: config.yaml, the data summary, sampling.json (what
generate needs instead of the data) and conditioning.json; and which keys a resumed run may not change."""
import json
import os

from gan_sru.config import dump_config, flat_config, load_config
from gan_sru.data.summary import read_sampling, sampling_record, write_sampling, write_summary
from gan_sru.files import atomic_write_text


def write(run, cfg, summary, data, conditioning=None, comment=None):
    """Write the run's records into RunFolder `run`; a resume on the same data leaves sampling.json as it is."""
    dump_config(cfg, run.config_path, comment=comment)
    write_summary(run.path, summary)
    record = sampling_record(data, cfg.data, run.path)
    if read_sampling(run.path) != json.loads(json.dumps(record)):
        write_sampling(run.path, record)
    if conditioning:  # the category lists, for people and tools (checkpoints hold them too)
        atomic_write_text(os.path.join(run.path, "conditioning.json"), json.dumps(conditioning, indent=2) + "\n")


def changed_keys(run, cfg):
    """Dotted keys outside train.* (and the run's name, folder and tracking) where `cfg` differs from the run's
    config.yaml; [] for a run without one."""
    if not os.path.exists(run.config_path):
        return []
    now, before = flat_config(cfg), flat_config(load_config(run.config_path))
    ignore = ("train.", "name", "run_dir", "tracking.")
    if read_sampling(run.path) is not None:  # the data is checked by its fingerprint (run_folder.locate_data)
        ignore += ("data.path",)
    return sorted(k for k in set(now) | set(before) if not k.startswith(ignore) and now.get(k) != before.get(k))
