"""The quality levers of scripts/evaluate_quality.py --levers: each alone and combined, per model
kind, over several seeds, reported as mean and spread (never a best run).

A lever is what a person can turn on for a training job:
- calibration: the probabilities recalibrated on validation by the app's default method,
  TrainConfig.calibration's default read at run time (now "select": of none, temperature, Platt
  and isotonic, the lowest out-of-fold ECE, none unless one beats it beyond noise); off means
  "none". Each row says which maps its seeds kept ("select: kept none" recalibrated nothing).
- metadata: journal, MeSH, publication types and keywords beside the text, read exactly as a
  training job reads them (classification/jobs/training_metadata.splits_with_metadata, "auto").
  Off means text only. On data without such fields it changes nothing and is reported so.
- tapt: task-adaptive pretraining: the encoder's masked-language-model training continued on the
  TRAINING texts only (never validation or test: engine/adapt.py's EncoderAdapter.fit_texts
  gets train.texts alone), then the adapted encoder fine-tuned (the `adapted` type). Only for
  the fine-tuned transformer kinds.
- self_training: the job's self-training (TrainConfig.self_training_rounds=2, threshold 0.9)
  on data that has unlabelled text: a seeded 30% of the training rows keep their labels, the
  other 70% are the unlabelled texts (their labels hidden; validation and test are never read).
  The row also reports the 30%-only fit (round 0) on test, the reference the lever is judged by.

A lever the code does not have is reported "not available", and one that does not apply to a
kind "not applicable": no number is ever made up for either. Levers whose effective set is the
same for a kind (e.g. `all` = `calibration` for TF-IDF on data without metadata) share one set
of runs and say so ("same_as").
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LEVERS = ("calibration", "metadata", "tapt", "self_training")
SELF_TRAINING_NAMES = ("self_training", "pseudo")
# The metadata forms a model reads (engine/metadata.py), and a model kind of each that the
# app's own splits_with_metadata is asked about.
STYLE_OF_KIND = {"baseline": "tokens", "embedding": "prefix", "transformer": "prefix"}
STYLE_PROBE = {"tokens": "tfidf_logreg", "prefix": "minilm"}
SPLITS = ("train", "validation", "test")
METRICS = ("micro_f1", "macro_f1", "ece_before", "ece_after", "fit_seconds")


@dataclass
class Data:
    """The app's three splits, and the same splits as a model with metadata reads them."""

    train: Any
    val: Any
    test: Any
    labels: list[str]
    multi: bool
    # style -> {"fields": [...], "line": the job's log line, "splits": (train, val, test) or None}
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def splits(self) -> tuple[Any, Any, Any]:
        return self.train, self.val, self.test


def lever_availability() -> dict[str, str | None]:
    """Per lever: None where this code has it, else why not (read from TrainConfig's fields and
    the engine's modules, so a lever another change adds shows up without editing this)."""
    from classification.engine.registry import REGISTRY
    from classification.engine.schema import TrainConfig

    names = {f.name for f in dataclasses.fields(TrainConfig)}

    def module(name: str) -> bool:
        return importlib.util.find_spec(f"classification.engine.{name}") is not None

    out: dict[str, str | None] = {
        "calibration": None if "calibration" in names and module("calibration") else
        "not available: TrainConfig has no calibration setting",
        "metadata": None if "metadata_fields" in names and module("metadata") else
        "not available: TrainConfig has no metadata_fields setting",
        "tapt": None if module("adapt") and {"adapt", "adapted"} <= set(REGISTRY) else
        "not available: no engine/adapt.py or no adapt/adapted model types",
    }
    found = {n for n in names if n.startswith(SELF_TRAINING_NAMES)}
    out["self_training"] = None if {"self_training_rounds", "self_training_threshold"} <= found \
        and module("self_training") else "not available: TrainConfig has no self-training setting"
    return out


