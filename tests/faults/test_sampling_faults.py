"""generate and SequenceGAN past the happy path: bad arguments, an existing --out, too many sequences, a
read-only run folder, a full disk, a save onto a full disk, and generate racing a trainer that prunes its
checkpoints. Each ends in one clear error and leaves no partial output."""
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import unwritable

from gan_sru import RunFolderError, SequenceGAN
from gan_sru.commands.main import main as cli_main
from gan_sru.config import load_config
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=40", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.discriminator.hidden_size=8", "train.steps=2", "train.checkpoint_every=2", "train.sample_every=1000",
        "train.log_every=1"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"),
                      TINY + [f"run_dir={tmp_path_factory.mktemp('runs')}", "name=tiny"])
    with open(os.devnull, "w") as devnull:
        return Trainer(cfg, progress=False, out=devnull).train()


def generate(capsys, *argv):
    """`gan-sru generate` in this process: (exit status, the last line of stderr)."""
    code = cli_main(["generate", "--no-progress", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err[-1] if err else ""


def leftovers(folder):
    return [n for n in os.listdir(folder) if n.endswith((".partial", ".tmp"))]


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "error: --seed -1: expected a seed from 0 to 2**63 - 1"),
    (["--num", "100000000"], "error: --num 100000000: at most 1,000,000 sequences per call; generate more in "
                             "several calls with other seeds"),
    (["--num", "0"], "error: --num 0: expected at least 1 sequence"),
    (["--length", "200000"], "error: --num 1000 --length 200000: 200,000 steps: at most 100,000 steps per sequence"),
    (["--num", "1000", "--length", "10000"], "error: --num 1000 --length 10000: 1,000 sequences of up to 10,000 "
                                             "steps: at most 5,000,000 sequence-steps per call (memory); ask for "
                                             "fewer sequences per call, with other seeds"),
    (["--start", "yesterday-ish"], "error: --start yesterday-ish: the run's data has no time column"),
])
def test_bad_arguments_are_one_line_errors_and_write_nothing(run, tmp_path, capsys, argv, message):
    code, last = generate(capsys, "--run", run, "--out", str(tmp_path / "out"), *argv)
    assert code == 2 and last == message
    assert not (tmp_path / "out").exists() and not leftovers(tmp_path)


def test_an_existing_out_file_needs_overwrite(run, tmp_path, capsys):
    out = tmp_path / "s.npz"
    out.write_bytes(b"keep me")
    code, last = generate(capsys, "--run", run, "--out", str(out), "--num", "3")
    assert code == 2 and last == f"error: --out {out}: the file exists; pass --overwrite to replace it"
    assert out.read_bytes() == b"keep me"
    code, _ = generate(capsys, "--run", run, "--out", str(out), "--num", "3", "--overwrite")
    assert code == 0 and np.load(out)["data"].shape == (3, 8, 5)


def test_a_read_only_run_folder_is_one_line_and_leaves_no_generated_folder(run, capsys):
    with unwritable(run):
        code, last = generate(capsys, "--run", run, "--num", "3")
    assert code == 2 and last.startswith(f"error: cannot write the samples to {run}/generated")
    assert last.endswith("nothing was written (pass --out to write elsewhere)")
    assert not os.path.exists(os.path.join(run, "generated")) and not leftovers(run)


def test_a_full_disk_is_one_line_and_leaves_no_partial_output(run, tmpfs, capsys):
    disk = tmpfs("64k")  # room for a few small files, not for the pictures
    code, last = generate(capsys, "--run", run, "--num", "200", "--out", str(disk / "gen"))
    assert code == 2 and "cannot write the samples to" in last and "No space left on device" in last
    assert os.listdir(disk) == []
    code, last = generate(capsys, "--run", run, "--num", "20000", "--length", "40", "--out", str(disk / "s.csv"))
    assert code == 2 and "No space left on device" in last and os.listdir(disk) == []


def test_save_onto_a_full_disk_leaves_no_partial_copy(run, tmpfs):
    disk = tmpfs("32k")
    model = SequenceGAN.load(run)
    with pytest.raises(RunFolderError, match=r"SequenceGAN.save: cannot write .*: No space left on device; "
                                             r"nothing was saved"):
        model.save(disk / "copy")
    assert os.listdir(disk) == []


def test_generate_while_training_prunes_its_checkpoints(tmp_path):
    """A trainer writes a checkpoint every step and keeps two; sampling from the run meanwhile never fails."""
    cmd = [sys.executable, os.path.join(REPO, "train.py"), "--config", os.path.join(REPO, "configs", "sines.yaml"),
           "--no-progress"]
    for item in TINY[:-4] + ["train.steps=400", "train.checkpoint_every=1", "train.keep_checkpoints=2",
                             "train.sample_every=100000", "train.log_every=100", f"run_dir={tmp_path}", "name=r"]:
        cmd += ["--set", item]
    trainer = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, MPLBACKEND="Agg"))
    code = ("import os, sys, time\n"
            "from gan_sru.sampling import TrainedRun\n"
            "run, n = sys.argv[1], 0\n"
            "from gan_sru.train.run_folder import RunFolder\n"
            "while not RunFolder(run).list_checkpoints():\n    time.sleep(0.05)\n"
            "t = time.time()  # from the first checkpoint on: a loaded machine starts the trainer slowly\n"
            "while time.time() - t < 8:\n    TrainedRun(run).sample(2, 0); n += 1\n"
            "print(n)\n")
    try:
        p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r")], cwd=REPO, capture_output=True,
                           text=True, timeout=120)
    finally:
        trainer.kill()
        trainer.wait()
    assert p.returncode == 0, p.stderr
    assert int(p.stdout.split()[-1]) > 10


@pytest.mark.slow  # about 18 s: the scores are computed before the first write
def test_evaluate_on_a_read_only_run_folder_is_one_line(run, capsys):
    with unwritable(run):
        code = cli_main(["evaluate", "--run", run, "--num", "4", "--repeats", "1", "--no-progress"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and last.startswith(f"error: cannot write the evaluation to {run}/evaluation")
    assert not os.path.exists(os.path.join(run, "evaluation"))


def test_data_for_a_built_in_run_is_refused(run, capsys):
    code = cli_main(["evaluate", "--run", run, "--data", "x.csv", "--no-progress"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and last == ("error: --data x.csv: the run's data is built in (data.source: sines), made again "
                                  "from its config; expected no --data")
