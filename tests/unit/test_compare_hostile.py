"""dyncli compare on damaged and hostile result files: a result or one InputError, never a crash.

The two files compare reads come from CI artifacts and colleagues, so each field of a real
bench document is replaced in turn by values of the wrong type, huge or non-finite numbers
and deep nesting; every output format is rendered from whatever was read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import compare_docs as docs
import pytest

from dyncli.compare import api, render
from dyncli.compare.load import MAX_RESULT_BYTES, read
from dyncli.errors import InputError

HOSTILE: list[Any] = [None, "x", [], {}, True, -1, 10**400, 1e308, [[[[1]]]], {"median": "x"},
                      ["a", None, 1e308, -5]]


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key/index path in ``doc``, samples lists included but not their elements."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list) and not (doc and isinstance(doc[0], float)):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    out = json.loads(json.dumps(doc))
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def _compare_everything(base: Path, new: Path) -> None:
    try:
        result = api.run(base, new, fail_on=["regression", "recompiles"])
    except InputError:
        return
    render.to_markdown(result)
    render.headline(result)
    for pair in result.pairs:
        render.cells(pair)
    json.dumps(result.to_dict(), allow_nan=True)
    result.tripped  # noqa: B018  (a property that must not raise)


def test_every_field_of_a_bench_document_replaced_by_hostile_values(tmp_path: Path) -> None:
    # one run of one model keeps the case count small (every field x every value)
    doc = docs.document([docs.run("resnet18", "static", 0, batches=(8, 7))])
    base = tmp_path / "base.json"
    base.write_text(json.dumps(doc))
    paths = list(_paths(doc))
    assert len(paths) > 60
    new = tmp_path / "new.json"
    for path in paths:
        for value in HOSTILE:
            new.write_text(json.dumps(_replaced(doc, path, value)))
            _compare_everything(base, new)
            _compare_everything(new, base)


@pytest.mark.parametrize("text", [
    '{"a": ' + "[" * 100_000,                       # nesting deeper than the JSON decoder goes
    '{"command": "bench", "runs": [' + "9" * 5000 + "]}",  # an int over Python's digit limit
    '{"command": "bench", "runs": [{"model": "m", "strategy": "s", "compiles": ' + "9" * 4000 + "}]}",
    "name,speedup\nm," + "9" * 5000 + "\n",            # a number no float can hold
    "name,speedup,strategy\nm,1.0\n" + "x," * 10 + "\n",  # ragged rows
    "name,speedup\n" + "m,\"" + "a" * 200_000 + "\"\n",  # a field over csv's size limit
    "\ufeffname,speedup\nm,1\n",
])
def test_malformed_files_are_one_input_error_or_a_result(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    base = docs.write(tmp_path / "base.json", docs.base_runs())
    try:
        read(path)
    except InputError as e:
        assert "x.json" in str(e) and len(str(e)) < 1000
    _compare_everything(base, path)


def test_a_file_over_the_size_bound_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as fh:
        fh.write(b'{"command": "bench", "runs": [], "pad": "')
        fh.truncate(MAX_RESULT_BYTES + 10)
    with pytest.raises(InputError, match="over 256 MB"):
        read(path)


def test_runs_left_out_are_counted_in_a_note(tmp_path: Path) -> None:
    runs = docs.base_runs()
    runs[0]["model"] = ["not", "a", "name"]
    runs[1]["strategy"] = 7
    base = docs.write(tmp_path / "base.json", docs.base_runs())
    new = docs.write(tmp_path / "new.json", runs)
    result = api.run(base, new)
    assert len(result.pairs) == 2
    assert any(note.startswith("new (") and "new.json): 2 runs left out" in note
               for note in result.notes)
