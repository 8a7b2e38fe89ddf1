#!/usr/bin/env bash
# One-command set-up for gan_sru: find (or install) Python 3.9/3.10, make the venv, pip install -e '.[dev]'.
#
# Safe to re-run. When the venv's stamp matches setup.py it only checks `import nnabla, gan_sru` (seconds).
# Settings, all optional (environment variables):
#   VENV=DIR                 venv to create or reuse (default: <repo>/.venv)
#   GAN_SRU_PYTHON=PATH      use this interpreter; it must be CPython 3.9 or 3.10
#   GAN_SRU_EXTRAS=LIST      pip extras to install (default: dev; e.g. dev,cuda)
#   GAN_SRU_NO_PROVISION=1   never install a Python system-wide; stop with instructions instead
#   GAN_SRU_PROVISION=apt    when a venv must be made: skip the search, install Python with apt (tests that path)
#   GAN_SRU_DRY_RUN=1        say what would be done, change nothing
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${VENV:-$REPO/.venv}
[[ $VENV == /* ]] || VENV=$PWD/$VENV
EXTRAS=${GAN_SRU_EXTRAS:-dev}
DRY_RUN=${GAN_SRU_DRY_RUN:-0}
STAMP=$VENV/.gan_sru_ready
NEED="gan_sru needs Python 3.9 or 3.10 (nnabla 1.39 has no wheels for 3.11+). Install one (pyenv install 3.10,\
 apt install python3.10, conda create -n gan python=3.10) and re-run, or set GAN_SRU_PYTHON=/path/to/python3.10."
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive

say() { echo "bootstrap: $*"; }
die() { echo "bootstrap: error: $*" >&2; exit 1; }
dry() { [[ $DRY_RUN == 1 ]]; }

# Prints X.Y.Z for interpreter $1; fails when it does not run (a pyenv shim for an unselected version fails here).
py_version() {
    local out
    out=$("$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) || return 1
    [[ $out =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || return 1
    echo "$out"
}
supported() { [[ $1 =~ ^3\.(9|10)\. ]]; }

# Sets PYTHON and PYTHON_VERSION, or returns 1. Every match on PATH is tried, not just the first.
find_python() {
    local cand ver root
    local -a cands=()
    if [[ -n ${GAN_SRU_PYTHON:-} ]]; then
        ver=$(py_version "$GAN_SRU_PYTHON") || die "GAN_SRU_PYTHON=$GAN_SRU_PYTHON does not run. $NEED"
        supported "$ver" || die "GAN_SRU_PYTHON=$GAN_SRU_PYTHON is Python $ver. $NEED"
        PYTHON=$GAN_SRU_PYTHON PYTHON_VERSION=$ver
        return 0
    fi
    root=${PYENV_ROOT:-}
    if [[ -z $root ]] && command -v pyenv >/dev/null 2>&1; then root=$(pyenv root 2>/dev/null || true); fi
    root=${root:-$HOME/.pyenv}
    # 3.10 anywhere before 3.9; PATH before pyenv's versions folder, which needs no shell set-up (CI finds it
    # even when pyenv is not on PATH).
    mapfile -t cands < <(
        type -ap python3.10 || true; compgen -G "$root/versions/3.10*/bin/python3.10" | sort -rV || true
        type -ap python3.9 || true; compgen -G "$root/versions/3.9*/bin/python3.9" | sort -rV || true)
    for cand in "${cands[@]}"; do
        ver=$(py_version "$cand") || continue
        supported "$ver" || continue
        PYTHON=$cand PYTHON_VERSION=$ver
        return 0
    done
    return 1
}

SUDO=()
can_provision() {
    [[ ${GAN_SRU_NO_PROVISION:-0} != 1 ]] || return 1
    command -v apt-get >/dev/null 2>&1 && [[ -r /etc/os-release ]] || return 1
    grep -qE '^(ID|ID_LIKE)=.*(debian|ubuntu)' /etc/os-release || return 1
    if [[ $(id -u) == 0 ]]; then SUDO=(); elif sudo -n true 2>/dev/null; then SUDO=(sudo -n); else return 1; fi
}

# True when apt can install package $1 from the configured suites. Only the exact name counts: for a name it
# does not know, apt-cache reads the argument as a regex (python3.10 matches libqgispython3.10.14 on bullseye).
apt_candidate() {
    local cand
    cand=$(apt-cache policy "$1" 2>/dev/null |
        awk -v head="$1:" '$0 == head {ours = 1; next} /^[^ ]/ {ours = 0} ours && /Candidate:/ {print $2}')
    [[ -n $cand && $cand != "(none)" ]]
}

