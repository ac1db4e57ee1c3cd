# SPDX-License-Identifier: BSD-3-Clause
"""OpenFlow 1.3 messages as bytes, for the tests that talk to the switch
on a socket (tests/openflow/test_ofctl.py) and the fuzz seeds of
fuzz_openflow and fuzz_channel (scripts/fuzz-seeds). Message types and
OXM fields are the spec's numbers; the builders only lay them out, so a
test can still send what the spec forbids."""
import struct

OFP_VERSION = 4  # OpenFlow 1.3
OFP_NO_BUFFER = 0xffffffff  # buffer_id: the frame is in the message
OFPP_TABLE = 0xfffffff9
OFPP_CONTROLLER = 0xfffffffd
OFPP_ANY = 0xffffffff
OFPG_ANY = 0xffffffff
OFPTT_ALL = 0xff
OFPCML_MAX = 0xffe5  # max_len: the most a PACKET_IN may carry
OFPCML_NO_BUFFER = 0xffff  # max_len: the whole frame, not buffered


def message(type_, body=b"", xid=1, version=OFP_VERSION, length=None):
    """A message: the header (version, type, length, xid), then body.
    length is the header's and defaults to the message's own; a wrong
    version or length makes a malformed message."""
    n = 8 + len(body) if length is None else length
    return struct.pack("!BBHI", version, type_, n, xid) + body


def pad8(data):
    """data with zero bytes after it up to a multiple of 8."""
    return data + bytes(-len(data) % 8)


def oxm(field, value, mask=b""):
    """An OXM TLV of the OpenFlow basic class (0x8000): field's number,
    its value, and its mask if one is given (the has-mask bit set)."""
    return struct.pack("!HBB", 0x8000, field << 1 | bool(mask),
                       len(value) + len(mask)) + value + mask


def match(*oxms):
    """A struct ofp_match of type OXM holding the given oxm()s, padded to
    8; match() matches everything."""
    fields = b"".join(oxms)
    return pad8(struct.pack("!HH", 1, 4 + len(fields)) + fields)


def output(port, max_len=OFPCML_NO_BUFFER):
    """An OUTPUT action to port; max_len is the most of the frame sent
    when port is OFPP_CONTROLLER."""
    return struct.pack("!HHIH6x", 0, 16, port, max_len)


def set_field(field):
    """A SET_FIELD action that writes one oxm() field, padded to 8."""
    return pad8(struct.pack("!HH", 25, len(pad8(bytes(4) + field)))
                + field)


def apply_actions(actions):
    """An APPLY_ACTIONS instruction holding the actions (their bytes,
    one after another; b"" for none)."""
    return struct.pack("!HH4x", 4, 8 + len(actions)) + actions


def flow_mod(priority, match, instructions=b"", command=0, xid=1,
             cookie=0, idle=0, hard=0, flags=0):
    """A FLOW_MOD of table 0: command (0 ADD, 1 MODIFY, 2 MODIFY_STRICT,
    3 DELETE, 4 DELETE_STRICT) of the rule of this priority and match()
    with these instructions (apply_actions(), b"" for none); idle and
    hard timeouts in seconds, flags (1 SEND_FLOW_REM). No buffer, and
    any out_port and out_group."""
    body = struct.pack("!QQBBHHHIIIH2x", cookie, 0, 0, command, idle, hard,
                       priority, OFP_NO_BUFFER, OFPP_ANY, OFPG_ANY, flags)
    return message(14, body + match + instructions, xid=xid)


def multipart_request(kind, body=b"", xid=1):
    """A MULTIPART_REQUEST of this kind (0 DESC, 1 FLOW, 3 TABLE, 4
    PORT_STATS, 13 PORT_DESC, ...), no flags, then body."""
    return message(18, struct.pack("!HH4x", kind, 0) + body, xid=xid)


def flow_stats_body(match):
    """The body of a flow MULTIPART_REQUEST (kind 1) for the rules of
    every table, any out_port, out_group and cookie, that match()."""
    return struct.pack("!B3xII4xQQ", OFPTT_ALL, OFPP_ANY, OFPG_ANY, 0,
                       0) + match


def packet_out(actions, data, in_port=OFPP_CONTROLLER,
               buffer_id=OFP_NO_BUFFER, xid=1):
    """A PACKET_OUT of the frame data with these actions (their bytes),
    as if it came in on in_port."""
    return message(13, struct.pack("!IIH6x", buffer_id, in_port,
                                   len(actions)) + actions + data, xid=xid)
