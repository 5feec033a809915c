"""rubricate from Python: grade, score and measure through the `rubricate` binary.

The functions run the binary installed with this package (its JSON interface) and return
plain dicts and lists, so a notebook or a pipeline calls it in two lines::

    import rubricate
    results = rubricate.grade("examples/answer-quality.yaml", "examples/answers.jsonl")

A rubric and items may be paths, or Python values (a rubric as a dict in rubricate's native
format, items as dicts with ``id`` and ``submission``), written to a temporary folder for the
call. Errors from the binary (a bad rubric, a missing file, a judge that cannot be reached)
raise :class:`RubricateError` with its message.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

__all__ = ["RubricateError", "binary", "version", "grade", "score", "metrics"]

PathLike = Union[str, "os.PathLike[str]"]
Rubric = Union[PathLike, Mapping[str, Any]]
Items = Union[PathLike, Iterable[Mapping[str, Any]]]


class RubricateError(RuntimeError):
    """The binary refused the call: ``message`` is what it said, ``code`` its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def binary() -> str:
    """The rubricate binary: ``$RUBRICATE_BIN``, else the one installed with this package
    (the environment's scripts folder), else the first on ``PATH``."""
    given = os.environ.get("RUBRICATE_BIN")
    if given:
        return given
    name = "rubricate.exe" if sys.platform == "win32" else "rubricate"
    beside = Path(sysconfig.get_path("scripts")) / name
    if beside.is_file():
        return str(beside)
    found = shutil.which("rubricate")
    if found:
        return found
    raise RubricateError(
        "no rubricate binary: install this package with pip (it builds one), or set RUBRICATE_BIN",
        2,
    )


def _run(args: Sequence[str], ok: Sequence[int] = (0,)) -> str:
    done = subprocess.run(
        [binary(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    if done.returncode not in ok:
        message = done.stderr.strip() or f"rubricate exited with {done.returncode}"
        raise RubricateError(message, done.returncode)
    return done.stdout


def version() -> str:
    """The binary's version, e.g. ``"0.1.0"``."""
    return _run(["--version"]).split()[-1]


def _options(options: Mapping[str, Any]) -> List[str]:
    """Keyword options as flags: ``max_cost=0.5`` → ``--max-cost 0.5``, ``save=True`` →
    ``--save``, a list → the flag once per value."""
    out: List[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, str(value)]
    return out


def _path(value: Any, folder: Path, name: str, write: Any) -> str:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    path = folder / name
    write(path, value)
    return str(path)


def _write_rubric(path: Path, rubric: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(rubric), encoding="utf-8")


def _write_items(path: Path, items: Iterable[Mapping[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for item in items:
            f.write(json.dumps(item) + "\n")


def _lines(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def grade(rubric: Optional[Rubric], items: Items, **options: Any) -> List[Dict[str, Any]]:
    """Grades every item against ``rubric`` (``None``: the items' own), as ``rubricate grade``
    does; one dict per item: ``item``, ``score``, ``passed``, ``criteria`` (each with its
    ``verdict``, ``value`` and ``reason``), ``feedback``…

    Options are the command's flags: ``judge="openai/gpt-4o-mini"``, ``strategy=…``,
    ``max_cost=0.5``, ``save=True``, ``gate=["pass_rate>=0.9"]``, ``workspace=…``. Items
    below the pass threshold are results, not errors."""
    with tempfile.TemporaryDirectory(prefix="rubricate-") as tmp:
        folder = Path(tmp)
        args = ["grade"]
        if rubric is not None:
            args += ["--rubric", _path(rubric, folder, "rubric.json", _write_rubric)]
        args.append(_path(items, folder, "items.jsonl", _write_items))
        args += ["--format", "jsonl", *_options(options)]
        return _lines(_run(args, ok=(0, 1)))


def score(dataset: Items, rubric: Optional[Rubric] = None, **options: Any) -> List[Dict[str, Any]]:
    """Scores items from the verdicts they carry (``ground_truth``), as ``rubricate score``
    does — exactly as the system whose file it is scores it; one dict per item."""
    with tempfile.TemporaryDirectory(prefix="rubricate-") as tmp:
        folder = Path(tmp)
        args = ["score", _path(dataset, folder, "items.jsonl", _write_items)]
        if rubric is not None:
            args += ["--rubric", _path(rubric, folder, "rubric.json", _write_rubric)]
        args += ["--format", "jsonl", *_options(options)]
        return _lines(_run(args, ok=(0, 1)))


def metrics(run: str, **options: Any) -> Dict[str, Any]:
    """A saved run's agreement with people's labels, as ``rubricate metrics --format json``:
    per criterion κ, accuracy, F1 with intervals, and the judge's figure corrected by the
    labels. Options: ``annotator=…``, ``bootstrap=…``, ``workspace=…``."""
    return json.loads(_run(["metrics", "--run", run, "--format", "json", *_options(options)]))