def levers_parse(spec: str) -> list[tuple[str, frozenset[str]]]:
    """"none,calibration,tapt+metadata,all" -> [(row name, levers asked)]; SystemExit naming an
    unknown lever. `all` asks for every lever; each kind then gets those it can have."""
    rows: list[tuple[str, frozenset[str]]] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        asked = frozenset() if item == "none" else frozenset(LEVERS) if item == "all" \
            else frozenset(item.split("+"))
        unknown = sorted(asked - set(LEVERS))
        if unknown:
            raise SystemExit(f"Unknown lever {', '.join(unknown)}: use none, all, or "
                             f"{', '.join(LEVERS)}, joined with + to combine.")
        rows.append((item, asked))
    if not rows:
        raise SystemExit("--levers is empty: give none, all, or levers joined with +.")
    return rows


def _why_not(lever: str, *, kind: str, data: Data) -> str | None:
    """Why a lever the code has does not apply to this kind on this data; None if it does."""
    if lever == "tapt" and kind != "transformer":
        return f"not applicable: TAPT adapts an encoder that is then fine-tuned ({kind} kind)"
    if lever == "metadata" and kind in STYLE_OF_KIND:
        view = data.metadata.get(STYLE_OF_KIND[kind]) or {}
        if not view.get("fields"):
            return ("no effect on this data: " + (view.get("line") or "no metadata read")
                    .removeprefix("metadata: "))
    return None


def levers_effective(asked: frozenset[str], *, kind: str, data: Data,
                     available: dict[str, str | None]) -> tuple[frozenset[str], dict[str, str]]:
    """(the levers that really run, {lever asked but left out: why})."""
    used, left_out = set(), {}
    for lever in sorted(asked):
        reason = available.get(lever) or _why_not(lever, kind=kind, data=data)
        if reason:
            left_out[lever] = reason
        else:
            used.add(lever)
    return frozenset(used), left_out


