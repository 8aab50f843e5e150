"""The browser pages' URL parameters and metric fields, as `shared/contracts/player.json`
defines them for both languages (web/src/contracts.ts reads the same file).

Queries for the pages are built with `page_query`, which refuses a parameter the page does
not define; metric fields read from a page go through `metric`, so a renamed field fails the
tests instead of turning into NULL in the results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from pccstream.errors import UserError
from pccstream.paths import CONTRACTS, data_path

CONTRACT_FILE = data_path(CONTRACTS) / "player.json"
CONTRACT: dict[str, Any] = json.loads(CONTRACT_FILE.read_text())

# live.keep_ms bound (shared/PROTOCOL.md): the player's `keep` and the session's parameter.
MAX_LIVE_KEEP_MS: int = CONTRACT["limits"]["live_keep_ms_max"]
# live.fec=K bound: data fragments per parity fragment (shared/PROTOCOL.md).
MAX_LIVE_FEC: int = CONTRACT["limits"]["live_fec_max"]
# live.fec=auto: the most parity it sends is one per this many data fragments.
AUTO_FEC_MAX_K: int = CONTRACT["limits"]["live_fec_auto_max"]

PAGE_PARAMETERS: dict[str, frozenset[str]] = {
    page: frozenset(spec["parameters"]) for page, spec in CONTRACT["pages"].items()
}
FORWARDED_PREFIXES: dict[str, tuple[str, ...]] = {
    page: tuple(spec["forwarded_prefixes"]) for page, spec in CONTRACT["pages"].items()
}
METRIC_FIELDS: dict[str, frozenset[str]] = {
    page: frozenset(fields) for page, fields in CONTRACT["metrics"].items()
}


def is_page_parameter(page: str, name: str) -> bool:
    return name in PAGE_PARAMETERS[page] or name.startswith(FORWARDED_PREFIXES[page])


def page_query(page: str, parameters: Iterable[tuple[str, str]]) -> str:
    """The URL query for `page` (a key of the contract's `pages`), in the order given."""
    pairs = list(parameters)
    unknown = [name for name, _ in pairs if not is_page_parameter(page, name)]
    if unknown:
        raise UserError(f"{', '.join(unknown)}: not a URL parameter of the {page} page "
                        f"(known: {', '.join(sorted(PAGE_PARAMETERS[page]))})")
    return urlencode(pairs)


def metric(name: str, page: str = "player") -> str:
    """`name`, checked to be a metric field the page's `window.pccstream.metrics()` returns."""
    if name not in METRIC_FIELDS[page]:
        raise KeyError(f"{name!r} is not a metric field of the {page} page ({CONTRACT_FILE})")
    return name
