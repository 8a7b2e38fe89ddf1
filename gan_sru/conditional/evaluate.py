"""The conditional part of `gan-sru evaluate` (runs trained with data.attributes / data.categorical).

Adds to metrics.json a "conditional" section and to report.md a section (gan_sru.metrics.conditional):
  classes         for the first categorical attribute (the class): sequences generated for each class
                  (num / K each), TRTR and TSTR accuracy of a logistic classifier on the held-out split, the
                  share of class-k samples a real-trained classifier calls k, and per class the discriminative
                  score of class-k samples against class-k held-out real sequences
  attributes      unconditional samples' attributes (resampled from training) vs the held-out split's:
                  total variation (categorical), Wasserstein-1 in data units (numeric)
  categorical     per categorical feature: frequencies and transition matrices of generated vs held-out
                  sequences, with their TV distances
and the pictures per_class.png and categories.png (gan_sru.conditional.plots).
"""
import numpy as np

from gan_sru.conditional.conditions import draw_attribute_rows


def conditional_section(run, train, holdout, fake, rows, num, repeats, seed, settings, out, progress=True):
    """The "conditional" dict of metrics.json; writes the conditional pictures into `out`.
    fake: the unconditional generated sequences ([0, 1] scale, (L_i, C + K)) for attribute `rows`."""
    from gan_sru import metrics
    from gan_sru.conditional.plots import class_attribute, conditional_pictures
    from gan_sru.metrics.conditional import attribute_distances, category_distances, classification_scores
    from gan_sru.sampling import draw_lengths, generate_cut

    enc = run.encoding
    C = enc.num_continuous
    result = {"attributes": None, "categorical": {}, "classes": None,
              "sampling": "attributes resampled from the training split; categories drawn per step (Gumbel-max)"}
    if enc.attributes and len(holdout):
        real_rows = enc.decode_attributes(holdout.attributes)
        result["attributes"] = attribute_distances(real_rows, rows, enc)
    for i, cat in enumerate(enc.categorical):
        d = category_distances([enc.step_codes(s)[:, i] for s in holdout.sequences],
                               [enc.step_codes(s)[:, i] for s in fake], len(cat))
        result["categorical"][cat.name] = dict(d, labels=cat.labels)
    j = class_attribute(enc)
    pictures = {}
    if j is not None and len(holdout) >= 2:
        cats = enc.attributes[j]["categories"]
        k = len(cats)
        per = max(2, num // k)
        base = draw_attribute_rows(enc, train.attributes, per * k, seed)  # the other attributes, as in training
        base[:, j] = np.repeat(np.array(cats.labels, dtype=object), per)
        attrs = enc.encode_attributes(base)
        made = generate_cut(run, draw_lengths(train.lengths, per * k, seed), seed, attrs)
        y_made = np.repeat(np.arange(k), per)
        y_train = cats.codes(enc.decode_attributes(train.attributes)[:, j])
        y_hold = cats.codes(enc.decode_attributes(holdout.attributes)[:, j])
        scores = classification_scores([s[:, :C] for s in train.sequences], y_train,
                                       [s[:, :C] for s in holdout.sequences], y_hold,
                                       [s[:, :C] for s in made], y_made, k)
        per_class = {}
        for c, label in enumerate(cats.labels):
            real_c = [s for s, y in zip(holdout.sequences, y_hold) if y == c]
            fake_c = [s for s, y in zip(made, y_made) if y == c]
            if len(real_c) >= 2:
                per_class[str(label)] = metrics.discriminative_score(
                    real_c, fake_c[:max(len(real_c), 2)], repeats=repeats, seed=seed, progress=progress,
                    **settings["discriminative"])
        result["classes"] = {"attribute": enc.attributes[j]["name"], "labels": cats.labels,
                             "per_class_samples": per, **scores,
                             "per_class_accuracy": {str(cats.labels[c]): v
                                                    for c, v in scores["per_class_accuracy"].items()},
                             "per_class_discriminative": per_class}
        pictures = conditional_pictures(run, holdout, [run.scaler.inverse(s) for s in made], base, out,
                                        step=run.step)
    elif enc.categorical:
        pictures = conditional_pictures(run, holdout, [run.scaler.inverse(s) for s in fake], rows, out,
                                        step=run.step)
    result["pictures"] = {k: v.rsplit("/", 1)[-1] for k, v in pictures.items()}
    return result


def conditional_markdown(section):
    """The report's "Conditional generation" section."""
    lines = ["## Conditional generation", "", f"Sampling: {section['sampling']}.", ""]
    cls = section.get("classes")
    if cls:
        lines += [f"Classes (attribute `{cls['attribute']}`, {cls['per_class_samples']} samples generated per class); "
                  f"classifier: {cls['classifier']}.", "",
                  f"- train on real, test on real (TRTR) accuracy: {cls['trtr_accuracy']:.4f}",
                  "- train on synthetic, test on real (TSTR) accuracy: " + (
                      f"{cls['tstr_accuracy']:.4f}" if cls["tstr_accuracy"] is not None else "-"),
                  f"- samples generated for class k classified as k (real-trained classifier): "
                  f"{cls['conditioned_accuracy']:.4f}", "",
                  "| class | classified as its class | discriminative score vs that class's held-out real |",
                  "|---|---|---|"]
        for label in cls["labels"]:
            d = cls["per_class_discriminative"].get(str(label))
            acc = cls["per_class_accuracy"].get(str(label))
            acc_text = "-" if acc is None else f"{acc:.4f}"
            d_text = "-" if d is None else f"{d['mean']:.4f} ± {d['std']:.4f}"
            lines.append(f"| {label} | {acc_text} | {d_text} |")
        lines.append("")
    if section.get("attributes"):
        lines += ["| attribute | kind | distance (unconditional samples vs held-out real) |", "|---|---|---|"]
        for name, a in section["attributes"].items():
            lines.append(f"| {name} | {a['kind']} | {a['measure']} {a['distance']:.4f} |")
        lines.append("")
    for name, d in section["categorical"].items():
        lines += [f"Categorical feature `{name}` (labels {d['labels']}): frequency TV {d['frequency_tv']:.4f}, "
                  f"transition TV {d['transition_tv']:.4f} (largest entry difference "
                  f"{d['transition_max_abs']:.4f}).", ""]
    for file in section.get("pictures", {}).values():
        lines += [f"![{file}]({file})", ""]
    return "\n".join(lines)