def spread(values: list[float | None]) -> dict[str, Any]:
    """Mean, sample standard deviation, min and max over seeds (None where no value)."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return {"mean": None, "sd": None, "min": None, "max": None, "per_seed": values}
    return {"mean": statistics.fmean(present),
            "sd": statistics.stdev(present) if len(present) > 1 else 0.0,
            "min": min(present), "max": max(present), "per_seed": values}


# ---- the data ---------------------------------------------------------------------------------


def metadata_views(dataset: Any, data: Data) -> None:
    """Fills data.metadata through the training job's own step (needs Django): for each form,
    the fields "auto" resolves to on these rows, and the splits as such a model reads them."""
    from types import SimpleNamespace

    from classification.jobs.training_metadata import splits_with_metadata
    from classification.ml_models import TrainConfig

    for style, model_type in STYLE_PROBE.items():
        config = TrainConfig(metadata_fields=["auto"])
        # splits_with_metadata reads the job's model type and dataset only.
        job = SimpleNamespace(ml_model=SimpleNamespace(model_type=model_type, dataset=dataset))
        composed, line = splits_with_metadata(job=job, config=config, splits=data.splits)
        data.metadata[style] = {"fields": list(config.metadata_used), "line": line,
                                "splits": composed if config.metadata_used else None}


def data_dump(data: Data, path: Path) -> None:
    """The splits (and their metadata forms) as JSON, for a machine without Django."""
    def texts(splits: Any) -> dict[str, Any]:
        return {name: {"texts": d.texts, "labels": d.labels}
                for name, d in zip(SPLITS, splits, strict=True)}

    views = {style: {"fields": v["fields"], "line": v["line"],
                     "splits": texts(v["splits"]) if v["splits"] else None}
             for style, v in data.metadata.items()}
    path.write_text(json.dumps({"labels": data.labels, "multi_label": data.multi,
                                **texts(data.splits), "metadata": views}), encoding="utf-8")


def data_load(path: Path) -> Data:
    """What data_dump wrote."""
    from classification.engine.types import TextData

    # A .gz file too: the splits travel to a GPU box beside the weights, under a size cap.
    raw = json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz"
                     else path.read_text(encoding="utf-8"))

    def splits(d: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(TextData(d[s]["texts"], d[s]["labels"]) for s in SPLITS)

    data = Data(*splits(raw), labels=raw["labels"], multi=raw["multi_label"])
    for style, view in (raw.get("metadata") or {}).items():
        data.metadata[style] = {"fields": view["fields"], "line": view["line"],
                                "splits": splits(view["splits"]) if view["splits"] else None}
    return data


# ---- the runs ---------------------------------------------------------------------------------


@dataclass
class Runner:
    """Trains one (model kind, lever set, seed) at a time; adapted encoders are made once per
    (base, seed) and shared by every lever set that uses TAPT."""

    data: Data
    scratch: Path
    epochs: int
    tapt_epochs: int
    model_path: str | None = None
    # --resplit: each seed's own split; otherwise every seed trains on `data`.
    by_seed: dict[int, Data] = field(default_factory=dict)
    encoders: dict[tuple[str, int], tuple[str, dict[str, Any]]] = field(default_factory=dict)

    def data_for(self, seed: int) -> Data:
        return self.by_seed.get(seed, self.data)

    def adapted_encoder(self, base: str, seed: int) -> tuple[str, dict[str, Any]]:
        """(folder, adapt metrics) of `base` adapted on the training texts alone."""
        key = (base, seed)
        if key in self.encoders:
            return self.encoders[key]
        from classification.engine.adapt import EncoderAdapter
        from classification.engine.registry import REGISTRY
        from classification.ml_models import TrainConfig

        config = TrainConfig(adapt_base="custom" if self.model_path else base,
                             model_path=self.model_path, epochs=self.tapt_epochs, seed=seed,
                             learning_rate=REGISTRY["adapt"].learning_rate or 1e-4,
                             output_dir=str(self.scratch / f"adapt-{base}-{seed}"))
        adapter = EncoderAdapter("adapt")
        started = time.perf_counter()
        # Training texts only: validation tunes thresholds and calibration, test is scored.
        metrics = adapter.fit_texts(list(self.data_for(seed).train.texts), config, lambda _e: None,
                                    lambda: False)
        folder = self.scratch / f"encoder-{base}-{seed}"
        adapter.save(str(folder))  # the adapt job's own artifact: a Hugging Face folder
        summary = {"seconds": time.perf_counter() - started,
                   **{k: metrics.get(k) for k in ("perplexity_before", "perplexity_after",
                                                  "train_texts", "heldout_texts", "steps",
                                                  "tokens_per_second")}}
        self.encoders[key] = (str(folder), summary)
        return self.encoders[key]

    def one(self, model_type: str, levers: frozenset[str], seed: int) -> dict[str, Any]:
        """Train once with these levers on; the test scores as the app's evaluate() gives them."""
        from classification.ml_models import REGISTRY, TrainConfig, create_classifier

        spec, data = REGISTRY[model_type], self.data_for(seed)
        train, val, test = data.splits
        config = TrainConfig(label_names=data.labels, multi_label=data.multi,
                             epochs=self.epochs, seed=seed, metadata_fields=["none"],
                             calibration=app_calibration() if "calibration" in levers
                             else "none",
                             output_dir=str(self.scratch / f"job-{model_type}-{seed}-"
                                            f"{'+'.join(sorted(levers)) or 'none'}"))
        if spec.learning_rate is not None:
            config.learning_rate = spec.learning_rate
        if self.model_path and spec.kind != "baseline":
            config.model_path = self.model_path
        if "metadata" in levers:
            view = data.metadata[STYLE_OF_KIND[spec.kind]]
            train, val, test = view["splits"]
            config.metadata_used, config.metadata_style = list(view["fields"]), \
                STYLE_OF_KIND[spec.kind]
        row: dict[str, Any] = {}
        trained = model_type
        if "tapt" in levers:
            config.model_path, row["adapt"] = self.adapted_encoder(model_type, seed)
            trained = "adapted"
            config.learning_rate = REGISTRY["adapted"].learning_rate or config.learning_rate
        started = time.perf_counter()
        if "self_training" in levers:
            clf, row["self_training"] = self_trained(trained, train, val, test, config, seed)
        else:
            clf = create_classifier(trained)
            clf.fit(train, val, config, lambda _e: None, lambda: False)
        row["fit_seconds"] = time.perf_counter() - started
        metrics = clf.evaluate(test)
        row.update(micro_f1=metrics["micro_f1"], macro_f1=metrics["macro_f1"],
                   ece_before=metrics.get("ece_uncalibrated"), ece_after=metrics.get("ece"),
                   calibration=calibration_said(clf.calibration),
                   metadata_used=list(getattr(clf.config, "metadata_used", []) or []),
                   trained_type=trained)
        return row


