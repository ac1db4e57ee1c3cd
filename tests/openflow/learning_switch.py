# SPDX-License-Identifier: BSD-3-Clause
"""A learning switch for os-ken, written for test_learning.py: what
os-ken's simple_switch_13 does (Debian's python3-os-ken leaves that app
out). On connection it installs the table-miss rule (priority 0, match
everything, output to the controller, whole frames); on each PACKET_IN it
learns the source address's port, installs a priority-1 rule
in_port+eth_dst+eth_src once the destination's port is known, and sends
the frame with PACKET_OUT to that port or, not yet known, FLOOD. What it
saw and did goes to $SP_OSKEN_OUT as JSON after every event."""
import json
import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER
from os_ken.controller.handler import set_ev_cls
from os_ken.lib.packet import ethernet, ether_types, packet
from os_ken.ofproto import ofproto_v1_3


class LearningSwitch(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ports = {}  # datapath id -> {MAC: port}
        self.state = {"connected": False, "packet_ins": 0, "reasons": [],
                      "cookies": [], "rules": [], "packet_outs": 0,
                      "floods": 0, "errors": []}

    def save(self):
        path = os.environ["SP_OSKEN_OUT"]
        with open(path + ".tmp", "w") as f:
            json.dump(self.state, f)
        os.rename(path + ".tmp", path)

    def add_rule(self, dp, priority, match, actions):
        ofp, parser = dp.ofproto, dp.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                             actions)]
        dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=priority,
                                      match=match, instructions=inst))

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        self.add_rule(dp, 0, parser.OFPMatch(),
                      [parser.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                              ofp.OFPCML_NO_BUFFER)])
        self.state["connected"] = True
        self.save()

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def error(self, ev):
        self.state["errors"].append([ev.msg.type, ev.msg.code])
        self.save()

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        in_port = msg.match["in_port"]
        self.state["packet_ins"] += 1
        self.state["reasons"].append(msg.reason)
        self.state["cookies"].append(msg.cookie)
        eth = packet.Packet(msg.data).get_protocols(ethernet.ethernet)[0]
        if eth.ethertype == ether_types.ETH_TYPE_LLDP:
            self.save()
            return
        table = self.ports.setdefault(dp.id, {})
        table[eth.src] = in_port
        out_port = table.get(eth.dst, ofp.OFPP_FLOOD)
        actions = [parser.OFPActionOutput(out_port)]
        if out_port != ofp.OFPP_FLOOD:
            self.add_rule(dp, 1, parser.OFPMatch(in_port=in_port,
                                                 eth_dst=eth.dst,
                                                 eth_src=eth.src), actions)
            self.state["rules"].append([in_port, eth.dst, eth.src])
        else:
            self.state["floods"] += 1
        # The switch buffers nothing: the frame goes back with the
        # PACKET_OUT.
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        dp.send_msg(parser.OFPPacketOut(datapath=dp,
                                        buffer_id=msg.buffer_id,
                                        in_port=in_port, actions=actions,
                                        data=data))
        self.state["packet_outs"] += 1
        self.save()
