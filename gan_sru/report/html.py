"""report.html: the scores with their floors, intervals and a one-line reading each, the pictures, the privacy
section and the run's config, in one file that needs nothing else (PNGs embedded as base64 data: URIs, inline
CSS, no scripts, no network).

The shared 2-D embedding of real and generated sequences is shown twice, side by side: the PCA picture of
`evaluate` (components fitted on real data; its axes mean the same for every run) and a t-SNE of both sets
together (gan_sru.metrics.statistics.tsne_projection: at most TSNE_MAX_POINTS of each set, seeded by the
evaluation's seed; it keeps neighbourhoods, which PCA's two axes can hide). Wide data: the per-feature pictures
show at most 8 features, the highest-variance ones, and say so.
"""
import base64
import html
import io
import json
import os

import numpy as np

MIN_HOLDOUT = 50  # fewer held-out sequences: the floor's discriminative score alone varies by about +-0.07
MAX_MARGINALS = 8

LABELS = {"discriminative": "discriminative", "predictive": "predictive (TSTR MAE)", "context_fid": "Context-FID",
          "correlational": "correlational", "mmd2": "MMD² (RBF)"}


def _value(name, v):
    """(point, interval or None) of one score entry of metrics.json; the interval is mean +- 1.96 standard
    errors over the repeats where there are at least 2."""
    if v is None:
        return None, None
    if isinstance(v, (int, float)):
        return float(v), None
    point = v["mae"] if name == "predictive" else v["mean"]
    k = len(v.get("scores", ()))
    if k >= 2:
        half = 1.96 * float(v["std"]) / np.sqrt(k)
        return float(point), (float(point) - half, float(point) + half)
    return float(point), None


def readings(result):
    """{score: one-line reading} comparing the generated set with the held-out floor."""
    gen, floor = result.get("generated") or {}, result.get("holdout") or {}
    g = {k: _value(k, gen.get(k))[0] for k in LABELS}
    f = {k: _value(k, floor.get(k))[0] for k in LABELS}
    out = {}
    if g["discriminative"] is not None:
        out["discriminative"] = (f"a classifier tells generated from real {100 * g['discriminative']:.1f}% better than "
                                 "chance" + ("" if f["discriminative"] is None else
                                             f"; held-out real data: {100 * f['discriminative']:.1f}%"))
    if g["predictive"] is not None:
        floor = "" if f["predictive"] is None else f"; trained on held-out real: {f['predictive']:.4f}"
        out["predictive"] = (f"a model trained on generated data predicts real data with error "
                             f"{g['predictive']:.4f}{floor}")
    for k, what in (("context_fid", "embedding distributions differ by"),
                    ("correlational", "feature correlations differ by"), ("mmd2", "kernel distance")):
        if g[k] is not None:
            out[k] = f"{what} {g[k]:.4g}" + ("" if f[k] is None else f"; held-out real: {f[k]:.4g}") + " (0: same)"
    return out


def sample_size_warning(result):
    """A sentence when the held-out set is too small for its floor to be read, else None."""
    n = result.get("num_holdout", 0)
    if n < MIN_HOLDOUT:
        return (f"the held-out set has {n} sequences, fewer than the {MIN_HOLDOUT} needed for its floor to be read "
                "to a few points: treat generated-vs-floor differences with care")
    return None


