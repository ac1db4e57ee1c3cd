/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OpenFlow 1.3 (docs/openflow.md): the codec and one connection's protocol
 * state, without sockets or DPDK. Bytes a peer sent go in with
 * sp_of_session_input(); the replies come out of the session's output
 * buffer. What the switch is (its rules, ports, counters) is reached
 * through struct sp_of_switch, so the library is tested on its own.
 *
 * Every length field of a message is checked against the bytes that are
 * there before anything is read under it. A message that is malformed or
 * asks for what simdpath does not have is answered with OFPT_ERROR (type
 * and code as ovs-vswitchd answers, the first 64 bytes of the message as
 * data) and the session goes on; only a header whose length cannot frame
 * a message (below 8) ends it, since nothing after it can be found.
 *
 * Matches are struct sp_match; actions are simdpath action text
 * (docs/flow-syntax.md), the form sp_actions_parse() reads and
 * sp_actions_format() writes.
 */
#ifndef SP_OPENFLOW_H
#define SP_OPENFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simdpath/match.h"

#define SP_OFP_VERSION     0x04 /* OpenFlow 1.3 */
#define SP_OFP_HEADER_LEN  8
#define SP_OFP_MAX_MSG_LEN 65535

/* Message types (ofp_type). */
enum {
    SP_OFPT_HELLO = 0,
    SP_OFPT_ERROR = 1,
    SP_OFPT_ECHO_REQUEST = 2,
    SP_OFPT_ECHO_REPLY = 3,
    SP_OFPT_EXPERIMENTER = 4,
    SP_OFPT_FEATURES_REQUEST = 5,
    SP_OFPT_FEATURES_REPLY = 6,
    SP_OFPT_GET_CONFIG_REQUEST = 7,
    SP_OFPT_GET_CONFIG_REPLY = 8,
    SP_OFPT_SET_CONFIG = 9,
    SP_OFPT_PACKET_IN = 10,
    SP_OFPT_FLOW_REMOVED = 11,
    SP_OFPT_PORT_STATUS = 12,
    SP_OFPT_PACKET_OUT = 13,
    SP_OFPT_FLOW_MOD = 14,
    SP_OFPT_GROUP_MOD = 15,
    SP_OFPT_PORT_MOD = 16,
    SP_OFPT_TABLE_MOD = 17,
    SP_OFPT_MULTIPART_REQUEST = 18,
    SP_OFPT_MULTIPART_REPLY = 19,
    SP_OFPT_BARRIER_REQUEST = 20,
    SP_OFPT_BARRIER_REPLY = 21,
    SP_OFPT_QUEUE_GET_CONFIG_REQUEST = 22,
    SP_OFPT_QUEUE_GET_CONFIG_REPLY = 23,
    SP_OFPT_ROLE_REQUEST = 24,
    SP_OFPT_ROLE_REPLY = 25,
    SP_OFPT_GET_ASYNC_REQUEST = 26,
    SP_OFPT_GET_ASYNC_REPLY = 27,
    SP_OFPT_SET_ASYNC = 28,
    SP_OFPT_METER_MOD = 29,
};

/* Error types and the codes used here (ofp_error_type, ofp_*_code). */
enum {
    SP_OFPET_HELLO_FAILED = 0,
    SP_OFPET_BAD_REQUEST = 1,
    SP_OFPET_BAD_ACTION = 2,
    SP_OFPET_BAD_INSTRUCTION = 3,
    SP_OFPET_BAD_MATCH = 4,
    SP_OFPET_FLOW_MOD_FAILED = 5,
    SP_OFPET_GROUP_MOD_FAILED = 6,
    SP_OFPET_PORT_MOD_FAILED = 7,
    SP_OFPET_TABLE_MOD_FAILED = 8,
    SP_OFPET_QUEUE_OP_FAILED = 9,
    SP_OFPET_SWITCH_CONFIG_FAILED = 10,
    SP_OFPET_ROLE_REQUEST_FAILED = 11,
    SP_OFPET_METER_MOD_FAILED = 12,
    SP_OFPET_TABLE_FEATURES_FAILED = 13,
};

