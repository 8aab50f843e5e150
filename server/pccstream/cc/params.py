"""Declaring controller parameters once: default, bounds and meaning, for parsing and docs.

Each algorithm's parameters are a frozen dataclass whose fields are declared with `param`;
the registry parses URL strings against these declarations, so every constant an
algorithm uses is a named, documented, bounded parameter.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

_BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True,
               "0": False, "false": False, "no": False, "off": False}


def param(default: Any, doc: str, *, lo: float | None = None, hi: float | None = None) -> Any:
    """A dataclass field carrying its documentation and inclusive bounds."""
    return dataclasses.field(default=default, metadata={"doc": doc, "lo": lo, "hi": hi})


@dataclass(frozen=True, slots=True)
class ParamInfo:
    name: str
    kind: type
    default: Any
    doc: str
    lo: float | None
    hi: float | None

    def describe(self) -> str:
        bounds = ""
        if self.lo is not None or self.hi is not None:
            lo = "" if self.lo is None else f"{self.lo:g}"
            hi = "" if self.hi is None else f"{self.hi:g}"
            bounds = f" [{lo}..{hi}]"
        return f"{self.name}={self.default}{bounds}: {self.doc}"


def param_infos(cls: type, overrides: dict[str, Any] | None = None) -> list[ParamInfo]:
    overrides = overrides or {}
    infos = []
    for f in dataclasses.fields(cls):
        kind = f.type if isinstance(f.type, type) else {"float": float, "int": int,
                                                         "bool": bool, "str": str}[str(f.type)]
        infos.append(ParamInfo(
            name=f.name,
            kind=kind,
            default=overrides.get(f.name, f.default),
            doc=f.metadata.get("doc", ""),
            lo=f.metadata.get("lo"),
            hi=f.metadata.get("hi"),
        ))
    return infos


def parse_value(info: ParamInfo, text: str) -> Any:
    """Parse and bound-check one value; raises ValueError with a message for the user."""
    raw = text.strip()
    if info.kind is str:
        return raw  # names: the algorithm checks them against its own choices
    if info.kind is bool:
        try:
            return _BOOL_WORDS[raw.lower()]
        except KeyError:
            raise ValueError(
                f"{info.name}={text!r} is not a boolean (use 1/0, true/false)") from None
    try:
        value: float = int(raw) if info.kind is int else float(raw)
    except ValueError:
        kind = "an integer" if info.kind is int else "a number"
        raise ValueError(f"{info.name}={text!r} is not {kind}") from None
    if not math.isfinite(value):
        raise ValueError(f"{info.name}={text!r} must be finite")
    if (info.lo is not None and value < info.lo) or (info.hi is not None and value > info.hi):
        raise ValueError(
            f"{info.name}={text!r} is out of range: must be within "
            f"[{info.lo if info.lo is not None else '-inf'}, "
            f"{info.hi if info.hi is not None else 'inf'}]"
        )
    return value
