"""aioquic's private attributes: reached only through `pccstream.aioquic_internals`, and
checked once at server start."""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import aioquic
import pytest
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection

from pccstream import aioquic_internals
from pccstream.aioquic_internals import AioquicInternalsChanged, check_aioquic_internals
from pccstream.server.app import ServerConfig, StreamingServer

PACKAGE = Path(aioquic_internals.__file__).resolve().parent
AIOQUIC = Path(aioquic.__file__).resolve().parent
# Subclasses of QuicConnectionProtocol reach their connection and loop as aioquic's own
# examples do; these two are the protocol's interface to subclasses, not internals.
SUBCLASS_INTERFACE = {"_quic", "_loop"}


def _private_names(source: str) -> set[str]:
    return set(re.findall(r"\bself\.(_[a-z]\w*)\s*(?::[^=\n]+)?=", source))


def _aioquic_private_names() -> set[str]:
    return {name for path in AIOQUIC.rglob("*.py") for name in _private_names(path.read_text())}


def _module_file(module: str) -> Path:
    relative = Path(*module.split(".")[1:])
    package = AIOQUIC / relative / "__init__.py"
    return package if package.exists() else (AIOQUIC / relative).with_suffix(".py")


def _inherited_private_names(tree: ast.Module) -> dict[str, set[str]]:
    """For each class in `tree` with a base imported from aioquic: the private attributes
    that base's module sets (what the subclass would be reaching into)."""
    origin = {alias.asname or alias.name: node.module for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("aioquic")
              for alias in node.names}
    inherited: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in origin:
                    source = _module_file(origin[base.id]).read_text()
                    inherited.setdefault(node.name, set()).update(_private_names(source))
    return inherited


def _private_accesses(path: Path, private: set[str], root: Path = PACKAGE) -> list[str]:
    tree = ast.parse(path.read_text())
    inherited = _inherited_private_names(tree)
    found: list[tuple[int, str]] = []
    for scope in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)] + [tree]:
        from_base = inherited.get(scope.name, set()) if isinstance(scope, ast.ClassDef) else set()
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Attribute) and node.attr in private):
                continue
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if not on_self or (node.attr in from_base and node.attr not in SUBCLASS_INTERFACE):
                found.append((node.lineno, f"{path.relative_to(root)}:{node.lineno}: .{node.attr}"))
    return [hit for _, hit in sorted(set(found))]


def test_only_aioquic_internals_touches_aioquic_private_attributes() -> None:
    private = _aioquic_private_names()
    assert {"_loss", "_streams_queue", "_pending", "_stream", "_transport"} <= private
    found = sorted({hit for path in PACKAGE.rglob("*.py")
                    if path.name != "aioquic_internals.py"
                    for hit in _private_accesses(path, private)})
    assert not found, "aioquic private attributes outside pccstream/aioquic_internals.py:\n" + (
        "\n".join(found))


def test_the_scan_sees_private_accesses(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from aioquic.asyncio.protocol import QuicConnectionProtocol\n"
        "def port(server):\n"
        "    return server._transport\n"
        "class Client(QuicConnectionProtocol):\n"
        "    def peer(self):\n"
        "        return self._quic, self._transport\n"
    )
    assert _private_accesses(sample, _aioquic_private_names(), tmp_path) == [
        "sample.py:3: ._transport", "sample.py:6: ._transport"]


def test_this_aioquic_has_every_private_attribute() -> None:
    assert aioquic_internals.missing_internals() == []
    check_aioquic_internals()


def test_a_missing_attribute_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    names = aioquic_internals.PRIVATE_ATTRIBUTES["QuicPacketRecovery"]
    monkeypatch.setitem(aioquic_internals.PRIVATE_ATTRIBUTES, "QuicPacketRecovery",
                        (*names, "_rtt_no_such"))
    with pytest.raises(AioquicInternalsChanged) as caught:
        check_aioquic_internals()
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith("missing QuicPacketRecovery._rtt_no_such")
    assert f"aioquic {aioquic.__version__}" in message


def test_the_server_refuses_to_start_on_an_incompatible_aioquic(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(aioquic_internals.PRIVATE_ATTRIBUTES, "H3Connection", ("_no_such",))
    server = StreamingServer(ServerConfig(media_dir=tmp_path / "unused", port=0, http_port=0))
    with pytest.raises(AioquicInternalsChanged, match="missing H3Connection._no_such"):
        asyncio.run(server.start())
    server.close()


def test_datagrams_can_be_queued_first_and_taken_back() -> None:
    quic = QuicConnection(configuration=QuicConfiguration(is_client=True))
    for frame in (b"\x00a1", b"\x00b1", b"\x04a2"):
        quic.send_datagram_frame(frame)
    aioquic_internals.queue_datagrams_first(quic, [b"\x00r1", b"\x00r2"])
    assert aioquic_internals.queued_datagrams(quic) == [
        b"\x00r1", b"\x00r2", b"\x00a1", b"\x00b1", b"\x04a2"]
    removed = aioquic_internals.remove_queued_datagrams(quic, lambda f: f.endswith(b"1"))
    assert removed == 3
    assert aioquic_internals.queued_datagrams(quic) == [b"\x00r2", b"\x04a2"]
    assert aioquic_internals.remove_queued_datagrams(quic, lambda f: False) == 0
