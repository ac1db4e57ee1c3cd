/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal to the actions: a compiled action list keeps the actions as
 * written (for sp_actions_format) and the steps that execute them, where
 * consecutive sets of one header are merged into one step (all IPv4 sets
 * into one ipv4_rewrite call).
 */
#ifndef SP_ACTIONS_INTERNAL_H
#define SP_ACTIONS_INTERNAL_H

#include "simdpath/actions.h"
#include "simdpath/kernels.h"

/* The actions of the syntax, one per written action. */
enum sp_action_type {
    SP_ACT_OUTPUT,
    SP_ACT_DROP,
    SP_ACT_DEC_TTL,
    SP_ACT_NW_SRC,
    SP_ACT_NW_DST,
    SP_ACT_NW_TOS,
    SP_ACT_NW_ECN,
    SP_ACT_NW_TTL,
    SP_ACT_IPV6_SRC,
    SP_ACT_IPV6_DST,
    SP_ACT_IPV6_TCLASS,
    SP_ACT_IPV6_HLIMIT,
    SP_ACT_DL_SRC,
    SP_ACT_DL_DST,
    SP_ACT_PUSH_VLAN,
    SP_ACT_VLAN_VID,
    SP_ACT_VLAN_PCP,
    SP_ACT_STRIP_VLAN,
    SP_ACT_TP_SRC,
    SP_ACT_TP_DST,
    SP_ACT_CONTROLLER,
    SP_ACT_IN_PORT, /* output to the port the packet came in on */
    SP_ACT_FLOOD,   /* to every port but the in_port */
    SP_ACT_ALL,     /* the same: no port is kept out of floods */
};

struct sp_action {
    enum sp_action_type type;
    union {
        uint32_t port;   /* output */
        uint32_t ip4;    /* network order */
        uint8_t ip6[16]; /* network order */
        uint8_t mac[6];  /* dl_src, dl_dst */
        uint16_t number; /* tos, ecn, ttl, tclass, hlimit, tpid, vid,
                          * pcp, L4 port, controller max_len: host
                          * order */
    };
};

struct sp_ipv6_set {
    uint8_t src[16], src_mask[16];
    uint8_t dst[16], dst_mask[16];
    uint8_t tclass, tclass_mask;
    uint8_t hlimit, hlimit_mask;
    bool dec_hlimit;  /* before the set */
    uint8_t l4_proto; /* the match's exact nw_proto, or 0 */
};

struct sp_eth_set {
    uint8_t dst[6], dst_mask[6];
    uint8_t src[6], src_mask[6];
};

struct sp_tp_set {
    uint16_t src, src_mask; /* network order */
    uint16_t dst, dst_mask;
    uint8_t proto; /* TCP, UDP or SCTP: the match's */
};

enum sp_step_type {
    SP_STEP_OUTPUT,
    SP_STEP_IPV4,
    SP_STEP_IPV6,
    SP_STEP_ETH,
    SP_STEP_PUSH_VLAN,
    SP_STEP_SET_VLAN,
    SP_STEP_STRIP_VLAN,
    SP_STEP_TP,
    SP_STEP_CONTROLLER,
    SP_STEP_IN_PORT,
    SP_STEP_FLOOD,
};

struct sp_step {
    enum sp_step_type type;
    union {
        uint32_t port;
        struct sp_ipv4_set ipv4;
        struct sp_ipv6_set ipv6;
        struct sp_eth_set eth;
        uint16_t tpid;    /* host order */
        uint16_t max_len; /* controller: bytes of the frame sent */
        struct {
            uint16_t tci, mask; /* host order */
        } vlan;
        struct sp_tp_set tp;
    };
};

#define SP_ACTIONS_MAX 64

/* No output step. */
#define SP_NO_OUTPUT UINT32_MAX

struct sp_actions {
    uint32_t n_actions;
    uint32_t n_steps;
    uint32_t last_output; /* index of the last output step (to ports
                           * or the controller) */
    uint32_t headroom;
    bool drop;
    bool to_controller;        /* a step outputs to the controller */
    struct sp_action *actions; /* as written */
    struct sp_step *steps;     /* as executed */
    /* In a pool (sp_actions_intern), else NULL: its references, its hash
     * and the next list of its hash bucket, under the pool's lock. */
    struct sp_actions_pool *pool;
    uint64_t refs;
    uint32_t hash;
    struct sp_actions *next;
};

#endif /* SP_ACTIONS_INTERNAL_H */
