"""The one Output object: where the human view goes, and input text shown as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dyncli.errors import UsageError
from dyncli.output import Output, add_text_row, input_text, section_table


@pytest.fixture(autouse=True)
def _width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


def test_the_view_moves_to_stderr_when_a_document_takes_stdout(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert Output.for_targets(None, "file.json").mode == "plain"
    view = Output.for_targets("file.json", "-")
    assert view.mode == "json"
    view.text("a table would go here")
    view.result({"command": "x"}, "-")
    out, err = capsys.readouterr()
    assert out.startswith("{") and "a table" in err and "a table" not in out


def test_input_text_is_never_markup(capsys: pytest.CaptureFixture[str]) -> None:
    name = "[bold red]model[/bold red] [s77, 8]\tend"
    Output().text(input_text(name))
    Output.warn(f"{name}: odd")
    table = section_table("t", ["name"])
    add_text_row(table, name)
    Output().table(table)
    out, err = capsys.readouterr()
    assert out.count("[bold red]model[/bold red] [s77, 8] end") == 2
    assert "Warning: [bold red]model[/bold red]" in err
    assert input_text("x" * 10, limit=5).plain == "xxxx…"


def test_errors_and_hints_are_one_plain_block(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DYNCLI_DEBUG", raising=False)
    Output.error(UsageError("bad [x]", hint="try [y]"))
    assert capsys.readouterr().err == "Error: bad [x]\nHint: try [y]\n"


def test_a_background_write_is_the_document_write_json_writes(tmp_path: Path) -> None:
    from dyncli.output import BackgroundWrite, to_json_text

    doc = {"a": [1, 2.5, None], "b": "ü\x1b", "c": {"d": float("nan")}}
    job = BackgroundWrite(tmp_path / "out.json", lambda: doc)
    assert job.pid  # a child writes it
    job.join()
    assert (tmp_path / "out.json").read_text() == to_json_text(doc)
    job.join()  # twice: nothing left to wait for


def test_a_background_write_that_fails_is_an_output_error_here(tmp_path: Path) -> None:
    """The child's failure (here: the document cannot be made; a full disk the same way)
    reaches this process as one OutputError, after the view; nothing half-written is left."""
    from dyncli.errors import OutputError
    from dyncli.output import BackgroundWrite

    def broken() -> dict[str, object]:
        raise OutputError(f"{tmp_path / 'out.json'}: No space left on device", hint="free some")

    job = BackgroundWrite(tmp_path / "out.json", broken)
    with pytest.raises(OutputError, match="No space left") as err:
        job.join()
    assert err.value.hint == "free some"
    assert not list(tmp_path.iterdir())

    def crash() -> dict[str, object]:
        raise KeyError("x")

    with pytest.raises(OutputError, match="KeyError"):
        BackgroundWrite(tmp_path / "out.json", crash).join()


def test_a_background_write_to_stdout_is_written_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    from dyncli.output import BackgroundWrite

    job = BackgroundWrite("-", lambda: {"x": 1})
    assert not job.pid
    assert json.loads(capsys.readouterr().out) == {"x": 1}
