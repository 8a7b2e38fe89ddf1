"""What `gan-sru evaluate` writes besides metrics.json: the score table it prints, report.md, the pictures and
report.html."""
import os

from gan_sru.commands.evaluate_memorisation import PICTURE as MEMORISATION_PICTURE
from gan_sru.commands.evaluate_memorisation import memorisation_markdown, privacy_markdown
from gan_sru.commands.evaluate_separability import PICTURE as SEPARABILITY_PICTURE
from gan_sru.commands.evaluate_separability import separability_markdown
from gan_sru.commands.sections import SECTIONS


def repeats_text(repeats):
    """metrics.json's "repeats" in words: "5", or "10 classifiers, 3 regressors"."""
    if isinstance(repeats, dict):
        return f"{repeats['discriminative']} classifiers, {repeats['predictive']} regressors"
    return str(repeats)


SCORES = ("discriminative", "predictive", "context_fid", "correlational", "mmd2")
PICTURES = {"pca": "pca.png", "autocorrelation": "autocorrelation.png",
            "real_vs_generated": "real_vs_generated.png", "correlation": "correlation.png", "scores": "scores.png",
            "separability": SEPARABILITY_PICTURE, "memorisation": MEMORISATION_PICTURE}
MAX_LAG = 50  # autocorrelation picture: lags 0 .. 50


def format_score(name, value):
    """One score as text: 'mean ± std' for the discriminative and correlational scores, the number
    otherwise, '-' for none."""
    if value is None:
        return "-"
    if name in ("discriminative", "correlational"):
        return f"{value['mean']:.4f} ± {value['std']:.4f}"
    if name == "predictive":
        spread = f" ± {value['std']:.4f}" if len(value.get("scores", ())) > 1 else ""
        if "mae_timegan_scale" in value:
            return f"{value['mae']:.4f}{spread} (TimeGAN scale {value['mae_timegan_scale']:.4f})"
        return f"{value['mae']:.4f}{spread}"
    if name == "context_fid":
        return f"{value:.4f}"
    return f"{value:.5f}"


def score_table(result):
    """Markdown table: score, generated vs real, held-out vs real (floor), target."""
    gen, floor = result["generated"], result["holdout"] or {}
    rows = ["| score | generated vs real | held-out real vs real (floor) | target |",
            "|---|---|---|---|"]
    labels = {"discriminative": "discriminative", "predictive": "predictive (TSTR MAE)", "context_fid": "Context-FID",
              "correlational": "correlational", "mmd2": "MMD² (RBF)"}
    for name in SCORES:
        target = f"≤ {result['targets'][name]:.2f}" if name in result["targets"] else "-"
        rows.append(f"| {labels[name]} | {format_score(name, gen.get(name))} | "
                    f"{format_score(name, floor.get(name))} | {target} |")
    return "\n".join(rows)


def report_markdown(result):
    r = result
    it, proto = r["iterations"], r["protocol"]
    disc, pred = proto["discriminative"], proto["predictive"]
    lines = [
        f"# Evaluation of `{os.path.basename(r['run'])}` at checkpoint step {r['checkpoint_step']}",
        "",
        f"- run folder: `{r['run']}`",
        f"- checkpoint step: {r['checkpoint_step']}",
        f"- N: {r['num_generated']} generated, {r['num_real']} real (training split), "
        f"{r['num_holdout']} held-out real",
        f"- protocol: **{proto['description']}**",
        f"- discriminative score: GRU hidden {disc['hidden_size']}, {it['discriminative']} iterations, batches of "
        f"{disc['batch_size'] // 2} real + {disc['batch_size'] // 2} generated, Adam lr {disc['learning_rate']:g}",
        f"- repeats of the discriminative and predictive scores (a fresh GRU each): {repeats_text(r['repeats'])}; "
        f"seed {r['seed']}",
        f"- predictive score: GRU hidden {pred['hidden_size']}, {it['predictive']} iterations, batches of "
        f"{pred['batch_size']}, Adam lr {pred['learning_rate']:g}",
        f"- Context-FID: TS2Vec encoder (320 dimensions, batch 8, lr 1e-3) trained {it['context_fid']} iterations "
        f"on the real set; correlational score: mean ± std over 5 draws of a fifth of the real set's size",
        f"- scale: all scores in the {r['scale']}",
    ]
    sections = r.get("sections", SECTIONS)
    if tuple(sections) != SECTIONS:
        lines.append(f"- sections (--only): {', '.join(sections)}; not computed: "
                     f"{', '.join(s for s in SECTIONS if s not in sections)}")
    if r.get("holdout_note"):
        lines += ["", f"No floor: {r['holdout_note']}."]
    from gan_sru.report import sample_size_warning

    if sample_size_warning(r):
        lines += ["", f"Warning: {sample_size_warning(r)}."]
    if r["generated"] is not None:
        lines += _fidelity_markdown(r)
    if r["separability"] is not None:
        lines += [separability_markdown(r["separability"])]
    if r.get("memorisation"):
        lines += [memorisation_markdown(r["memorisation"])]
    if r.get("privacy"):
        lines += [privacy_markdown(r["privacy"])]
    if r.get("conditional"):
        from gan_sru.conditional.evaluate import conditional_markdown

        lines += [conditional_markdown(r["conditional"])]
    return "\n".join(lines)


