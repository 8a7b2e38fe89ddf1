"""scripts/bootstrap.sh: interpreter discovery, clear failures, and the fast check-only re-run.

Most tests run the script with a PATH that holds only the shell tools it needs (plus fakes), so no real
Python 3.9/3.10 of the machine leaks in, and with GAN_SRU_DRY_RUN=1 where a real run would install things.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bootstrap.sh"
BASH = shutil.which("bash")
# External commands the script calls; apt-get and sudo are left out, so provisioning is never possible here.
TOOLS = ["awk", "basename", "cat", "cp", "cut", "dirname", "dpkg", "grep", "head", "id", "mkdir", "mktemp",
         "mv", "readlink", "rm", "sed", "sha256sum", "sort", "tee", "touch", "tr"]
NEED = "gan_sru needs Python 3.9 or 3.10"
# The interpreter running the tests (the project venv's base): a real, suitable Python for the fakes to point at.
PYTHON = Path(os.path.realpath(sys.executable))
VERSION = "%d.%d.%d" % sys.version_info[:3]

pytestmark = pytest.mark.skipif(
    BASH is None or sys.version_info[:2] not in ((3, 9), (3, 10)),
    reason="needs bash and a Python 3.9/3.10 test interpreter")


def fake_program(path, body):
    """Writes an executable shell script at `path` and returns its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path.parent


