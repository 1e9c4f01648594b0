"""PubMed XML at baseline-file scale: the reader's rate and memory, and `predict FILE --out` on it.

    .venv/bin/python scripts/benchmark_pubmed_xml.py [--size-mb 1024] [--keep]

Generates a PubmedArticleSet of --size-mb MB of XML (uncompressed; written gzipped as .xml.gz,
streamed out a record at a time, never held) by repeating the real efetch records of
tests/fixtures/formats/pubmed_efetch*.xml, each copy with a new PMID. Then, each in a child
process of its own (peak RSS is that child's ru_maxrss, from os.wait4):

  gunzip      inflating the file and throwing the bytes away
  parse       the baseline: ElementTree's iterparse over it, each article cleared, no fields
  reader      dataset_management.readers.read_records on the file, every record built
  defusedxml  defusedxml's iterparse (pure-Python expat callbacks) on the first 20,000
              articles, cleared the same way: what the reader's own prologue guard saves
              (skipped when defusedxml is not installed; it is not a requirement)
  predict     `manage.py predict MODEL FILE --out OUT.csv` with a TF-IDF model trained here on
              the demo split, against a scratch SQLite database

Printed: records/s and MB/s (of XML) for each (timed inside the child, imports excluded; predict
is timed whole, Django's start included), the ratio of each one's time to the bare parse run in
the same invocation, and peak RSS. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
SOURCES = ["pubmed_efetch.xml", "pubmed_efetch_structured.xml", "pubmed_efetch_trial.xml"]
_ARTICLE = re.compile(rb"<PubmedArticle>.*?</PubmedArticle>", re.S)
_PMID = re.compile(rb"(<PMID Version=\"\d+\">)\d+(</PMID>)")
_PUBMED_ID = re.compile(rb"(<ArticleId IdType=\"pubmed\">)\d+(</ArticleId>)")
HEAD = (b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE PubmedArticleSet PUBLIC '
        b'"-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
        b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n')
DEFUSED_ARTICLES = 20_000


def real_articles() -> list[bytes]:
    """Every <PubmedArticle> of the fixtures, as the files hold it."""
    found = [m.group(0) for name in SOURCES
             for m in _ARTICLE.finditer((FIXTURES / name).read_bytes())]
    if not found:
        raise SystemExit("no PubmedArticle found in the fixtures")
    return found


def generate(path: Path, size_mb: int) -> tuple[int, int]:
    """Write the .xml.gz; (articles, uncompressed bytes). Each copy's PMID (and the pubmed
    ArticleId) is a new number, so a merge or a dedup would see distinct articles."""
    articles, target = real_articles(), size_mb * 1024 * 1024
    written = len(HEAD)
    count = 0
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(HEAD)
        while written < target:
            pmid = str(40_000_000 + count).encode()
            body = _PMID.sub(rb"\g<1>" + pmid + rb"\g<2>", articles[count % len(articles)], 1)
            body = _PUBMED_ID.sub(rb"\g<1>" + pmid + rb"\g<2>", body, 1) + b"\n"
            out.write(body)
            written += len(body)
            count += 1
        out.write(b"</PubmedArticleSet>\n")
    return count, written + len(b"</PubmedArticleSet>\n")


# Each measured step is a child process (`--step NAME FILE`) printing "records seconds".
def step_gunzip(path: Path) -> int:
    with gzip.open(path, "rb") as f:
        while f.read(1 << 20):
            pass
    return 0


def step_parse(path: Path) -> int:
    import xml.etree.ElementTree as ET

    count, root = 0, None
    with gzip.open(path, "rb") as f:
        for event, elem in ET.iterparse(f, events=("start", "end")):
            if root is None:
                root = elem
            elif event == "end" and elem.tag == "PubmedArticle":
                count += 1
                elem.clear()
                root.clear()
    return count


def step_reader(path: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from dataset_management.readers import read_records  # reads no setting without caps

    count = 0
    with read_records(path, filename=path.name) as stream:
        for _ in stream.records:
            count += 1
    return count


def step_defusedxml(path: Path) -> int:
    import defusedxml.ElementTree as DET

    count, root = 0, None
    with gzip.open(path, "rb") as f:
        for event, elem in DET.iterparse(f, events=("start", "end")):
            if root is None:
                root = elem
            elif event == "end" and elem.tag == "PubmedArticle":
                count += 1
                elem.clear()
                root.clear()
                if count >= DEFUSED_ARTICLES:
                    break
    return count


STEPS = {"gunzip": step_gunzip, "parse": step_parse, "reader": step_reader,
         "defusedxml": step_defusedxml}


def step_run(name: str, path: Path) -> str:
    if name == "reader":
        import dataset_management.readers  # noqa: F401  (imported before the clock starts)
    started = time.perf_counter()
    count = STEPS[name](path)
    return f"{count} {time.perf_counter() - started:.3f}"


def measured(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `command`; its seconds, peak RSS (MB) and its output's last line."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    output = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command[:4])} failed:\n{output[-3000:]}")
    last = output.strip().splitlines()[-1] if output.strip() else ""
    if "--step" in command:  # the child's own count and clock
        count, seconds_text = last.split()
        last, seconds = count, float(seconds_text)
    return {"seconds": seconds, "peak_rss_mb": usage.ru_maxrss / 1024, "last": last}


def django_env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "USE_SQLITE")}
    env.update({"DJANGO_SETTINGS_MODULE": "medlitbot_project.settings", "DEBUG": "False",
                "SECRET_KEY": "benchmark-only-" + "x" * 40, "SQLITE_PATH": str(scratch / "db"),
                "MEDIA_ROOT": str(scratch / "media"), "LOG_DIR": str(scratch / "logs"),
                "MODEL_ARTIFACT_ROOT": str(scratch / "artifacts"), "LOG_LEVEL": "WARNING",
                "CELERY_BROKER_URL": "memory://"})
    (scratch / "logs").mkdir(parents=True, exist_ok=True)
    return env


def tfidf_model(scratch: Path, env: dict[str, str]) -> int:
    """A TF-IDF model trained on the demo split, saved and registered; its id."""
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT,
                   env=env, check=True)
    code = f"""