def _fidelity_markdown(r):
    """report.md's lines of the fidelity section: the score table, its notes and the pictures."""
    lines = [
        "",
        score_table(r),
        "",
        "The predictive score predicts every numeric feature one step ahead from all features (TimeGAN's "
        "post-hoc regressor); for sines the value in brackets is in TimeGAN's scale ((sin + 1) / 2, half our range).",
        "",
        "Lower is better everywhere. The floor scores held-out real data against the same training data the "
        "same way: the best a generator can be expected to reach with these set sizes.",
    ]
    if r["generated"]["predictive"] is None:
        lines += ["", "No predictive score: the data has no numeric feature (the score predicts the numeric "
                      "features; categories are inputs only)."]
    lines += [
        "",
        "## Pictures",
        "",
        f"PCA of real and generated sequences (components fitted on real):\n\n![PCA]({PICTURES['pca']})",
        "",
        f"Autocorrelation per feature, real solid, generated dashed:\n\n"
        f"![autocorrelation]({PICTURES['autocorrelation']})",
        "",
        f"Real and generated sequences, [0, 1] scale, one axis per feature (at most 8: the highest-variance "
        f"features of wider data):\n\n![real vs generated]({PICTURES['real_vs_generated']})",
        "",
        f"Feature correlations of real and generated data and their difference:\n\n"
        f"![correlation]({PICTURES['correlation']})",
        "",
        f"Scores of the generated data next to the floor:\n\n![scores]({PICTURES['scores']})",
        "",
    ]
    return lines


def write_pictures(real, fake, generated, floor, out, label):
    """The pca, autocorrelation, real_vs_generated, correlation and scores pictures of PICTURES into `out`;
    label ends each title (e.g. "step 500")."""
    from gan_sru import metrics, plots

    real_p, fake_p = metrics.pca_projection(real, fake, n=2)
    plots.pca_scatter(real_p, fake_p, os.path.join(out, PICTURES["pca"]),
                      title=f"PCA fitted on real, {label}")
    lag = min(MAX_LAG, max(map(len, real)) - 1, max(map(len, fake)) - 1)  # each set's ACF needs lag < its longest
    plots.autocorrelation_plot(metrics.autocorrelation(real, lag), metrics.autocorrelation(fake, lag),
                               os.path.join(out, PICTURES["autocorrelation"]),
                               title=f"autocorrelation (real solid, generated dashed), {label}")
    plots.real_vs_fake(real, fake, os.path.join(out, PICTURES["real_vs_generated"]),
                       title=f"real vs generated, [0, 1] scale, {label}")
    plots.correlation_heatmaps(metrics.correlation_matrix(real), metrics.correlation_matrix(fake),
                               os.path.join(out, PICTURES["correlation"]),
                               title=f"feature correlations (lag 0, pooled over sequences and steps), {label}")
    bars = {}
    for name, short in (("discriminative", "disc"), ("predictive", "pred"), ("mmd2", "MMD²")):
        for which, scores in (("gen", generated), ("floor", floor)):
            if scores is not None and scores[name] is not None:
                bars[f"{short} {which}"] = scores[name]
    plots.scores_bar(bars, os.path.join(out, PICTURES["scores"]), size=(900, 400),
                     title=f"generated (gen) and held-out real (floor) vs real, {label}; lower is better")


def write_report_html(result, out, real, fake, config_path, train):
    """report.html next to report.md (gan_sru.report): the config as written, a summary of the training data."""
    from gan_sru.report import write_html

    config_text = None
    if config_path and os.path.exists(config_path):
        with open(config_path, encoding="utf-8") as f:
            config_text = f.read()
    lengths = [len(s) for s in train.sequences]
    summary = {"training sequences": len(lengths), "features": real[0].shape[1],
               "steps per sequence": (f"{min(lengths)} to {max(lengths)}" if min(lengths) != max(lengths)
                                      else lengths[0])}
    write_html(result, out, real, fake, config_text, summary,
               title=f"Evaluation of {os.path.basename(str(result['run']))} at step {result['checkpoint_step']}")
