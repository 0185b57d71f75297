"""The one Output object: where the human view goes, and input text shown as text."""

from __future__ import annotations

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