def marginals_png(real, fake, features=None):
    """PNG bytes: each feature's marginal distribution, real vs generated (pooled steps); at most MAX_MARGINALS
    features (the highest-variance ones of wider data). real, fake: lists of (L_i, C) arrays."""
    from gan_sru.plots.common import FAKE_COLOR, REAL_COLOR, figure
    from gan_sru.plots.samples import pick_features

    feats = features if features is not None else pick_features(real, MAX_MARGINALS)
    r, g = np.concatenate(real), np.concatenate(fake)
    cols = min(4, len(feats))
    rows = -(-len(feats) // cols)
    fig = figure((260 * cols, 200 * rows + 30))
    for i, c in enumerate(feats):
        ax = fig.add_subplot(rows, cols, i + 1)
        lo, hi = float(min(r[:, c].min(), g[:, c].min())), float(max(r[:, c].max(), g[:, c].max()))
        bins = np.linspace(lo, hi + 1e-9, 31)
        ax.hist(r[:, c], bins=bins, density=True, alpha=0.5, color=REAL_COLOR, label="real")
        ax.hist(g[:, c], bins=bins, density=True, alpha=0.5, color=FAKE_COLOR, label="generated")
        ax.set_title(f"feature {c}", fontsize=9)
        ax.tick_params(labelsize=7)
        if i == 0:
            ax.legend(fontsize=7, loc="upper right")  # a fixed corner: "best" searches every bar
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def tsne_png(real, fake, seed):
    """(PNG bytes, caption): the t-SNE of real and generated sequences together (``tsne_projection``).
    real, fake: lists of (L_i, C) arrays; seed: the evaluation's seed (draws the points and seeds t-SNE)."""
    from gan_sru.metrics.statistics import TSNE_MAX_POINTS, tsne_perplexity, tsne_projection
    from gan_sru.plots.common import FAKE_COLOR, REAL_COLOR, figure

    r, g = tsne_projection(real, fake, seed=seed)
    fig = figure((600, 600))
    ax = fig.subplots()
    ax.scatter(r[:, 0], r[:, 1], s=6, alpha=0.5, color=REAL_COLOR, label="real")
    ax.scatter(g[:, 0], g[:, 1], s=6, alpha=0.5, color=FAKE_COLOR, label="generated")
    ax.set_xlabel("t-SNE 1")
    ax.set_ylabel("t-SNE 2")
    ax.legend(loc="upper right")  # a fixed corner: "best" searches every point
    ax.set_title(f"t-SNE of real and generated together, seed {seed}")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    caption = (f"t-SNE of {len(r)} real and {len(g)} generated sequences together (capped at {TSNE_MAX_POINTS} "
               f"of each, drawn at random; scikit-learn, perplexity {tsne_perplexity(len(r) + len(g)):.3g}, "
               f"random_state {seed}): it keeps neighbours together, not distances; read the overlap, not the "
               "gaps or the cluster sizes")
    return buf.getvalue(), caption


def _img(data, alt):
    return (f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">')


def _fmt(x):
    return "-" if x is None else f"{x:.4g}"


def _score_rows(result, read):
    gen, floor = result.get("generated") or {}, result.get("holdout") or {}
    rows = []
    for k, label in LABELS.items():
        gp, gi = _value(k, gen.get(k))
        fp, fi = _value(k, floor.get(k))
        if gp is None:
            continue
        interval = "-" if gi is None else f"{gi[0]:.4g} to {gi[1]:.4g}"
        rows.append(f"<tr><td>{label}</td><td>{_fmt(gp)}</td><td>{interval}</td><td>{_fmt(fp)}</td>"
                    f"<td>{html.escape(read.get(k, ''))}</td></tr>")
    return "\n".join(rows)


def _privacy_rows(section):
    if not section:
        return "<p>No privacy section.</p>"
    mia, aa = section.get("membership_inference"), section.get("adversarial_accuracy")
    if mia is None:
        return f"<p>Not computed: {html.escape(section.get('note') or '')}.</p>"
    lo, hi = mia["interval"]
    rows = [f"<tr><td>membership attack AUC</td><td>{mia['auc']:.3f}</td><td>0.5</td><td>guesses who was in "
            f"training {100 * mia['advantage']:+.1f} points better than chance (95% interval {100 * lo:+.1f} to "
            f"{100 * hi:+.1f}); n = {mia['n_members']} + {mia['n_nonmembers']}</td></tr>",
            f"<tr><td>members flagged at {100 * mia['low_fpr']:.1f}% false positives</td>"
            f"<td>{mia['tpr_at_low_fpr']:.3f}</td><td>{mia['low_fpr']:.3f}</td><td>above its floor: some "
            "training sequences are given away, even with an AUC near 0.5</td></tr>"]
    if aa:
        rows += [f"<tr><td>AA train-synthetic</td><td>{aa['aa_train_synthetic']:.3f}</td><td>0.5</td>"
                 f"<td>nearest neighbours tell training from generated (n = {aa['n']})</td></tr>",
                 f"<tr><td>AA holdout-synthetic</td><td>{aa['aa_holdout_synthetic']:.3f}</td><td>0.5</td>"
                 "<td>the same with held-out real data</td></tr>",
                 f"<tr><td>privacy loss</td><td>{aa['privacy_loss']:+.3f}</td><td>0</td><td>above about 0.05: "
                 "generated data sits closer to training than to unseen data</td></tr>"]
    warn = f"<p class=warn>{html.escape(mia['warning'])}</p>" if mia.get("warning") else ""
    return ("<table><tr><th>score</th><th>value</th><th>floor</th><th>reading</th></tr>" + "".join(rows)
            + "</table>" + warn)


CSS = ("body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em;color:#222}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:14px}"
       "th{background:#eee}img{max-width:100%;display:block;margin:0.5em 0}.warn{color:#a40;font-weight:bold}"
       "pre{background:#f6f6f6;padding:0.5em;overflow:auto;font-size:12px}"
       ".row{display:flex;flex-wrap:wrap;gap:1em}.row figure{flex:1 1 400px;margin:0}"
       "figcaption{font-size:13px;color:#444}")


def write_html(result, out, real=None, fake=None, config_text=None, data_summary=None, title=None):
    """Write `out`/report.html from a metrics.json dict and the pictures it names in `out`; return its path.

    real, fake: the scored sets (lists of (L_i, C) arrays), for the marginal-distribution picture and the t-SNE
    beside the PCA picture (both left out without them; the t-SNE is seeded by result["seed"]).
    config_text: the run's config (YAML) shown as it is; data_summary: {label: value} lines.
    """
    r = result
    read = readings(r)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title or 'evaluation')}</title>"
             f"<style>{CSS}</style></head><body>", f"<h1>{html.escape(title or 'Evaluation')}</h1>",
             f"<p>Sets: {r.get('num_generated')} generated, {r.get('num_real')} real (training split), "
             f"{r.get('num_holdout')} held-out real; protocol {html.escape(str((r.get('protocol') or {}).get('name')))}"
             f", {r.get('repeats')} repeats, seed {r.get('seed')}. All scores in the [0, 1] training scale; lower is "
             "better; the floor scores held-out real data the same way.</p>"]
    warning = sample_size_warning(r)
    if warning:
        parts.append(f"<p class=warn>Warning: {html.escape(warning)}.</p>")
    parts += ["<h2>Scores</h2><table><tr><th>score</th><th>generated vs real</th><th>95% interval (repeats)</th>"
              "<th>floor (held-out vs real)</th><th>reading</th></tr>", _score_rows(r, read), "</table>"]
    if r.get("conditional"):
        from gan_sru.conditional.evaluate import conditional_markdown

        section = r["conditional"]
        # report.md links the section's pictures; here they are embedded below its text (which loses its "## ")
        text = conditional_markdown({**section, "pictures": {}}).split("\n", 1)[1].strip()
        parts += ["<h2>Conditional generation</h2>", f"<pre>{html.escape(text)}</pre>"]
        for name in (section.get("pictures") or {}).values():
            if os.path.isfile(os.path.join(out, name)):
                what = ("each class, real vs generated" if name == "per_class.png" else
                        "categorical features: frequencies and transitions, real vs generated")
                with open(os.path.join(out, name), "rb") as f:
                    parts += [f"<h3>{what}</h3>", _img(f.read(), name)]
    parts += ["<h2>Privacy</h2>", _privacy_rows(r.get("privacy"))]
    mem = r.get("memorisation")
    if mem and mem.get("median_ratio") is not None:
        parts.append(f"<p>Distance to the closest training record: generated median over held-out median "
                     f"{mem['median_ratio']:.3f} (1: as far as unseen data); generated closer than the held-out 5% "
                     f"quantile: {100 * mem['closer_than_holdout_q05']:.1f}% (about 5% without copying).</p>")
    parts.append("<h2>Pictures</h2>")
    if real is not None and fake is not None:
        C = real[0].shape[1]
        note = "" if C <= MAX_MARGINALS else f" ({MAX_MARGINALS} of {C} features: the highest-variance ones)"
        parts += [f"<h3>Marginal distribution of each feature{note}</h3>", _img(marginals_png(real, fake), "marginals")]
    pictures = dict(r.get("pictures") or {})
    pca = pictures.pop("pca", None)
    figures = []  # (PNG bytes, alt, caption), shown side by side
    if pca and os.path.isfile(os.path.join(out, pca)):
        with open(os.path.join(out, pca), "rb") as f:
            figures.append((f.read(), "pca", f"PCA fitted on real: all {r.get('num_real')} real and "
                            f"{r.get('num_generated')} generated sequences on the real set's first two components"))
    if real is not None and fake is not None:
        png, caption = tsne_png(real, fake, int(r.get("seed") or 0))
        figures.append((png, "tsne", caption))
    if figures:
        parts += ["<h3>Real vs generated in a shared 2-D embedding</h3><div class=row>"]
        parts += [f"<figure>{_img(png, alt)}<figcaption>{html.escape(caption)}</figcaption></figure>"
                  for png, alt, caption in figures] + ["</div>"]
    captions = {"autocorrelation": "autocorrelation by lag (real solid, generated dashed)",
                "real_vs_generated": "sequences, real vs generated (at most 8 features)",
                "correlation": "feature correlation matrices and their difference",
                "scores": "scores next to their floors", "separability": "what tells them apart",
                "memorisation": "distance to the nearest training sequence (memorisation)"}
    for key, name in pictures.items():
        path = os.path.join(out, name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                parts += [f"<h3>{html.escape(captions.get(key, key))}</h3>", _img(f.read(), key)]
    if data_summary:
        parts += ["<h2>Data</h2><table>"] + [f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(str(v))}</td></tr>"
                                            for k, v in data_summary.items()] + ["</table>"]
    if config_text:
        parts += ["<h2>Config</h2>", f"<pre>{html.escape(config_text)}</pre>"]
    settings = {k: r[k] for k in ("protocol", "iterations") if k in r}
    parts += ["<h2>Settings</h2>", f"<pre>{html.escape(json.dumps(settings, indent=1, default=str))}</pre>",
              "</body></html>"]
    path = os.path.join(out, "report.html")
    from gan_sru.files import atomic_write_text

    atomic_write_text(path, "\n".join(parts))
    return path