def app_calibration() -> str:
    """The calibration a training job uses when nobody picks one: TrainConfig's default."""
    from classification.ml_models import TrainConfig

    return str(TrainConfig().calibration)


def calibration_said(calibration: Any) -> str:
    """The method, and for "select" the map it kept: "select: kept none" applies nothing."""
    if calibration.method == calibration.chosen:
        return str(calibration.method)
    return f"{calibration.method}: kept {calibration.chosen}"


# The self_training lever (jobs/self_training.py's settings and rounds, on hidden labels).
LABELLED_SHARE, ST_ROUNDS, ST_THRESHOLD = 0.3, 2, 0.9


def labelled_part(train: Any, *, seed: int, share: float = LABELLED_SHARE) -> tuple[Any, list[str]]:
    """(a seeded `share` of the training rows with their labels, the other rows' texts alone):
    the demo has no unlabelled text of its own, so its training rows' labels are hidden."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(train))
    cut = max(1, round(share * len(train)))
    return train.subset(sorted(order[:cut].tolist())), [
        train.texts[i] for i in sorted(order[cut:].tolist())]


def self_trained(model_type: str, train: Any, val: Any, test: Any, config: Any,
                 seed: int) -> tuple[Any, dict[str, Any]]:
    """The job's self-training rounds (jobs/self_training.self_training_rounds_run, which reads
    its pool from the database, so its loop is repeated here with the engine's pseudo_labels):
    fit on the labelled part, add the hidden-label texts the model is sure of, fit again; the
    round with the best validation macro-F1 is kept, round 0 (no pseudo-labels) included."""
    import dataclasses

    from classification.engine.self_training import pseudo_labels
    from classification.ml_models import TextData, create_classifier

    labelled, pool = labelled_part(train, seed=seed)
    config = dataclasses.replace(config, self_training_rounds=ST_ROUNDS,
                                 self_training_threshold=ST_THRESHOLD)

    def fit(rows: Any, number: int) -> tuple[Any, float]:
        clf = create_classifier(model_type)
        out = dataclasses.replace(config, output_dir=f"{config.output_dir}-st{number}")
        return clf, float(clf.fit(rows, val, out, lambda _e: None, lambda: False)
                          .get("macro_f1") or 0.0)

    current, macro = fit(labelled, 0)
    reference = current.evaluate(test)
    record = {"labelled": len(labelled), "unlabelled": len(pool), "rows_added": [],
              "validation_macro_f1": [macro], "labelled_only_micro_f1": reference["micro_f1"],
              "labelled_only_macro_f1": reference["macro_f1"]}
    best = (macro, 0, current)
    for number in range(1, ST_ROUNDS + 1):
        sure = pseudo_labels(current.predict_proba(pool), label_names=list(current.label_names),
                             multi_label=bool(current.multi_label), threshold=ST_THRESHOLD)
        added = [(t, chosen) for t, chosen in zip(pool, sure, strict=True) if chosen]
        if not added:
            break
        current, macro = fit(TextData(labelled.texts + [t for t, _ in added],
                                      labelled.labels + [c for _, c in added]), number)
        record["rows_added"].append(len(added))
        record["validation_macro_f1"].append(macro)
        if macro > best[0]:
            best = (macro, number, current)
    record["kept_round"] = best[1]
    return best[2], record


def _self_training_note(runs: list[dict[str, Any]]) -> str:
    """What the self_training lever did, over the seeds, for the table's last column."""
    st = [r["self_training"] for r in runs]
    ref = [spread([s[f"labelled_only_{m}"] for s in st])["mean"] for m in ("micro_f1",
                                                                          "macro_f1")]
    return (f"self_training: {st[0]['labelled']} of {st[0]['labelled'] + st[0]['unlabelled']} "
            f"training rows labelled ({LABELLED_SHARE:.0%}), the rest unlabelled; "
            f"{ST_ROUNDS} rounds at p≥{ST_THRESHOLD:g} added "
            + ", ".join("+".join(str(n) for n in s["rows_added"]) or "0" for s in st)
            + " rows per seed; round kept " + ", ".join(str(s["kept_round"]) for s in st)
            + f"; the {LABELLED_SHARE:.0%}-labelled fit alone: micro-F1 {ref[0]:.4f}, "
            f"macro-F1 {ref[1]:.4f}")