def run(tmp_path, path_dirs=(), **env):
    """Runs the script with PATH = path_dirs + the tool folder, no pyenv, and `env` on top."""
    tools = tmp_path / "tools"
    if not tools.exists():
        tools.mkdir()
        for name in TOOLS:
            found = shutil.which(name)
            if found:
                (tools / name).symlink_to(found)
    full_env = {"PATH": os.pathsep.join([*map(str, path_dirs), str(tools)]), "HOME": str(tmp_path / "home"),
                "PYENV_ROOT": str(tmp_path / "no-pyenv"), "LANG": "C.UTF-8", "GAN_SRU_NO_PROVISION": "1"}
    full_env.update(env)
    return subprocess.run([BASH, str(SCRIPT)], env=full_env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def shadow_venv(tmp_path):
    """A venv folder of our own whose packages are the running venv's (lib/ is a link): the check-only path can
    run against it and write its stamp without touching the real venv."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("needs to run inside the project venv")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", venv / "pyvenv.cfg")
    (venv / "bin" / "python").symlink_to(PYTHON)
    (venv / "lib").symlink_to(Path(sys.prefix) / "lib")
    return venv


def stamp_text(setup_hash):
    return f"setup_py_sha256={setup_hash}\npython={VERSION}\nextras=dev\n"


def setup_py_hash():
    return hashlib.sha256((REPO / "setup.py").read_bytes()).hexdigest()


def test_unsuitable_gan_sru_python_stops_with_instructions(tmp_path):
    py311 = tmp_path / "py311" / "python3.11"
    fake_program(py311, "echo 3.11.2")
    result = run(tmp_path, GAN_SRU_PYTHON=str(py311), VENV=str(tmp_path / "venv"))
    assert result.returncode != 0
    assert f"GAN_SRU_PYTHON={py311} is Python 3.11.2" in result.stderr
    assert NEED in result.stderr and "pyenv install 3.10" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "venv").exists()


def test_no_interpreter_and_no_provisioning_stops_with_instructions(tmp_path):
    shims = fake_program(tmp_path / "shims" / "python3.10", 'echo "pyenv: python3.10: command not found" >&2; exit 127')
    result = run(tmp_path, [shims], VENV=str(tmp_path / "venv"))
    assert result.returncode != 0
    assert "no Python 3.9 or 3.10 found" in result.stderr
    assert "GAN_SRU_PYTHON=/path/to/python3.10" in result.stderr
    assert "command not found" not in result.stderr  # the shim's own noise is not shown
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "venv").exists()


def test_broken_shim_first_on_path_is_skipped(tmp_path):
    shims = fake_program(tmp_path / "shims" / "python3.10", 'echo "pyenv: python3.10: command not found" >&2; exit 127')
    good = tmp_path / "good"
    good.mkdir()
    (good / "python3.10").symlink_to(PYTHON)
    result = run(tmp_path, [shims, good], VENV=str(tmp_path / "venv"), GAN_SRU_DRY_RUN="1")
    assert result.returncode == 0, result.stderr
    assert f"with Python {VERSION} ({good / 'python3.10'})" in result.stdout
    assert not (tmp_path / "venv").exists()


def test_pyenv_versions_are_found_without_pyenv_on_path(tmp_path):
    interpreter = tmp_path / "pyenv" / "versions" / "3.10.99" / "bin" / "python3.10"
    interpreter.parent.mkdir(parents=True)
    interpreter.symlink_to(PYTHON)
    result = run(tmp_path, VENV=str(tmp_path / "venv"), GAN_SRU_DRY_RUN="1", PYENV_ROOT=str(tmp_path / "pyenv"))
    assert result.returncode == 0, result.stderr
    assert f"({interpreter})" in result.stdout


def test_ready_venv_is_only_checked(tmp_path):
    venv = shadow_venv(tmp_path)
    stamp = venv / ".gan_sru_ready"
    stamp.write_text(stamp_text(setup_py_hash()))
    os.utime(stamp, (0, 0))
    site = Path(sys.prefix) / "lib"
    before = sorted(p.name for p in site.glob("python3.*/site-packages/*"))
    start = time.monotonic()
    result = run(tmp_path, VENV=str(venv))
    seconds = time.monotonic() - start
    assert result.returncode == 0, result.stderr
    assert "checked, nothing installed" in result.stdout
    assert "installing" not in result.stdout
    assert seconds < 30
    assert stamp.stat().st_mtime > 0  # touched, so make sees the venv as newer than setup.py
    assert sorted(p.name for p in site.glob("python3.*/site-packages/*")) == before


def test_changed_setup_py_means_reinstall(tmp_path):
    venv = shadow_venv(tmp_path)
    (venv / ".gan_sru_ready").write_text(stamp_text("0" * 64))
    result = run(tmp_path, VENV=str(venv), GAN_SRU_DRY_RUN="1")
    assert result.returncode == 0, result.stderr
    assert "would pip install -e '.[dev]'" in result.stdout


def test_venv_of_an_unsuitable_python_is_recreated(tmp_path):
    venv = tmp_path / "venv"
    fake_program(venv / "bin" / "python", "echo 3.11.2")
    (venv / "pyvenv.cfg").write_text("home = /nowhere\n")
    good = tmp_path / "good"
    good.mkdir()
    (good / "python3.10").symlink_to(PYTHON)
    result = run(tmp_path, [good], VENV=str(venv), GAN_SRU_DRY_RUN="1")
    assert result.returncode == 0, result.stderr
    assert "(it uses Python 3.11.2, which nnabla 1.39 cannot use): would recreate it" in result.stdout
    assert f"would create venv {venv} with Python {VERSION}" in result.stdout
    assert (venv / "pyvenv.cfg").exists()  # dry run: untouched


def test_folder_that_is_not_a_venv_is_left_alone(tmp_path):
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    result = run(tmp_path, VENV=str(folder))
    assert result.returncode != 0
    assert "is not a virtual environment" in result.stderr
    assert (folder / "notes.txt").read_text() == "keep me"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_runs_setup_only_when_the_stamp_is_stale(tmp_path):
    venv = shadow_venv(tmp_path)
    stamp = venv / ".gan_sru_ready"
    stamp.write_text(stamp_text(setup_py_hash()))

    def planned():
        return subprocess.run(["make", "-n", f"VENV={venv}", "test"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout

    fresh = planned()
    assert "bootstrap.sh" not in fresh
    assert "ruff check ." in fresh and "-m pytest -q" in fresh
    os.utime(stamp, (0, 0))
    assert "bootstrap.sh" in planned()


@pytest.mark.slow
def test_fresh_install_then_check_only(tmp_path):
    """The real thing: pip installs into a new venv (network or pip cache), then a re-run only checks."""
    venv = tmp_path / "venv"
    env = {**os.environ, "VENV": str(venv), "GAN_SRU_NO_PROVISION": "1"}
    first = subprocess.run([BASH, str(SCRIPT)], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=1200)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "(installed)" in first.stdout
    start = time.monotonic()
    second = subprocess.run([BASH, str(SCRIPT)], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=120)
    assert second.returncode == 0, second.stderr
    assert "checked, nothing installed" in second.stdout
    assert time.monotonic() - start < 30
