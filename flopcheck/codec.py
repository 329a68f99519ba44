"""The one JSON codec of the result dataclasses: a dataclass to JSON-safe data and back, by its fields' types.

encode keeps the fields' order, writes an enum as its value and a tuple as a list, and keeps exact integers as
integers; a field whose metadata is OMIT_DEFAULT is left out while it holds its default, so a field added that way
leaves the JSON written before it unchanged. decode rebuilds each field from its declared type (a field that is
missing takes its default, a key that is no field is an error). Nothing here imports torch.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from enum import Enum
from typing import Any, TypeVar

T = TypeVar("T")

OMIT_DEFAULT = {"omit_default": True}  # a field's metadata: left out of the JSON while it holds its default


def encode(obj: Any) -> Any:
    """JSON-safe data of a dataclass (a dict in field order), an enum (its value), a tuple or list, or a dict."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if not (f.metadata.get("omit_default") and value == f.default):
                out[f.name] = encode(value)
        return out
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (tuple, list)):
        return [encode(x) for x in obj]
    if isinstance(obj, dict):
        return {k: encode(v) for k, v in obj.items()}
    return obj


def encode_row(obj: Any) -> list[Any]:
    """A dataclass as a JSON row: its fields' encoded values, in field order (a compact form for many of one kind)."""
    return [encode(getattr(obj, f.name)) for f in dataclasses.fields(obj)]


def decode_row(cls: type[T], row: Any) -> T:
    """An instance of the dataclass `cls` from encode_row's row: each field rebuilt by its declared type; a row
    written before a field was added is shorter, and the field takes its default."""
    names = list(_hints(typing.cast(type, cls)))
    if len(row) > len(names):
        raise TypeError(f"{cls.__name__} has {len(names)} fields, the row {len(row)}")
    return decode(cls, dict(zip(names, row)))


def decode(cls: type[T], data: Any) -> T:
    """An instance of the dataclass `cls` from encode's data: each field rebuilt by its declared type."""
    return typing.cast(T, _decode(cls, data))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The resolved type of each field of a dataclass."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _decode(tp: Any, data: Any) -> Any:
    """`data` as the type `tp`: a dataclass, an enum, a tuple, list or dict of them, a union; else data as it is."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        members = [a for a in args if a is not type(None)]
        for member in members[:-1]:  # the first member that takes it
            try:
                return _decode(member, data)
            except (TypeError, ValueError, KeyError):
                continue
        return _decode(members[-1], data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        unknown = set(data) - set(hints)
        if unknown:
            raise TypeError(f"{tp.__name__} has no field {', '.join(sorted(unknown))}")
        return tp(**{k: _decode(hints[k], v) for k, v in data.items()})
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], x) for x in data)
        return tuple(_decode(a, x) for a, x in zip(args, data, strict=True))
    if origin is list:
        return [_decode(args[0], x) for x in data]
    if origin is dict:
        return {k: _decode(args[1], v) for k, v in data.items()}
    return data  # int, float, str, bool, Any: as JSON gave it (an exact integer stays one)


__all__ = ["OMIT_DEFAULT", "decode", "decode_row", "encode", "encode_row"]