def lever_row(runner: Runner, model_type: str, used: frozenset[str],
              seeds: list[int]) -> dict[str, Any]:
    """Every seed of one model kind with one lever set: mean and spread of each figure."""
    runs = []
    for seed in seeds:
        run = runner.one(model_type, used, seed)
        runs.append(run)
        print(f"  {model_type} [{'+'.join(sorted(used)) or 'none'}] seed {seed}: micro-F1 "
              f"{run['micro_f1']:.4f}  macro-F1 {run['macro_f1']:.4f}  ECE "
              f"{_fmt(run['ece_before'])} -> {_fmt(run['ece_after'])}  "
              f"fit {run['fit_seconds']:.1f}s", flush=True)
    row: dict[str, Any] = {"status": "measured", "levers_used": sorted(used), "seeds": seeds,
                           **{m: spread([r[m] for r in runs]) for m in METRICS},
                           "metadata_used": runs[0]["metadata_used"],
                           "calibration": "; ".join(sorted({r["calibration"] for r in runs})),
                           "trained_type": runs[0]["trained_type"]}
    if any("adapt" in r for r in runs):
        row["adapt"] = [r["adapt"] for r in runs]
    if any("self_training" in r for r in runs):
        row["self_training"] = [r["self_training"] for r in runs]
        row["note"] = _self_training_note(runs)
    return row


def levers_table(runner: Runner, *, models: list[str], rows: list[tuple[str, frozenset[str]]],
                 seeds: list[int], available: dict[str, str | None],
                 save: Any = None) -> dict[str, dict[str, Any]]:
    """{model: {lever row: figures, or why it was not run}}; save(table) after each row."""
    from classification.ml_models import REGISTRY

    table: dict[str, dict[str, Any]] = {}
    for model_type in models:
        kind = REGISTRY[model_type].kind
        table[model_type] = done = {}
        by_levers: dict[frozenset[str], str] = {}
        for name, asked in rows:
            used, left_out = levers_effective(asked, kind=kind, data=runner.data,
                                              available=available)
            if asked and not used:
                done[name] = {"status": "not run", "left_out": left_out}
            elif used in by_levers:
                done[name] = {**done[by_levers[used]], "same_as": by_levers[used],
                              "left_out": left_out}
            else:
                by_levers[used] = name
                done[name] = {**lever_row(runner, model_type, used, seeds),
                              "left_out": left_out}
            if save is not None:
                save(table)
    return table


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _cell(figure: dict[str, Any], digits: int = 4) -> str:
    if figure.get("mean") is None:
        return "n/a"
    return f"{figure['mean']:.{digits}f} ± {figure['sd']:.{digits}f}"


def table_markdown(table: dict[str, dict[str, Any]]) -> str:
    """The table docs/figures/quality_levers.md shows: mean ± sd over the seeds."""
    lines = ["| model | levers | used | micro-F1 | macro-F1 | ECE before | ECE after | fit s "
             "| left out, and why |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for model_type, rows in table.items():
        for name, row in rows.items():
            notes = "; ".join([f"{k}: {v}" for k, v in (row.get("left_out") or {}).items()]
                              + ([row["note"]] if row.get("note") else []))
            if row["status"] != "measured":
                lines.append(f"| `{model_type}` | {name} | — | | | | | | {notes} |")
                continue
            used = "+".join(row["levers_used"]) or "none"
            if row.get("same_as"):
                used += f" (runs of {row['same_as']})"
            lines.append(
                f"| `{model_type}` | {name} | {used} | {_cell(row['micro_f1'])} | "
                f"{_cell(row['macro_f1'])} | {_cell(row['ece_before'])} | "
                f"{_cell(row['ece_after'])} | {_cell(row['fit_seconds'], 1)} | {notes} |")
    return "\n".join(lines)
