"""The profile report: a table, Markdown, JSON and a picture."""
import json
import os

import numpy as np

from gan_sru import RunFolderError

from .measure import PASSES


def _fmt(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"


def format_table(report):
    """The per-strategy summary as a Markdown table, then the savings (the terminal shows the same text)."""
    head = ["strategy", "step ms median", "p10–p90", "G forward", "D step", "G step (G backward)", "other",
            "G passes fwd/bwd", "D passes fwd/bwd", "peak RSS MiB (above start)", "device MiB"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for s in report["strategies"]:
        r = report["results"][s]
        ph, p, mem = r["phase_ms"], r["passes_per_step"], r["memory"]
        g_step = _fmt(ph["g_step"]["median"])
        if "g_backward" in ph:
            g_step += f" ({_fmt(ph['g_backward']['median'])})"
        cells = [s, _fmt(r["step_ms"]["median"]), f"{_fmt(r['step_ms']['p10'])}–{_fmt(r['step_ms']['p90'])}",
                 _fmt(ph["g_forward"]["median"]) if s != "linked" else "in D step", _fmt(ph["d_step"]["median"]),
                 g_step, _fmt(ph["other"]["median"]),
                 f"{p['G_forward']} / {p['G_backward']}", f"{p['D_forward']} / {p['D_backward']}",
                 f"{_fmt(mem['host_peak_mib'], 1)} ({_fmt(mem['host_peak_above_start_mib'], 1)})",
                 _fmt(mem["device_peak_above_start_mib"], 1)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(savings_lines(report))
    lines.extend(communication_lines(report))
    return "\n".join(lines)


def communication_lines(report):
    """One line per strategy under mpirun: the all-reduce's share of the step and the bytes it moves."""
    out = []
    for s in report["strategies"]:
        c = report["results"][s].get("communication")
        if c:
            out.append(f"- {s} on {c['world_size']} ranks ({c['backend']}; global batch {c['global_batch']} = "
                       f"{c['world_size']} x {c['batch_per_rank']}): all-reduce {_fmt(c['all_reduce_ms']['median'])} "
                       f"ms per step (p10–p90 {_fmt(c['all_reduce_ms']['p10'])}–{_fmt(c['all_reduce_ms']['p90'])}) = "
                       f"{_fmt(c['share_of_step_pct'], 1)}% of the step, of which waiting for the slowest rank "
                       f"{_fmt(c['wait_ms']['median'])} ms and the transfer itself {_fmt(c['transfer_ms']['median'])} "
                       f"ms ({_fmt(c['transfer_share_of_step_pct'], 1)}%); {c['bytes_per_step']:,} bytes all-reduced "
                       f"per step in {c['all_reduce_calls_per_step']} calls")
    return out


def savings_lines(report):
    sv = report["savings"]
    if not sv:
        return ["(savings need the detached strategy in --strategies)"]
    out = []
    for alt in ("recompute", "linked"):
        if alt in sv:
            x = sv[alt]
            out.append(f"- detached saves {_fmt(x['saving_ms'])} ms per step over {alt} (paired median; p10–p90 "
                       f"{_fmt(x['saving_ms_p10'])}–{_fmt(x['saving_ms_p90'])}) = "
                       f"{_fmt(x['saving_of_bound_pct'], 1)}% of its bound, {x['bound']} "
                       f"({_fmt(x['bound_ms'])} ms); {alt}/detached median step time: "
                       f"{_fmt(x['step_time_ratio'], 3)}")
    return out


def markdown(report):
    """profile.md: the summary table, how it was measured, last losses, and the per-function breakdown."""
    ctx = report["context"]
    lines = [f"# Profile of `{report['config']}`: forward-pass reuse", "",
             f"{report['steps']} timed steps after {report['warmup']} warm-up steps per strategy; context "
             f"{ctx['context']} (device {ctx['device_id']}, {ctx['type_config']}); nnabla "
             f"{report['nnabla_version']}; {report['created']}.", "",
             "Times in ms: medians over the timed steps (p10–p90 of the step time)"
             + ("; the strategies' worker processes took turns step by step" if report["interleaved"] else "")
             + ". The saving is the median of the paired per-step differences (step i has the same batch and "
             "noise in every strategy). Passes per step: counted with function hooks during the warm-up steps "
             "(hooks off while timing). Peak RSS: VmHWM of " + ("a worker process per strategy" if report["isolated"]
                                                                else "this process")
             + ", reset after a throw-away step (kernels compiled, parameters and nnabla's array cache cleared); "
             "in brackets the peak above the RSS at that moment. Device: memory in use on the device (all "
             "processes) above that moment's level, CUDA only.", "",
             format_table(report), ""]
    if report.get("recipe"):  # gan-sru profile: the keys the config left unset, as training sets them
        lines += ["The recipe's choices for this data (`gan_sru/recipe.py`, as in training): "
                  + "; ".join(f"`{k}` = {json.dumps(v)}" for k, v in report["recipe"].items()) + ".", ""]
    lines += ["## Last step's losses (identical data, noise and initial weights)", "",
             "| strategy | d_loss | g_loss |", "|---|---|---|"]
    for s in report["strategies"]:
        loss = report["results"][s]["last_losses"]
        lines.append(f"| {s} | {loss['d_loss']:.6f} | {loss['g_loss']:.6f} |")
    fb = report.get("function_breakdown")
    if fb and "error" in fb:
        lines += ["", f"GraphProfiler failed on the {fb['strategy']} graph: {fb['error']}"]
    elif fb:
        lines += ["", f"## Functions of one {fb['strategy']} step graph (GraphProfiler, ms)", "",
                  "| graph | whole forward | whole backward |", "|---|---|---|"]
        for name, g in fb["graphs"].items():
            lines.append(f"| {name} | {_fmt(g['forward_all_ms'], 3)} | {_fmt(g['backward_all_ms'], 3)} |")
        rows = [(name, f) for name, g in fb["graphs"].items() for f in g["functions"]]
        rows.sort(key=lambda r: -(r[1]["forward_ms"] + r[1]["backward_ms"]))
        lines += ["", "Slowest functions (forward + backward):", "",
                  "| graph | function | scope | inputs | forward | backward |", "|---|---|---|---|---|---|"]
        for name, f in rows[:20]:
            shapes = ", ".join("x".join(str(d) for d in s) or "()" for s in f["inputs"])
            lines.append(f"| {name} | {f['function']} | {f['scope'] or '-'} | {shapes} | "
                         f"{_fmt(f['forward_ms'], 3)} | {_fmt(f['backward_ms'], 3)} |")
    return "\n".join(lines) + "\n"


def plot(report, path):
    """profile.png: stacked median phase times per strategy (p10–p90 of the step as an error bar), and
    the network passes per step."""
    from matplotlib.figure import Figure

    names = report["strategies"]
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    ax_t, ax_p = fig.subplots(1, 2)
    x = np.arange(len(names))
    bottom = np.zeros(len(names))
    colors = {"g_forward": "#4c72b0", "d_step": "#dd8452", "g_step": "#55a868", "other": "#8c8c8c"}
    labels = {"g_forward": "G forward", "d_step": "D step (linked: + G forward, G backward)",
              "g_step": "G step", "other": "other"}
    for ph in ("g_forward", "d_step", "g_step", "other"):
        vals = np.array([report["results"][s]["phase_ms"][ph]["median"] for s in names])
        ax_t.bar(x, vals, 0.6, bottom=bottom, color=colors[ph], label=labels[ph])
        bottom += vals
    steps = [report["results"][s]["step_ms"] for s in names]
    med = np.array([m["median"] for m in steps])
    err = np.array([[m["median"] - m["p10"] for m in steps], [m["p90"] - m["median"] for m in steps]])
    ax_t.errorbar(x + 0.22, med, yerr=np.clip(err, 0, None), fmt="k_", capsize=4, label="step median, p10–p90")
    ax_t.set_xticks(x, names)
    ax_t.set_ylabel("ms per step (medians)")
    ax_t.set_title(f"{report['config']}: time per step ({report['context']['context']})")
    ax_t.set_ylim(0, 1.45 * max(bottom.max(), (med + err[1]).max()))
    ax_t.legend(fontsize=8, loc="upper left", ncol=2)
    width = 0.2
    for j, p in enumerate(PASSES):
        vals = [report["results"][s]["passes_per_step"][p] for s in names]
        bars = ax_p.bar(x + (j - 1.5) * width, vals, width, label=p.replace("_", " "))
        ax_p.bar_label(bars, fmt="%g", fontsize=8)
    ax_p.set_xticks(x, names)
    ax_p.set_ylabel("network passes per step")
    ax_p.set_title("forward / backward passes")
    ax_p.set_ylim(0, 1.3 * max(max(r["passes_per_step"].values()) for r in report["results"].values()))
    ax_p.legend(fontsize=8, loc="upper center", ncol=4)
    fig.savefig(path, dpi=110)


def write_report(report, out_dir, stem="profile"):
    """Write STEM.json, STEM.md and STEM.png into `out_dir`; returns their paths by extension."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise RunFolderError(f"cannot create the profile folder {out_dir}: {e.strerror}") from e
    paths = {k: os.path.join(out_dir, f"{stem}.{k}") for k in ("json", "md", "png")}
    with open(paths["json"], "w") as f:
        json.dump(report, f, indent=1)
    with open(paths["md"], "w") as f:
        f.write(markdown(report))
    plot(report, paths["png"])
    return paths