# Installs packages "$@" only if that changes no installed package (no upgrade, downgrade or removal).
apt_install_new_only() {
    local sim
    sim=$(apt-get install -s --no-install-recommends "$@" 2>&1) || { echo "$sim" >&2; return 1; }
    if grep -qE '^(Inst [^ ]+ \[|Remv )' <<<"$sim"; then
        echo "$sim" | grep -E '^(Inst [^ ]+ \[|Remv )' >&2
        return 1
    fi
    "${SUDO[@]}" apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

debian_mirror() {  # the Debian mirror this machine already uses
    local uri
    uri=$(grep -hoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list 2>/dev/null | grep -v security | head -n1 | tr -d ' ') || true
    echo "${uri:-http://deb.debian.org/debian}"
}

# Installs Python 3.10 or 3.9 with apt; sets PYTHON and PYTHON_VERSION. On Debian bookworm (Python 3.11 only)
# it takes python3.9 from bullseye, pinned at priority 100 so that no other package moves.
provision_apt() {
    local pkg codename
    say "installing Python 3.9/3.10 with apt (set GAN_SRU_NO_PROVISION=1 to forbid this)"
    "${SUDO[@]}" apt-get update -q >/dev/null
    for pkg in python3.10 python3.9; do apt_candidate "$pkg" && break; pkg=; done
    codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release | tr -d '"')
    if [[ -z $pkg && $codename == bookworm ]]; then
        say "adding Debian bullseye to apt, pinned low (Pin-Priority 100), for python3.9"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) bullseye main" |
            "${SUDO[@]}" tee /etc/apt/sources.list.d/gan-sru-bullseye.list >/dev/null
        printf 'Package: *\nPin: release n=bullseye\nPin-Priority: 100\n' |
            "${SUDO[@]}" tee /etc/apt/preferences.d/gan-sru-bullseye >/dev/null
        "${SUDO[@]}" apt-get update -q >/dev/null
        apt_candidate python3.9 && pkg=python3.9
    fi
    [[ -n $pkg ]] || die "apt has no python3.10 or python3.9 on this system. $NEED"
    apt_install_new_only "$pkg" || die "installing $pkg with apt would change the packages listed above; not done. $NEED"
    # The -venv package brings ensurepip; without it the venv gets pip from a wheel instead (see ensure_pip).
    if apt_candidate "$pkg-venv" && ! apt_install_new_only "$pkg-venv" 2>/dev/null; then
        say "skipping $pkg-venv: it would replace installed packages; pip comes from a wheel instead"
    fi
    PYTHON=/usr/bin/$pkg
    PYTHON_VERSION=$(py_version "$PYTHON") && supported "$PYTHON_VERSION" || die "$PYTHON does not run after apt install. $NEED"
}

choose_python() {
    if [[ ${GAN_SRU_PROVISION:-} == apt ]]; then
        [[ ${GAN_SRU_NO_PROVISION:-0} != 1 ]] || die "GAN_SRU_PROVISION=apt and GAN_SRU_NO_PROVISION=1 contradict each other"
        can_provision || die "GAN_SRU_PROVISION=apt needs apt on Debian/Ubuntu and root or passwordless sudo"
        if dry; then say "would install Python with apt"; exit 0; fi
        provision_apt
    elif [[ -n ${GAN_SRU_PROVISION:-} ]]; then
        die "GAN_SRU_PROVISION=$GAN_SRU_PROVISION is not a provisioning method; expected 'apt'"
    elif ! find_python; then
        can_provision || die "no Python 3.9 or 3.10 found (searched PATH and pyenv). $NEED"
        if dry; then say "no Python 3.9 or 3.10 found: would install one with apt"; exit 0; fi
        provision_apt
    fi
}

# Debian's python3.9 ships only distutils/{__init__,version}.py; pip on 3.9 needs the rest. python3-distutils
# for 3.9 cannot be installed next to bookworm's, so its files go into a folder of the venv put ahead on sys.path.
ensure_distutils() {
    local py=$VENV/bin/python ver deb tmp site own stdlib
    ver=$(py_version "$py")
    [[ $ver == 3.9.* ]] || return 0
    "$py" -c 'import distutils.util' 2>/dev/null && return 0
    command -v apt-get >/dev/null 2>&1 || die "$py has no distutils; install python3-distutils for Python 3.9"
    deb=$(apt-cache madison python3-distutils 2>/dev/null | awk '$3 ~ /^3\.9\./ {print $3; exit}' || true)
    [[ -n $deb ]] || die "$py has no distutils and apt has no python3-distutils for 3.9; install it by hand"
    say "adding distutils to the venv from python3-distutils $deb (private copy; the system package is not touched)"
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -q "python3-distutils=$deb" >/dev/null 2>&1) ||
        { rm -rf "$tmp"; die "apt-get download python3-distutils=$deb failed"; }
    dpkg -x "$tmp"/python3-distutils_*.deb "$tmp/x"
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    own=$VENV/lib/debian-distutils
    stdlib=$("$py" -c 'import distutils, os; print(os.path.dirname(distutils.__file__))') ||
        die "$py has no distutils package at all; install python3-distutils for Python 3.9"
    rm -rf "$own" && mkdir -p "$own"
    cp -r "$tmp/x/usr/lib/python3.9/distutils" "$own/"
    cp "$stdlib/__init__.py" "$stdlib/version.py" "$own/distutils/"
    rm -rf "$tmp"
    echo "import sys; sys.path.insert(0, '$own')" > "$site/_gan_sru_distutils.pth"
    "$py" -c 'import distutils.util' || die "distutils in $own does not import"
}