enum { SP_OFPHFC_INCOMPATIBLE = 0 };

enum {
    SP_OFPBRC_BAD_VERSION = 0,
    SP_OFPBRC_BAD_TYPE = 1,
    SP_OFPBRC_BAD_MULTIPART = 2,
    SP_OFPBRC_BAD_EXPERIMENTER = 3,
    SP_OFPBRC_EPERM = 5,
    SP_OFPBRC_BAD_LEN = 6,
    SP_OFPBRC_BUFFER_UNKNOWN = 8,
    SP_OFPBRC_BAD_TABLE_ID = 9,
    SP_OFPBRC_IS_SLAVE = 10,
    SP_OFPBRC_BAD_PORT = 11,
};

enum {
    SP_OFPBAC_BAD_TYPE = 0,
    SP_OFPBAC_BAD_LEN = 1,
    SP_OFPBAC_BAD_EXPERIMENTER = 2,
    SP_OFPBAC_BAD_OUT_PORT = 4,
    SP_OFPBAC_BAD_ARGUMENT = 5,
    SP_OFPBAC_TOO_MANY = 7,
    SP_OFPBAC_BAD_QUEUE = 8,
    SP_OFPBAC_BAD_OUT_GROUP = 9,
    SP_OFPBAC_MATCH_INCONSISTENT = 10,
    SP_OFPBAC_BAD_SET_TYPE = 13,
    SP_OFPBAC_BAD_SET_LEN = 14,
    SP_OFPBAC_BAD_SET_ARGUMENT = 15,
};

enum {
    SP_OFPBIC_UNKNOWN_INST = 0,
    SP_OFPBIC_UNSUP_INST = 1,
    SP_OFPBIC_BAD_TABLE_ID = 2,
    SP_OFPBIC_BAD_EXPERIMENTER = 5,
    SP_OFPBIC_BAD_LEN = 7,
};

enum {
    SP_OFPBMC_BAD_TYPE = 0,
    SP_OFPBMC_BAD_LEN = 1,
    SP_OFPBMC_BAD_FIELD = 6,
    SP_OFPBMC_BAD_VALUE = 7,
    SP_OFPBMC_BAD_MASK = 8,
    SP_OFPBMC_BAD_PREREQ = 9,
    SP_OFPBMC_DUP_FIELD = 10,
};

enum {
    SP_OFPFMFC_UNKNOWN = 0,
    SP_OFPFMFC_TABLE_FULL = 1,
    SP_OFPFMFC_BAD_TABLE_ID = 2,
    SP_OFPFMFC_OVERLAP = 3,
    SP_OFPFMFC_BAD_TIMEOUT = 5,
    SP_OFPFMFC_BAD_COMMAND = 6,
    SP_OFPFMFC_BAD_FLAGS = 7,
};

enum { SP_OFPSCFC_BAD_FLAGS = 0, SP_OFPSCFC_BAD_LEN = 1 };
enum { SP_OFPMMFC_INVALID_METER = 2 };
enum {
    SP_OFPPMFC_BAD_PORT = 0,
    SP_OFPPMFC_BAD_HW_ADDR = 1,
    SP_OFPPMFC_BAD_CONFIG = 2,
    SP_OFPPMFC_BAD_ADVERTISE = 3,
    SP_OFPPMFC_EPERM = 4,
};
enum { SP_OFPTMFC_BAD_TABLE = 0 };
enum { SP_OFPTFFC_EPERM = 5 };
enum { SP_OFPRRFC_STALE = 1, SP_OFPRRFC_BAD_ROLE = 2 };
enum { SP_OFPQOFC_BAD_PORT = 0, SP_OFPQOFC_BAD_QUEUE = 1 };
#define SP_OFPQ_ALL 0xffffffffu

/* Controller roles (ofp_controller_role). */
enum {
    SP_OFPCR_ROLE_NOCHANGE = 0,
    SP_OFPCR_ROLE_EQUAL = 1,
    SP_OFPCR_ROLE_MASTER = 2,
    SP_OFPCR_ROLE_SLAVE = 3,
};

