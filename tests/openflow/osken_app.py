# SPDX-License-Identifier: BSD-3-Clause
"""An os-ken application for test_osken.py: when a switch connects it
installs rules with os-ken's own encoder, asks for the rules and ports
back, and writes what os-ken's decoder made of the replies, and every
error, as JSON to $SP_OSKEN_OUT."""
import json
import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER
from os_ken.controller.handler import set_ev_cls
from os_ken.ofproto import ofproto_v1_3


class SimdpathCheck(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.result = {"errors": [], "flows": [], "ports": []}

    def save(self):
        path = os.environ["SP_OSKEN_OUT"]
        with open(path + ".tmp", "w") as f:
            json.dump(self.result, f)
        os.rename(path + ".tmp", path)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        self.result["datapath_id"] = ev.msg.datapath_id
        self.result["n_tables"] = ev.msg.n_tables

        def add(priority, match, actions, cookie=0, xid=None):
            inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                                 actions)]
            mod = parser.OFPFlowMod(datapath=dp, cookie=cookie,
                                    priority=priority, match=match,
                                    instructions=inst)
            if xid:
                mod.set_xid(xid)
            dp.send_msg(mod)

        add(500, parser.OFPMatch(eth_type=0x0800, ip_proto=17,
                                 ipv4_dst="10.0.0.1", udp_dst=53),
            [parser.OFPActionSetField(ipv4_src="192.0.2.1"),
             parser.OFPActionOutput(2)], cookie=0x55)
        add(400, parser.OFPMatch(eth_type=0x86dd,
                                 ipv6_dst=("2001:db8::", "ffff:ffff::")),
            [parser.OFPActionDecNwTtl(), parser.OFPActionOutput(3)])
        add(300, parser.OFPMatch(vlan_vid=(0x1000, 0x1000)),
            [parser.OFPActionPopVlan(), parser.OFPActionOutput(3)])
        # simple_switch_13's table-miss rule.
        add(0, parser.OFPMatch(),
            [parser.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                    ofp.OFPCML_NO_BUFFER)], xid=0x7777)
        dp.send_msg(parser.OFPBarrierRequest(dp))
        dp.send_msg(parser.OFPFlowStatsRequest(dp))
        dp.send_msg(parser.OFPPortDescStatsRequest(dp, 0))

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def error(self, ev):
        self.result["errors"].append([ev.msg.type, ev.msg.code,
                                      ev.msg.xid])

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    def flows(self, ev):
        for s in ev.msg.body:
            self.result["flows"].append({
                "priority": s.priority, "cookie": s.cookie,
                "packets": s.packet_count,
                "match": dict(s.match.items()),
                "actions": [str(a) for i in s.instructions
                            for a in getattr(i, "actions", [])]})

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def ports(self, ev):
        self.result["ports"] = [[p.port_no, p.name.decode()]
                                for p in ev.msg.body]
        self.save()