# Gives the venv a pip when it was made --without-pip, from a wheel fetched by any working pip on the machine
# (pip<25: the series tested with Debian's python3.9 and the private distutils above).
ensure_pip() {
    local py=$VENV/bin/python dl tmp whl minor
    "$py" -m pip --version >/dev/null 2>&1 && return 0
    minor=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    tmp=$(mktemp -d)
    for dl in python3 /usr/bin/python3; do
        "$dl" -m pip download -q --no-deps --only-binary=:all: --python-version "$minor" 'pip<25' -d "$tmp" \
            >/dev/null 2>&1 && break
    done
    whl=$(compgen -G "$tmp/pip-*.whl" | head -n1) ||
        { rm -rf "$tmp"; die "could not download a pip wheel (no working pip on PATH); install python3-pip and re-run"; }
    say "installing $(basename "$whl") into the venv"
    "$py" "$whl/pip" install -q --no-index "$whl" || { rm -rf "$tmp"; die "installing pip from $whl failed"; }
    rm -rf "$tmp"
}

create_venv() {
    say "creating venv $VENV with Python $PYTHON_VERSION ($PYTHON)"
    if ! { "$PYTHON" -c 'import ensurepip' 2>/dev/null && "$PYTHON" -m venv "$VENV" >/dev/null 2>&1; }; then
        rm -rf "$VENV"
        "$PYTHON" -m venv --without-pip "$VENV"
    fi
}

expected_stamp() {
    printf 'setup_py_sha256=%s\npython=%s\nextras=%s\n' \
        "$(sha256sum "$REPO/setup.py" | cut -d' ' -f1)" "$1" "$EXTRAS"
}

# nnabla-converter's ONNX exporter (gan-sru export --format onnx) imports only onnx, which the extras bring; the
# package declares TensorFlow and its tools (over 1 GB) as dependencies, so it is installed without them.
CONVERTER="nnabla-converter==1.39.*"
wants_converter() { [[ ,$EXTRAS, == *,dev,* || ,$EXTRAS, == *,export,* ]]; }

import_check() {
    local out modules="nnabla, gan_sru"
    wants_converter && modules="$modules, nnabla.utils.converter.onnx"
    # Run outside the repo so that the installed gan_sru is imported, not ./gan_sru.
    out=$(cd / && "$VENV/bin/python" -c "import $modules" 2>&1) || { echo "$out" >&2; return 1; }
}

# --- the venv: reuse it when its interpreter fits, else (re)create it ---
venv_version=
if [[ -e $VENV ]]; then
    [[ -f $VENV/pyvenv.cfg ]] || die "VENV=$VENV exists but is not a virtual environment; move it away or set VENV"
    if venv_version=$(py_version "$VENV/bin/python") && supported "$venv_version"; then
        :
    else
        why="its interpreter no longer runs"
        [[ -n $venv_version ]] && why="it uses Python $venv_version, which nnabla 1.39 cannot use"
        venv_version=
        if dry; then say "venv $VENV is unusable ($why): would recreate it"; else
            say "venv $VENV is unusable ($why): recreating it"
        fi
    fi
fi

if [[ -z $venv_version ]]; then
    choose_python
    if dry; then say "would create venv $VENV with Python $PYTHON_VERSION ($PYTHON) and pip install -e '.[$EXTRAS]'"; exit 0; fi
    rm -rf "$VENV"
    create_venv
    venv_version=$PYTHON_VERSION
fi

# --- the packages: check only when the stamp matches, else install ---
base=$(readlink -f "$VENV/bin/python")
want=$(expected_stamp "$venv_version")
if [[ -f $STAMP && $(cat "$STAMP") == "$want" ]] && import_check; then
    dry || touch "$STAMP"  # newer than setup.py and this script, so make sees the venv as ready
    say "ready: Python $venv_version ($base), venv $VENV (checked, nothing installed)"
    exit 0
fi
if dry; then say "would pip install -e '.[$EXTRAS]' into $VENV (setup.py changed, or not installed yet)"; exit 0; fi

ensure_distutils
ensure_pip
say "installing gan_sru[$EXTRAS] and its dependencies into $VENV (pip; minutes the first time)"
rm -f "$STAMP"
(cd "$REPO" && "$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]") || die "pip install -e '.[$EXTRAS]' failed (see above)"
if wants_converter; then
    "$VENV/bin/python" -m pip install -q --no-deps "$CONVERTER" || die "pip install --no-deps '$CONVERTER' failed (see above)"
fi
import_check || die "the install finished but importing nnabla and gan_sru fails in $VENV (see above)"
echo "$want" > "$STAMP.tmp" && mv "$STAMP.tmp" "$STAMP"
say "ready: Python $venv_version ($base), venv $VENV (installed)"
