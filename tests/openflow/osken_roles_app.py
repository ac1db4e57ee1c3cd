# SPDX-License-Identifier: BSD-3-Clause
"""An os-ken application for test_roles.py: one of two controllers of a
cluster that simdpath connects to (--controller twice). $SP_ROLES_NAME is
"first" or "second", $SP_ROLES_DIR the folder where it writes what it saw
(NAME.json) and where the test leaves the files that move it on:

- first: asks to be MASTER with generation 10, then counts PACKET_INs.
  Once the file "takeover-done" exists it asks for its role without a
  change (it should be a slave by then), counts the PACKET_INs after
  that reply, and asks to be master again with the old generation (10).
- second: asks to be SLAVE with generation 10, tries a FLOW_MOD and a
  PACKET_OUT, then a BARRIER, and counts the PACKET_INs after its role
  reply. Once the file "takeover" exists it asks to be MASTER with
  generation 11, adds a rule, and counts the PACKET_INs after that
  reply.

Every reply and error is recorded with what was asked last, in os-ken's
own decoding."""
import json
import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER
from os_ken.controller.handler import set_ev_cls
from os_ken.lib import hub
from os_ken.ofproto import ofproto_v1_3

# Replies can come before os-ken's handshake is done (its PORT_DESC).
BOTH = [CONFIG_DISPATCHER, MAIN_DISPATCHER]


class SimdpathRoles(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.name_ = os.environ["SP_ROLES_NAME"]
        self.dir = os.environ["SP_ROLES_DIR"]
        self.dp = None
        # phase: what the app asked last; packet_ins: counted per phase.
        self.result = {"phase": "start", "roles": [], "errors": [],
                       "packet_ins": {}, "barriers": 0}

    def save(self):
        path = os.path.join(self.dir, self.name_ + ".json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.result, f)
        os.rename(path + ".tmp", path)

    def role(self, role, generation, phase):
        dp = self.dp
        self.result["phase"] = "asked " + phase
        dp.send_msg(dp.ofproto_parser.OFPRoleRequest(dp, role, generation))

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        self.dp = ev.msg.datapath
        ofp = self.dp.ofproto
        if self.name_ == "first":
            self.role(ofp.OFPCR_ROLE_MASTER, 10, "master")
        else:
            self.role(ofp.OFPCR_ROLE_SLAVE, 10, "slave")
        self.save()

    @set_ev_cls(ofp_event.EventOFPRoleReply, BOTH)
    def role_reply(self, ev):
        dp = self.dp
        ofp, parser = dp.ofproto, dp.ofproto_parser
        phase = self.result["phase"].replace("asked ", "")
        self.result["roles"].append([phase, ev.msg.role,
                                     ev.msg.generation_id])
        self.result["phase"] = phase
        if self.name_ == "second" and phase == "slave":
            match = parser.OFPMatch(eth_type=0x0800, ip_proto=6, tcp_dst=1)
            inst = [parser.OFPInstructionActions(
                ofp.OFPIT_APPLY_ACTIONS, [parser.OFPActionOutput(2)])]
            dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=100,
                                          match=match, instructions=inst))
            dp.send_msg(parser.OFPPacketOut(
                datapath=dp, buffer_id=ofp.OFP_NO_BUFFER,
                in_port=ofp.OFPP_CONTROLLER,
                actions=[parser.OFPActionOutput(2)], data=b"\x02" * 60))
            dp.send_msg(parser.OFPBarrierRequest(dp))
            hub.spawn(self.wait_for, "takeover", self.take_over)
        elif self.name_ == "second" and phase == "master":
            match = parser.OFPMatch(eth_type=0x0800, ip_proto=6, tcp_dst=2)
            inst = [parser.OFPInstructionActions(
                ofp.OFPIT_APPLY_ACTIONS, [parser.OFPActionOutput(3)])]
            dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=101,
                                          cookie=0x2222, match=match,
                                          instructions=inst))
            dp.send_msg(parser.OFPBarrierRequest(dp))
        elif self.name_ == "first" and phase == "master":
            hub.spawn(self.wait_for, "takeover-done", self.step_down)
        elif self.name_ == "first" and phase == "check":
            # The old generation is stale now.
            self.role(ofp.OFPCR_ROLE_MASTER, 10, "stale")
        self.save()

    def wait_for(self, name, then):
        # Waits for the test's file: an event, not a time.
        while not os.path.exists(os.path.join(self.dir, name)):
            hub.sleep(0.05)
        then()

    def take_over(self):
        self.role(self.dp.ofproto.OFPCR_ROLE_MASTER, 11, "master")
        self.save()

    def step_down(self):
        self.role(self.dp.ofproto.OFPCR_ROLE_NOCHANGE, 0, "check")
        self.save()

    @set_ev_cls(ofp_event.EventOFPBarrierReply, BOTH)
    def barrier(self, ev):
        self.result["barriers"] += 1
        self.save()

    @set_ev_cls(ofp_event.EventOFPErrorMsg, BOTH)
    def error(self, ev):
        self.result["errors"].append([self.result["phase"], ev.msg.type,
                                      ev.msg.code])
        self.save()

    @set_ev_cls(ofp_event.EventOFPPacketIn, BOTH)
    def packet_in(self, ev):
        counts = self.result["packet_ins"]
        phase = self.result["phase"]
        counts[phase] = counts.get(phase, 0) + 1
        # Written now and then: enough for the test to see the count grow.
        if counts[phase] in (1, 10, 100, 200) or counts[phase] % 500 == 0:
            self.save()
