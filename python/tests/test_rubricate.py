"""The Python module against the binary installed with it (scripts/python-test.sh)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import rubricate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def test_version_is_the_binarys():
    out = subprocess.run([rubricate.binary(), "--version"], capture_output=True, text=True)
    assert out.stdout.split()[-1] == rubricate.version()


def test_grade_files_gives_a_dict_per_item():
    results = rubricate.grade(EXAMPLES / "answer-quality.yaml", EXAMPLES / "answers.jsonl")
    assert [r["item"] for r in results] == ["a1", "a2", "a3", "a4", "a5"]
    assert results[0]["passed"] is True and results[0]["score"] == 1.0
    assert results[1]["passed"] is False
    verdicts = {c["id"]: c["verdict"] for c in results[1]["criteria"]}
    assert verdicts["filler"] == "MET"


def test_grade_python_values():
    rubric = {
        "id": "says-yes",
        "criteria": [
            {"id": "yes", "requirement": "Says yes", "method": {"check": "contains", "args": {"text": "yes"}}}
        ],
    }
    items = [{"id": "a", "submission": "yes please"}, {"id": "b", "submission": "no"}]
    results = rubricate.grade(rubric, items)
    assert [(r["item"], r["passed"]) for r in results] == [("a", True), ("b", False)]


def test_score_reads_ground_truth_as_autorubric_does():
    results = rubricate.score(EXAMPLES / "essays.json")
    assert results and all(0.0 <= r["score"] <= 1.0 for r in results if r["score"] is not None)


def test_metrics_of_a_saved_run(tmp_path: Path):
    ws = tmp_path / "ws"
    subprocess.run([rubricate.binary(), "init", str(ws)], check=True, capture_output=True)
    rubricate.grade(
        EXAMPLES / "answer-quality.yaml", EXAMPLES / "answers.jsonl", save=True, name="py", workspace=ws
    )
    labels = tmp_path / "labels.csv"
    labels.write_text("item,criterion,verdict\na1,filler,UNMET\na2,filler,MET\na3,filler,UNMET\n")
    subprocess.run(
        [rubricate.binary(), "--workspace", str(ws), "labels", "import", str(labels),
         "--dataset", str(EXAMPLES / "answers.jsonl"), "--annotator", "pat"],
        check=True, capture_output=True,
    )
    report = rubricate.metrics("py", workspace=ws, annotator="pat")
    filler = next(c for c in report["report"]["criteria"] if c["criterion"] == "filler")
    assert filler["pairs"] == 3 and filler["accuracy"] == 1.0
    assert report["annotator"] == "pat"


def test_errors_raise_with_the_binarys_message():
    with pytest.raises(rubricate.RubricateError) as err:
        rubricate.grade(EXAMPLES / "no-such-rubric.yaml", EXAMPLES / "answers.jsonl")
    assert "no-such-rubric" in err.value.message
    assert err.value.code == 2