/* Reserved port numbers (ofp_port_no). */
#define SP_OFPP_MAX        0xffffff00u
#define SP_OFPP_IN_PORT    0xfffffff8u
#define SP_OFPP_TABLE      0xfffffff9u
#define SP_OFPP_FLOOD      0xfffffffbu
#define SP_OFPP_ALL        0xfffffffcu
#define SP_OFPP_CONTROLLER 0xfffffffdu
#define SP_OFPP_ANY        0xffffffffu
#define SP_OFPG_ANY        0xffffffffu
#define SP_OFPTT_ALL       0xff
#define SP_OFP_NO_BUFFER   0xffffffffu
/* output:CONTROLLER's max_len for the whole frame. */
#define SP_OFPCML_NO_BUFFER 0xffff

/* PACKET_IN reasons. */
enum { SP_OFPR_NO_MATCH = 0, SP_OFPR_ACTION = 1 };

/* flow_mod commands and flags. */
enum {
    SP_OFPFC_ADD = 0,
    SP_OFPFC_MODIFY = 1,
    SP_OFPFC_MODIFY_STRICT = 2,
    SP_OFPFC_DELETE = 3,
    SP_OFPFC_DELETE_STRICT = 4,
};

#define SP_OFPFF_SEND_FLOW_REM 0x0001
#define SP_OFPFF_CHECK_OVERLAP 0x0002
#define SP_OFPFF_RESET_COUNTS  0x0004
#define SP_OFPFF_NO_PKT_COUNTS 0x0008
#define SP_OFPFF_NO_BYT_COUNTS 0x0010

/* Multipart types. */
enum {
    SP_OFPMP_DESC = 0,
    SP_OFPMP_FLOW = 1,
    SP_OFPMP_AGGREGATE = 2,
    SP_OFPMP_TABLE = 3,
    SP_OFPMP_PORT_STATS = 4,
    SP_OFPMP_QUEUE = 5,
    SP_OFPMP_GROUP = 6,
    SP_OFPMP_GROUP_DESC = 7,
    SP_OFPMP_GROUP_FEATURES = 8,
    SP_OFPMP_METER = 9,
    SP_OFPMP_METER_CONFIG = 10,
    SP_OFPMP_METER_FEATURES = 11,
    SP_OFPMP_TABLE_FEATURES = 12,
    SP_OFPMP_PORT_DESC = 13,
};
#define SP_OFPMPF_MORE 0x0001

/* Counters simdpath does not keep are sent as all ones, as OpenFlow
 * asks. */
#define SP_OF_NO_COUNT UINT64_MAX

/* Room for the action text of one rule. */
#define SP_OF_ACTIONS_MAX 1024