import sys; sys.path.insert(0, {str(ROOT / 'scripts')!r})
import _bench_common as common
from django.contrib.auth import get_user_model
from classification.ml_models import TrainConfig, create_classifier
from classification.models import MLModel
train, val, _ = common.load_split(None, None, 42)
model = create_classifier("tfidf_logreg")
model.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
model.save({str(scratch / 'artifacts' / 'tfidf')!r})
owner = get_user_model().objects.create_user("bench")
row = MLModel.objects.create(owner=owner, name="TF-IDF", model_type="tfidf_logreg",
    status=MLModel.Status.TRAINED, artifact_path={str(scratch / 'artifacts' / 'tfidf')!r},
    label_names=model.label_names, is_multilabel=True)
print(row.pk)
"""
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                          check=True, capture_output=True, text=True)
    return int(done.stdout.strip().splitlines()[-1])


def report(name: str, result: dict[str, Any], *, articles: int, xml_mb: float,
           baseline: dict[str, Any] | None) -> dict[str, Any]:
    rate = articles / result["seconds"]
    row = {"articles": articles, "seconds": round(result["seconds"], 1),
           "records_per_s": round(rate), "xml_mb_per_s": round(xml_mb / result["seconds"], 1),
           "peak_rss_mb": round(result["peak_rss_mb"], 1)}
    if baseline:
        row["seconds_vs_parse"] = round(result["seconds"] / baseline["seconds"], 2)
    print(f"{name:<11} {articles:>9,} articles in {result['seconds']:7.1f} s = {rate:>9,.0f} "
          f"records/s, {row['xml_mb_per_s']:6.1f} MB/s of XML, peak RSS "
          f"{result['peak_rss_mb']:6.0f} MB" + (f", {row['seconds_vs_parse']}x the bare "
                                                 "parse's time" if baseline else ""))
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=1024, help="uncompressed XML size")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--step", nargs=2, metavar=("NAME", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        sys.path.insert(0, str(ROOT))
        print(step_run(args.step[0], Path(args.step[1])))
        return
    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-pubmed-xml-"))
    try:
        run(scratch, args.size_mb)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


def run(scratch: Path, size_mb: int) -> None:
    source = scratch / "baseline.xml.gz"
    started = time.perf_counter()
    articles, xml_bytes = generate(source, size_mb)
    xml_mb, gz_mb = xml_bytes / 2**20, source.stat().st_size / 2**20
    print(f"generated {articles:,} articles, {xml_mb:,.0f} MB of XML ({gz_mb:,.1f} MB gzipped) "
          f"in {time.perf_counter() - started:.0f} s; cpus={os.cpu_count()} "
          f"load={os.getloadavg()[0]:.1f}")
    me = [sys.executable, str(Path(__file__).resolve()), "--step"]
    results: dict[str, Any] = {"articles": articles, "xml_mb": round(xml_mb, 1),
                               "gz_mb": round(gz_mb, 1)}
    size = {"articles": articles, "xml_mb": xml_mb}
    results["gunzip"] = report("gunzip", measured([*me, "gunzip", str(source)]), **size,
                               baseline=None)
    parse = measured([*me, "parse", str(source)])
    results["parse"] = report("parse", parse, **size, baseline=None)
    reader = measured([*me, "reader", str(source)])
    if int(reader["last"]) != articles:
        raise SystemExit(f"the reader read {reader['last']} articles of {articles}")
    results["reader"] = report("reader", reader, **size, baseline=parse)
    results["defusedxml"] = defused_side(me, source, articles=articles, xml_mb=xml_mb)
    if results["defusedxml"]:
        results["reader_vs_defusedxml"] = round(results["reader"]["records_per_s"]
                                                / results["defusedxml"]["records_per_s"], 2)
        print(f"reader: {results['reader_vs_defusedxml']}x defusedxml's records/s")
    env = django_env(scratch)
    model_id = tfidf_model(scratch, env)
    out = scratch / "predictions.csv"
    predict = measured([sys.executable, "manage.py", "predict", str(model_id), str(source),
                        "--out", str(out)], env=env)
    print(predict["last"])
    results["predict"] = report("predict", predict, **size, baseline=parse)
    results["predict"]["out_mb"] = round(out.stat().st_size / 2**20, 1)
    print(json.dumps(results))


def defused_side(me: list[str], source: Path, *, articles: int,
                 xml_mb: float) -> dict[str, Any] | None:
    try:
        import defusedxml  # noqa: F401
    except ImportError:
        print("defusedxml  not installed: skipped")
        return None
    part = min(articles, DEFUSED_ARTICLES)
    return report("defusedxml", measured([*me, "defusedxml", str(source)]), articles=part,
                  xml_mb=xml_mb * part / articles, baseline=None)


if __name__ == "__main__":
    main()
