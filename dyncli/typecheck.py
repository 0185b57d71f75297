"""Config values checked against the dataclass field types, and parsed from environment text.

TOML and keyword options arrive typed (:func:`check_value` checks and converts them);
``DYNCLI_<TABLE>_<KEY>`` variables arrive as text (:func:`parse_env`). Both raise
``ValueError`` whose message is the expected type, which ``dyncli.config`` turns into one
error naming the file and key.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable
from typing import Any, Union


def type_name(tp: Any) -> str:
    """A type as a config error names it: ``int``, ``list of str``, ``int or none``, ``table``."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(type_name(a) for a in typing.get_args(tp))
    if origin is list:
        return "list of " + type_name(typing.get_args(tp)[0])
    if origin is dict:
        return "table"
    if tp is type(None):
        return "none"
    return getattr(tp, "__name__", str(tp))


# TOML gives bool for true/false, and bool is an int subclass: keep them apart.
_SCALAR_CHECKS: dict[Any, Any] = {
    bool: lambda v: isinstance(v, bool),
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    str: lambda v: isinstance(v, str),
}


def _first_member(union: Any, convert: Callable[[Any], Any]) -> Any:
    """``convert`` by the first non-None member type of ``union`` that accepts the value."""
    for arg in typing.get_args(union):
        if arg is not type(None):
            try:
                return convert(arg)
            except ValueError:
                pass
    raise ValueError(type_name(union))


def check_value(value: Any, tp: Any) -> Any:
    """Return ``value`` converted to ``tp`` or raise ValueError (message = expected type)."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in typing.get_args(tp):
            return None
        return _first_member(tp, lambda arg: check_value(value, arg))
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ValueError(type_name(tp))
        return [check_value(v, item) for v in value]
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(type_name(tp))
        return dict(value)
    accepts = _SCALAR_CHECKS.get(tp)
    if accepts is not None and accepts(value):
        return float(value) if tp is float else value
    raise ValueError(type_name(tp))


def parse_env(text: str, tp: Any) -> Any:
    """Parse an environment string as ``tp``: ints, floats, true/false, comma lists, JSON tables."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        if text.strip().lower() in ("", "none"):
            return None
        return _first_member(tp, lambda arg: parse_env(text, arg))
    if origin is list:
        (item,) = typing.get_args(tp)
        return [parse_env(p.strip(), item) for p in text.split(",") if p.strip()]
    if origin is dict:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError("table (as JSON)") from None
        return check_value(value, tp)
    if tp is bool:
        low = text.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError("bool")
    if tp is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError("int") from None
    if tp is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError("float") from None
    return text
