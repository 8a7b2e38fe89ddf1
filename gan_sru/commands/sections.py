"""The sections of an evaluation, which `gan-sru evaluate` and `gan-sru score` share, and their --only option.

  fidelity      the scores against real data and their floor (discriminative, predictive, Context-FID,
                correlational, MMD²), their pictures, and a conditional run's per-class section
  separability  what tells generated from real, per group of per-sequence statistics
  memorisation  each generated and held-out sequence's distance to its nearest training sequence
  privacy       the membership-inference attack and the adversarial accuracy
"""
SECTIONS = ("fidelity", "separability", "memorisation", "privacy")


def _parse(only):
    """(names, problem): `only` (a comma-separated string or a sequence of names) as a tuple, and what is wrong
    with it (unknown names, none at all) or None."""
    names = tuple(str(t).strip() for t in (only.split(",") if isinstance(only, str) else only) if str(t).strip())
    bad = [n for n in names if n not in SECTIONS]
    known = f"expected a comma-separated list of {', '.join(SECTIONS)}"
    if bad:
        return names, f"unknown section{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))}; {known}"
    return names, None if names else f"{only!r} names no section; {known}"


def check_sections(only):
    """`only` as a tuple of SECTIONS names, for the Python API; a ConfigError names the unknown ones."""
    from gan_sru import ConfigError

    names, problem = _parse(only)
    if problem:
        raise ConfigError(f"--only: {problem}")
    return names


def only_arg(text):
    """--only's argparse type: the same check, as the command's one-line usage error."""
    import argparse

    names, problem = _parse(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return names


def add_only_argument(p):
    """--only on an argparse parser (default: every section)."""
    p.add_argument("--only", type=only_arg, default=SECTIONS, metavar="SECTIONS",
                   help=f"comma-separated sections to compute, of {', '.join(SECTIONS)} (default: all)")


def run_sections(only, compute, log):
    """compute[name]() for each section named in `only`, in SECTIONS' order, after log("[k/n] name")."""
    todo = [s for s in SECTIONS if s in only]
    for k, name in enumerate(todo, 1):
        log(f"[{k}/{len(todo)}] {name}")
        compute[name]()