/* An error to answer: type, code, and why (for logs and tests). */
struct sp_of_error {
    uint16_t type, code;
    char why[160];
};
/* Fills err and returns -1. */
int sp_of_fail(struct sp_of_error *err, uint16_t type, uint16_t code,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A decoded FLOW_MOD (table 0 or OFPTT_ALL for deletes). */
struct sp_of_flow_mod {
    uint8_t command;
    uint8_t table_id;
    uint64_t cookie, cookie_mask;
    uint16_t idle_timeout, hard_timeout, priority, flags;
    uint32_t buffer_id, out_port, out_group;
    struct sp_match match;
    char actions[SP_OF_ACTIONS_MAX]; /* "drop" for an empty list */
};

/* A rule as the switch reports it. */
struct sp_of_flow {
    struct sp_match match;
    uint16_t priority;
    uint16_t idle_timeout, hard_timeout, flags;
    uint64_t cookie;
    uint32_t duration_sec, duration_nsec;
    uint64_t packets, bytes; /* SP_OF_NO_COUNT: not kept */
    double idle_age; /* seconds since its last packet (sp_of_flow_expiry) */
    char actions[SP_OF_ACTIONS_MAX];
};

struct sp_of_port {
    uint32_t port_no;
    uint8_t hw_addr[6];
    char name[16];
    /* Counters; SP_OF_NO_COUNT where not kept. */
    uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes;
    uint64_t rx_dropped, tx_dropped, rx_errors, tx_errors;
    uint32_t duration_sec;
    bool link_down;  /* state LINK_DOWN, else LIVE */
    uint32_t config; /* SP_OFPPC_* */
};

/* Port config bits (ofp_port_config) of OpenFlow 1.3; PORT_MOD leaves
 * others alone, as ovs-vswitchd does. */
#define SP_OFPPC_PORT_DOWN    0x01u
#define SP_OFPPC_NO_RECV      0x04u
#define SP_OFPPC_NO_FWD       0x20u
#define SP_OFPPC_NO_PACKET_IN 0x40u
#define SP_OFPPC_ALL                                           \
    (SP_OFPPC_PORT_DOWN | SP_OFPPC_NO_RECV | SP_OFPPC_NO_FWD | \
     SP_OFPPC_NO_PACKET_IN)

struct sp_of_table {
    uint32_t active_count;
    uint64_t lookup_count, matched_count;
};

/* A decoded PACKET_OUT; data points into the message. */
struct sp_of_packet_out {
    uint32_t in_port; /* 1..n_ports or SP_OFPP_CONTROLLER */
    bool table;       /* OFPP_TABLE: through the rules, no actions */
    char actions[SP_OF_ACTIONS_MAX]; /* "drop" for an empty list */
    const uint8_t *data;
    size_t len;
};

/* A PACKET_IN to send (always OFP_NO_BUFFER, table 0). */
struct sp_of_packet_in {
    uint32_t in_port; /* a port, or SP_OFPP_CONTROLLER */
    uint8_t reason;   /* SP_OFPR_* */
    uint16_t max_len; /* output:CONTROLLER's; SP_OFPCML_NO_BUFFER: all */
    uint64_t cookie;
    const uint8_t *data;
    size_t len; /* the whole frame's */
};

/* The match of a frame's own headers (every field exact), against which
 * a PACKET_OUT's actions are checked. */
typedef void sp_of_frame_match_fn(void *aux, const uint8_t *data, size_t len,
                                  uint32_t in_port, struct sp_match *m);

/* Given each rule of a listing in turn: f is valid during the call only,
 * and fn must not call the switch. */
typedef void sp_of_flow_fn(void *ctx, const struct sp_of_flow *f);

/* What the connections of one switch share for the master election
 * (ROLE_REQUEST): the generation_id of the latest MASTER or SLAVE request
 * taken, once one was. */
struct sp_of_election {
    bool have_generation;
    uint64_t generation;
};

struct sp_of_session;

/* What the session asks the switch. Every callback is required but
 * frame_match and packet_out (without them PACKET_OUT is OFPBRC_BAD_TYPE,
 * as before simdpath had it), and election and master (without them so
 * is ROLE_REQUEST: a switch of one connection). */
struct sp_of_switch {
    void *aux;
    uint64_t datapath_id;
    unsigned n_ports; /* ports are 1..n_ports */
    /* Applies a decoded FLOW_MOD; returns 0, or -1 with err filled. */
    int (*flow_mod)(void *aux, const struct sp_of_flow_mod *fm,
                    struct sp_of_error *err);
    /* Calls fn for every rule, highest priority first, all read at one
     * time; -1 when out of memory. */
    int (*flows)(void *aux, sp_of_flow_fn *fn, void *ctx);
    void (*port)(void *aux, unsigned port, struct sp_of_port *out);
    void (*table)(void *aux, struct sp_of_table *out);
    sp_of_frame_match_fn *frame_match;
    /* Sends a decoded PACKET_OUT; 0, or -1 with err filled. */
    int (*packet_out)(void *aux, const struct sp_of_packet_out *po,
                      struct sp_of_error *err);
    /* Before a BARRIER_REPLY: waits until the datapath no longer uses
     * what earlier messages removed, and queues on the sessions what it
     * sent the controller until then (PACKET_INs). NULL: nothing to wait
     * for. */
    void (*barrier)(void *aux);
    /* PORT_MOD of a valid port and address: sets the config bits in mask
     * (SP_OFPPC_ALL bits only, config within it) to config's, and tells
     * the other connections (PORT_STATUS) if that changed it; 0, or -1
     * with err. NULL: a PORT_MOD that would change the config is
     * OFPPMFC_BAD_CONFIG. */
    int (*port_mod)(void *aux, const struct sp_of_session *from, uint32_t port,
                    uint32_t config, uint32_t mask, struct sp_of_error *err);
    struct sp_of_election *election;
    /* Session s becomes master: every other master connection becomes a
     * slave (its role set to SP_OFPCR_ROLE_SLAVE). */
    void (*master)(void *aux, const struct sp_of_session *s);
};

/* A growable byte buffer. */
struct sp_of_buf {
    uint8_t *data;
    size_t len, cap;
};

void sp_of_buf_free(struct sp_of_buf *b);
/* Drops the first n bytes (they were sent). */
void sp_of_buf_consume(struct sp_of_buf *b, size_t n);

/* Limits: messages are handled, and a long reply produced, while less
 * than SP_OF_OUTPUT_HIGH bytes of output wait to be sent; input is taken
 * while less than SP_OF_INPUT_MAX bytes of it wait to be handled. */
#define SP_OF_OUTPUT_HIGH (256 * 1024)
#define SP_OF_INPUT_MAX   (256 * 1024)

/* Which asynchronous messages a connection takes (SET_ASYNC): bit n of a
 * mask is reason n; [0] applies while the connection is master or equal,
 * [1] while it is a slave. */
struct sp_of_async {
    uint32_t packet_in[2], port_status[2], flow_removed[2];
};

struct sp_of_session {
    const struct sp_of_switch *sw;
    bool hello_sent, hello_received;
    bool closing; /* a fatal error was answered: close once sent */
    uint16_t config_flags, miss_send_len;
    uint32_t role; /* SP_OFPCR_ROLE_EQUAL (the start), _MASTER or _SLAVE */
    struct sp_of_async async;
    struct sp_of_buf in, out;
    /* A FLOW reply's messages, encoded as the rules were listed, that
     * wait for room in the output: the reply's bytes are all it holds. */
    struct sp_of_reply_part *pending;
    uint64_t n_errors; /* errors answered */
};

/* Starts a session; its HELLO is in s->out. */
void sp_of_session_init(struct sp_of_session *s,
                        const struct sp_of_switch *sw);
void sp_of_session_free(struct sp_of_session *s);

/*
 * Takes bytes the peer sent and handles every whole message in order
 * (stopping while s->out is at its limit). Returns 0, or
 * -1 when the connection should be closed once s->out is sent
 * (s->closing), e.g. after a HELLO with no common version or a header
 * whose length cannot be framed. With len 0 it resumes after the caller
 * drained s->out.
 */
int sp_of_session_input(struct sp_of_session *s, const uint8_t *data,
                        size_t len);

/* FLOW_REMOVED reasons. */
enum {
    SP_OFPRR_IDLE_TIMEOUT = 0,
    SP_OFPRR_HARD_TIMEOUT = 1,
    SP_OFPRR_DELETE = 2,
};

/* The asynchronous messages below are queued only where the session's
 * role and SET_ASYNC masks take their reason (the start, as ovs-vswitchd:
 * a master or equal connection takes every PACKET_IN, PORT_STATUS and
 * FLOW_REMOVED, a slave PORT_STATUS only); 0 when not taken. */

/* Queues a FLOW_REMOVED for f (sent to every controller, as OVS does for
 * rules with SEND_FLOW_REM). Returns -1 when out of memory. */
int sp_of_session_flow_removed(struct sp_of_session *s,
                               const struct sp_of_flow *f, uint8_t reason);

/* Queues a PACKET_IN, unless half the output limit waits to be sent (a
 * controller that does not read loses PACKET_INs, not memory, and its
 * own messages are still read) or HELLO is not done: -1 then, or when
 * out of memory. */
int sp_of_session_packet_in(struct sp_of_session *s,
                            const struct sp_of_packet_in *pin);
/* Why rule f is to be removed now, as ovs-vswitchd decides:
 * SP_OFPRR_HARD_TIMEOUT once more than its hard_timeout seconds passed
 * since it was added or last modified (modified_ms and now_ms on one
 * clock), else SP_OFPRR_IDLE_TIMEOUT once its idle_age (seconds since its
 * last packet, or since it was added if none; a modify keeps it) is over
 * its idle_timeout; -1 to keep it. */
int sp_of_flow_expiry(const struct sp_of_flow *f, uint64_t modified_ms,
                      uint64_t now_ms, double idle_age);

/* PORT_STATUS reasons and port states (ofp_port_reason, ofp_port_state). */
enum {
    SP_OFPPR_ADD = 0,
    SP_OFPPR_DELETE = 1,
    SP_OFPPR_MODIFY = 2,
};
#define SP_OFPPS_LINK_DOWN 0x1
#define SP_OFPPS_LIVE      0x4

/* Queues an ECHO_REQUEST (an inactivity probe); -1 when out of memory. */
int sp_of_session_echo_request(struct sp_of_session *s);
/* Queues a PORT_STATUS for port p (p->port_no set), with its description
 * as PORT_DESC gives it. Returns -1 when out of memory. */
int sp_of_session_port_status(struct sp_of_session *s,
                              const struct sp_of_port *p, uint8_t reason);

/* Whether the session wants more input (none while a reply is pending,
 * s->in is full or s->out is at its limit). */
bool sp_of_session_wants_input(const struct sp_of_session *s);

/* ---- codec, also used by the tests ---- */

/* Decodes a FLOW_MOD message (header included) for a switch with ports
 * 1..n_ports. Returns 0, or -1 with err. */
int sp_of_decode_flow_mod(const uint8_t *msg, size_t len, unsigned n_ports,
                          struct sp_of_flow_mod *fm, struct sp_of_error *err);

/* Decodes a PACKET_OUT message (header included) for a switch with ports
 * 1..n_ports; frame_match gives the match its actions are checked
 * against. Returns 0, or -1 with err. */
int sp_of_decode_packet_out(const uint8_t *msg, size_t len, unsigned n_ports,
                            sp_of_frame_match_fn *frame_match, void *aux,
                            struct sp_of_packet_out *po,
                            struct sp_of_error *err);

/* Appends a PACKET_IN message. Returns -1 (out of memory). */
int sp_of_encode_packet_in(struct sp_of_buf *b,
                           const struct sp_of_packet_in *pin);

/* Decodes an OXM match (ofp_match, at p, with 'avail' bytes there) into
 * m; *used is its length with padding. */
int sp_of_decode_match(const uint8_t *p, size_t avail, struct sp_match *m,
                       size_t *used, struct sp_of_error *err);

/* Appends m as an ofp_match with padding. Returns -1 (out of memory). */
int sp_of_encode_match(struct sp_of_buf *b, const struct sp_match *m);

/* Whether a FLOW_MOD's or a flow stats request's selection (match,
 * cookie and mask, out_port, out_group; priority too when strict) takes
 * flow f, as OpenFlow defines: non-strict, f's match must be at least as
 * specific as the selection's. */
bool sp_of_flow_selected(const struct sp_of_flow_mod *sel,
                         const struct sp_of_flow *f, bool strict);

/* A rule as the flow syntax writes it (docs/flow-syntax.md),
 * "priority=P[,MATCH],actions=ACTIONS": how simdpath run's channel hands
 * a decoded FLOW_MOD to the datapath. SP_OF_RULE_TEXT_MAX bytes hold any
 * rule the codec decodes. */
#define SP_OF_MATCH_TEXT_MAX 2048
#define SP_OF_RULE_TEXT_MAX  (SP_OF_MATCH_TEXT_MAX + SP_OF_ACTIONS_MAX + 32)
void sp_of_rule_text(char *buf, size_t size, const struct sp_match *m,
                     uint16_t priority, const char *actions);

/* Appends a FLOW_MOD: used by the tests and the oracle test. */
int sp_of_encode_flow_mod(struct sp_of_buf *b, uint32_t xid,
                          const struct sp_of_flow_mod *fm);

/* Appends an apply-actions instruction for the action text (as
 * sp_actions_format() writes it); nothing for "drop" or "". Returns -1
 * on text it does not know. */
int sp_of_encode_actions(struct sp_of_buf *b, const char *actions,
                         const struct sp_match *match);

#endif /* SP_OPENFLOW_H */
