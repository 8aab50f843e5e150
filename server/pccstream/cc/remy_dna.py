"""The RemyCC rule-table schema (package `RemyBuffers` of tcpexmachina/remy's
`protobufs/dna.proto`), declared for the `protobuf` runtime.

Only the messages an executor reads are declared: `WhiskerTree`, `MemoryRange`, `Memory`
and `Whisker`, with the original field numbers. The optimizer and configuration fields
(WhiskerTree 4, 5, 6) stay undeclared: protobuf skips unknown fields while parsing.

The schema is built as a FileDescriptorProto at import instead of a protoc-generated
module: no protoc is needed at build time, and there is no generated code whose version
must match the installed protobuf runtime.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto

# Memory axes, in the order of MemoryRange.Axis.
AXES = ("rec_send_ewma", "rec_rec_ewma", "rtt_ratio", "slow_rec_rec_ewma", "rtt_diff",
        "queueing_delay")

_MESSAGES: dict[str, list[tuple[str, int, int, int, str]]] = {
    # name: [(field, number, label, type, message type name)]
    "WhiskerTree": [
        ("domain", 1, _F.LABEL_OPTIONAL, _F.TYPE_MESSAGE, "MemoryRange"),
        ("children", 2, _F.LABEL_REPEATED, _F.TYPE_MESSAGE, "WhiskerTree"),
        ("leaf", 3, _F.LABEL_OPTIONAL, _F.TYPE_MESSAGE, "Whisker"),
    ],
    "MemoryRange": [
        ("lower", 11, _F.LABEL_OPTIONAL, _F.TYPE_MESSAGE, "Memory"),
        ("upper", 12, _F.LABEL_OPTIONAL, _F.TYPE_MESSAGE, "Memory"),
        ("active_axis", 13, _F.LABEL_REPEATED, _F.TYPE_ENUM, "MemoryRange.Axis"),
    ],
    "Memory": [(axis, 21 + i, _F.LABEL_OPTIONAL, _F.TYPE_DOUBLE, "")
               for i, axis in enumerate(AXES)],
    "Whisker": [
        ("window_increment", 31, _F.LABEL_OPTIONAL, _F.TYPE_SINT32, ""),
        ("window_multiple", 32, _F.LABEL_OPTIONAL, _F.TYPE_DOUBLE, ""),
        ("intersend", 33, _F.LABEL_OPTIONAL, _F.TYPE_DOUBLE, ""),
        ("domain", 34, _F.LABEL_OPTIONAL, _F.TYPE_MESSAGE, "MemoryRange"),
    ],
}


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name="pccstream_remy_dna.proto", package="RemyBuffers", syntax="proto2")
    for name, fields in _MESSAGES.items():
        message = file.message_type.add(name=name)
        for field, number, label, kind, type_name in fields:
            entry = message.field.add(name=field, number=number, label=label, type=kind)
            if type_name:
                entry.type_name = f".RemyBuffers.{type_name}"
        if name == "MemoryRange":
            axis = message.enum_type.add(name="Axis")
            for i, axis_name in enumerate(AXES):
                axis.value.add(name=axis_name.upper(), number=i)
    return file


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file_descriptor())
WhiskerTreeMessage: Any = message_factory.GetMessageClass(
    _POOL.FindMessageTypeByName("RemyBuffers.WhiskerTree"))
