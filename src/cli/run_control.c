/* SPDX-License-Identifier: BSD-3-Clause */
/* simdpath run's control commands, telemetry and counter report. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/control.h"
#include "cli/openflow.h"
#include "simdpath/datapath.h"
#include "simdpath/io.h"

/* Telemetry callbacks take no context: the one running datapath. */
static struct sp_dp *running_dp;

static void
print_port_stats(struct sp_dp *dp, unsigned port, FILE *out)
{
    struct sp_dp_port_stats s;

    sp_dp_port_stats(dp, port, &s);
    fprintf(out,
            "port %u (%s): rx %llu tx %llu copies %llu packet_in %llu "
            "packet_out %llu dropped",
            port, port ? sp_io_port_name(port) : "controller",
            (unsigned long long)s.rx, (unsigned long long)s.tx,
            (unsigned long long)s.copies, (unsigned long long)s.packet_in,
            (unsigned long long)s.packet_out);
    for (unsigned r = 0; r < SP_DP_DROP_COUNT; r++) {
        fprintf(out, " %s %llu", sp_dp_drop_name(r),
                (unsigned long long)s.drops[r]);
    }
    fputc('\n', out);
}

/* What the device counted: a line of its own, for the frames that never
 * reached the datapath's counters (receive) or left them as sent but
 * did not go out (transmit). */
static void
print_nic_stats(unsigned port, FILE *out)
{
    struct sp_io_nic_stats s;

    sp_io_nic_stats(port, &s);
    fprintf(out,
            "port %u (%s) nic: rx_missed %llu rx_errors %llu rx_nombuf %llu "
            "tx_errors %llu\n",
            port, sp_io_port_name(port), (unsigned long long)s.rx_missed,
            (unsigned long long)s.rx_errors, (unsigned long long)s.rx_nombuf,
            (unsigned long long)s.tx_errors);
}

static void
print_pmd_stats(struct sp_dp *dp, unsigned pmd, FILE *out)
{
    struct sp_dp_pmd_stats s;
    double per_packet;

    sp_dp_pmd_stats(dp, pmd, &s);
    per_packet = s.packets ? (double)s.busy_cycles / (double)s.packets : 0;
    fprintf(out,
            "pmd %u: packets %llu batches %llu emc hits %llu emc bypassed "
            "%llu classifier hits %llu misses %llu parse errors %llu; %.1f "
            "cycles/packet, busy %.1f%%\n",
            pmd, (unsigned long long)s.packets, (unsigned long long)s.batches,
            (unsigned long long)s.emc_hits, (unsigned long long)s.emc_bypassed,
            (unsigned long long)s.classifier_hits,
            (unsigned long long)s.misses, (unsigned long long)s.parse_errors,
            per_packet,
            s.busy_cycles + s.idle_cycles
                ? 100.0 * (double)s.busy_cycles /
                      (double)(s.busy_cycles + s.idle_cycles)
                : 0.0);
}

static double
percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* One PMD's profile, laid out as OVS's pmd-perf-show. */
static void
print_pmd_perf(struct sp_dp *dp, unsigned pmd, FILE *out)
{
    struct sp_dp_pmd_perf p;
    double packets;

    sp_dp_pmd_perf(dp, pmd, &p);
    packets = p.packets ? (double)p.packets : 1.0;
    fprintf(out, "pmd %u:\n", pmd);
    fprintf(out, "  packets: %llu, batches: %llu (%.1f packets/batch)\n",
            (unsigned long long)p.packets, (unsigned long long)p.batches,
            p.batches ? (double)p.packets / (double)p.batches : 0.0);
    fprintf(out, "  busy cycles: %llu (%.1f%%), idle cycles: %llu (%.1f%%)\n",
            (unsigned long long)p.busy_cycles,
            percent(p.busy_cycles, p.busy_cycles + p.idle_cycles),
            (unsigned long long)p.idle_cycles,
            percent(p.idle_cycles, p.busy_cycles + p.idle_cycles));
    fprintf(out, "  cycles/packet: %.1f\n", (double)p.busy_cycles / packets);
    for (unsigned s = 0; s < SP_DP_STAGE_COUNT; s++) {
        fprintf(out, "    %-11s %8.1f cycles/packet (%.1f%%)\n",
                sp_dp_stage_name(s), (double)p.stage_cycles[s] / packets,
                percent(p.stage_cycles[s], p.busy_cycles));
    }
}

static void
print_perf(struct sp_dp *dp, const struct sp_dp_config *config, FILE *out)
{
    fprintf(out, "pmd profile: %s\n", sp_dp_perf_enabled(dp) ? "on" : "off");
    for (unsigned t = 0; t < config->n_pmds; t++) {
        print_pmd_perf(dp, t, out);
    }
}

static void
print_counters(struct sp_dp *dp, const struct sp_dp_config *config, FILE *out)
{
    struct sp_dp_port_stats controller;

    /* Port 0, the PACKET_OUTs whose in_port is the controller, once there
     * were some. */
    sp_dp_port_stats(dp, 0, &controller);
    if (controller.packet_out) {
        print_port_stats(dp, 0, out);
    }
    for (unsigned p = 1; p <= config->n_ports; p++) {
        print_port_stats(dp, p, out);
        print_nic_stats(p, out);
    }
    for (unsigned t = 0; t < config->n_pmds; t++) {
        print_pmd_stats(dp, t, out);
    }
}

static void
print_active_kernels(FILE *out)
{
    static const char *const modes[] = {"auto", "forced", "autovalidate"};

    fputs("kernels:", out);
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        const struct sp_variant *v;
        enum sp_choice_mode mode = sp_dispatch_choice(k, &v);

        fprintf(out, " %s=%s%s%s%s", sp_kernel_name(k),
                v ? v->name : modes[mode], v ? " (" : "", v ? modes[mode] : "",
                v ? ")" : "");
    }
    fputc('\n', out);
}

uint64_t
sp_run_report(struct sp_dp *dp, const struct sp_dp_config *config, FILE *out)
{
    uint64_t checks = 0, mismatches = 0;

    print_active_kernels(out);
    print_counters(dp, config, out);
    if (sp_dp_perf_enabled(dp)) {
        print_perf(dp, config, out);
    }
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        for (unsigned i = 1; i < sp_variant_count(); i++) {
            checks += sp_autovalidate_checks(k, i);
            mismatches += sp_autovalidate_mismatches(k, i);
        }
    }
    if (checks) {
        fprintf(out, "autovalidate: %llu checks, %llu mismatches\n",
                (unsigned long long)checks, (unsigned long long)mismatches);
    }
    return mismatches;
}

static const struct sp_dp_config *running_config;

static int
ctl_impl_show(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)ctx, (void)err;
    sp_cli_print_kernels(out);
    return 0;
}

static int
ctl_impl_set(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)ctx;
    if (sp_dispatch_set_impl(args, err)) {
        return -1;
    }
    print_active_kernels(out);
    return 0;
}

static int
ctl_autovalidate_show(const char *args, FILE *out, void *ctx,
                      struct sp_err *err)
{
    (void)args, (void)ctx, (void)err;
    fprintf(out, "%-13s %-11s %12s %12s\n", "kernel", "variant", "checks",
            "mismatches");
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        for (unsigned i = 1; i < sp_variant_count(); i++) {
            fprintf(out, "%-13s %-11s %12llu %12llu\n", sp_kernel_name(k),
                    sp_variant_get(i)->name,
                    (unsigned long long)sp_autovalidate_checks(k, i),
                    (unsigned long long)sp_autovalidate_mismatches(k, i));
        }
    }
    return 0;
}

static int
ctl_flow_add(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)out;
    return sp_dp_flow_add(ctx, args, err);
}

/* "--strict REST" or "REST": whether strict, and where REST starts. */
static const char *
strict_option(const char *args, bool *strict)
{
    static const char opt[] = "--strict";
    size_t len = strlen(opt);

    *strict = !strncmp(args, opt, len) &&
              (!args[len] || args[len] == ' ' || args[len] == '\t');
    return *strict ? args + len + strspn(args + len, " \t") : args;
}

static int
ctl_flow_del(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    unsigned deleted;
    bool strict;
    const char *match = strict_option(args, &strict);

    (void)out;
    if (strict) {
        return sp_dp_flow_del(ctx, match, err);
    }
    return sp_dp_flow_del_matching(ctx, match, false, &deleted, err);
}

static int
ctl_flow_mod(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    unsigned modified;
    bool strict;
    const char *rule = strict_option(args, &strict);

    (void)out;
    return sp_dp_flow_mod(ctx, rule, strict, false, &modified, err);
}

static int
ctl_flow_dump(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args;
    if (sp_dp_flows_dump(ctx, out)) {
        return sp_err_set(err, "out of memory for the list of rules");
    }
    return 0;
}

static int
ctl_counters_show(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)err;
    print_counters(ctx, running_config, out);
    return 0;
}

static int
ctl_counters_clear(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)out, (void)err;
    sp_dp_stats_clear(ctx);
    for (unsigned p = 1; p <= running_config->n_ports; p++) {
        sp_io_nic_stats_clear(p);
    }
    return 0;
}

static void
put_xstat(void *out, const char *name, uint64_t value)
{
    fprintf(out, "%s %llu\n", name, (unsigned long long)value);
}

/* A port's number, 1 to n_ports, from the whole of 'text'. */
static int
parse_port(const char *text, unsigned *port, struct sp_err *err)
{
    char *end;
    unsigned long n = strtoul(text, &end, 10);

    if (!isdigit((unsigned char)*text) || *end || n < 1 ||
        n > running_config->n_ports) {
        return sp_err_set(err, "no port '%s': ports are 1 to %u", text,
                          running_config->n_ports);
    }
    *port = (unsigned)n;
    return 0;
}

static int
ctl_port_xstats(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    unsigned port;

    (void)ctx;
    if (parse_port(args, &port, err)) {
        return -1;
    }
    return sp_io_port_xstats(port, put_xstat, out, err);
}

/* What port-mod takes, as ovs-ofctl mod-port names it: the config bit,
 * and whether the word sets it. port-show prints the set ones' words. */
static const struct {
    const char *word;
    uint32_t bit;
    bool set;
} port_mods[] = {
    {"down", SP_DP_PORT_DOWN, true},
    {"up", SP_DP_PORT_DOWN, false},
    {"no-receive", SP_DP_PORT_NO_RECV, true},
    {"receive", SP_DP_PORT_NO_RECV, false},
    {"no-forward", SP_DP_PORT_NO_FWD, true},
    {"forward", SP_DP_PORT_NO_FWD, false},
    {"no-packet-in", SP_DP_PORT_NO_PACKET_IN, true},
    {"packet-in", SP_DP_PORT_NO_PACKET_IN, false},
};

#define PORT_MOD_WORDS                                                  \
    "up, down, receive, no-receive, forward, no-forward, packet-in or " \
    "no-packet-in"

static void
print_port_config(struct sp_dp *dp, unsigned port, FILE *out)
{
    uint32_t config = sp_dp_port_config(dp, port);

    fprintf(out, "port %u (%s): link %s, config:", port, sp_io_port_name(port),
            sp_io_port_link_up(port) ? "up" : "down");
    for (size_t i = 0; i < sizeof port_mods / sizeof *port_mods; i++) {
        if (port_mods[i].set && (config & port_mods[i].bit)) {
            fprintf(out, " %s", port_mods[i].word);
        }
    }
    fputs(config ? "\n" : " none\n", out);
}

static int
ctl_port_show(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)err;
    for (unsigned p = 1; p <= running_config->n_ports; p++) {
        print_port_config(ctx, p, out);
    }
    return 0;
}

static int
ctl_port_mod(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    const char *space = strchr(args, ' ');
    char number[16];
    unsigned port;

    if (!space || (size_t)(space - args) >= sizeof number) {
        return sp_err_set(err, "port-mod '%s': expected a port and %s", args,
                          PORT_MOD_WORDS);
    }
    snprintf(number, sizeof number, "%.*s", (int)(space - args), args);
    if (parse_port(number, &port, err)) {
        return -1;
    }
    for (size_t i = 0; i < sizeof port_mods / sizeof *port_mods; i++) {
        if (!strcmp(space + 1, port_mods[i].word)) {
            if (sp_of_channel_port_mod(ctx, port,
                                       port_mods[i].set ? port_mods[i].bit : 0,
                                       port_mods[i].bit, err)) {
                return -1;
            }
            print_port_config(ctx, port, out);
            return 0;
        }
    }
    return sp_err_set(err, "port-mod: '%s': expected %s", space + 1,
                      PORT_MOD_WORDS);
}

static int
ctl_pmd_perf_show(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)err;
    print_perf(ctx, running_config, out);
    return 0;
}

static int
ctl_pmd_perf_clear(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)out, (void)err;
    sp_dp_perf_clear(ctx);
    return 0;
}

static int
ctl_pmd_perf_enable(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    bool on = !strcmp(args, "on");

    if (!on && strcmp(args, "off")) {
        return sp_err_set(err, "pmd-perf-enable '%s': expected on or off",
                          args);
    }
    sp_dp_perf_enable(ctx, on);
    fprintf(out, "pmd profile: %s\n", on ? "on" : "off");
    return 0;
}

static int
ctl_stop(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)out, (void)ctx, (void)err;
    sp_run_request_stop();
    return 0;
}

static int
ctl_openflow_show(const char *args, FILE *out, void *ctx, struct sp_err *err)
{
    (void)args, (void)ctx, (void)err;
    sp_of_channel_show(out);
    return 0;
}

static const struct sp_ctl_command commands[] = {
    {"impl-show", "impl-show: the kernel x variant table", false,
     ctl_impl_show},
    {"impl-set",
     "impl-set SPEC: switch kernels, e.g. mfex=avx2 or autovalidate", true,
     ctl_impl_set},
    {"autovalidate-show",
     "autovalidate-show: comparisons and mismatches per kernel and variant",
     false, ctl_autovalidate_show},
    {"flow-add", "flow-add RULE: add a rule (docs/flow-syntax.md)", true,
     ctl_flow_add},
    {"flow-del",
     "flow-del [--strict] MATCH: delete every rule within MATCH, or with "
     "--strict the rule with exactly this match and priority "
     "(ovs-ofctl del-flows)",
     true, ctl_flow_del},
    {"flow-mod",
     "flow-mod [--strict] MATCH,actions=...: replace the actions of the "
     "rules selected as flow-del does (ovs-ofctl mod-flows)",
     true, ctl_flow_mod},
    {"flow-dump",
     "flow-dump: every rule with its counters, highest priority first, as "
     "ovs-ofctl dump-flows prints and flow-add takes it",
     false, ctl_flow_dump},
    {"counters-show", "counters-show: port, NIC and PMD counters", false,
     ctl_counters_show},
    {"counters-clear", "counters-clear: zero every counter", false,
     ctl_counters_clear},
    {"port-xstats", "port-xstats N: port N's driver extended counters", true,
     ctl_port_xstats},
    {"port-show", "port-show: each port's link and OpenFlow config", false,
     ctl_port_show},
    {"port-mod",
     "port-mod N up|down|receive|no-receive|forward|no-forward|packet-in|"
     "no-packet-in: set port N's config, as OpenFlow PORT_MOD and ovs-ofctl "
     "mod-port do",
     true, ctl_port_mod},
    {"pmd-perf-show",
     "pmd-perf-show: cycles per packet by stage, per PMD thread", false,
     ctl_pmd_perf_show},
    {"pmd-perf-clear", "pmd-perf-clear: zero the profile", false,
     ctl_pmd_perf_clear},
    {"pmd-perf-enable",
     "pmd-perf-enable on|off: time every burst's stages or not", true,
     ctl_pmd_perf_enable},
    {"openflow-show",
     "openflow-show: the OpenFlow connections, their roles, each "
     "controller's state",
     false, ctl_openflow_show},
    {"stop", "stop: stop forwarding and exit", false, ctl_stop},
};

int
sp_run_control_start(struct sp_dp *dp, const struct sp_dp_config *config,
                     struct sp_err *err)
{
    running_dp = dp;
    running_config = config;
    return sp_ctl_start(commands, sizeof commands / sizeof *commands, dp, err);
}

/* Puts one counter named "<thing><index>_<field>". */
static void
put_counter(sp_io_telemetry_put *put, void *reply, const char *thing,
            unsigned index, const char *field, uint64_t value)
{
    char name[64];

    snprintf(name, sizeof name, "%s%u_%s", thing, index, field);
    put(reply, name, value);
}

static void
telemetry_ports(sp_io_telemetry_put *put, void *reply)
{
    for (unsigned p = 1; p <= running_config->n_ports; p++) {
        struct sp_dp_port_stats s;
        struct sp_io_nic_stats nic;

        sp_dp_port_stats(running_dp, p, &s);
        put_counter(put, reply, "port", p, "rx", s.rx);
        put_counter(put, reply, "port", p, "tx", s.tx);
        put_counter(put, reply, "port", p, "packet_in", s.packet_in);
        put_counter(put, reply, "port", p, "packet_out", s.packet_out);
        sp_io_nic_stats(p, &nic);
        put_counter(put, reply, "port", p, "rx_missed", nic.rx_missed);
        put_counter(put, reply, "port", p, "rx_errors", nic.rx_errors);
        put_counter(put, reply, "port", p, "rx_nombuf", nic.rx_nombuf);
        put_counter(put, reply, "port", p, "tx_errors", nic.tx_errors);
        for (unsigned r = 0; r < SP_DP_DROP_COUNT; r++) {
            char field[32];

            snprintf(field, sizeof field, "drop_%s", sp_dp_drop_name(r));
            put_counter(put, reply, "port", p, field, s.drops[r]);
        }
    }
}

static void
telemetry_pmds(sp_io_telemetry_put *put, void *reply)
{
    for (unsigned t = 0; t < running_config->n_pmds; t++) {
        struct sp_dp_pmd_stats s;

        sp_dp_pmd_stats(running_dp, t, &s);
        put_counter(put, reply, "pmd", t, "packets", s.packets);
        put_counter(put, reply, "pmd", t, "emc_hits", s.emc_hits);
        put_counter(put, reply, "pmd", t, "emc_bypassed", s.emc_bypassed);
        put_counter(put, reply, "pmd", t, "classifier_hits",
                    s.classifier_hits);
        put_counter(put, reply, "pmd", t, "misses", s.misses);
        put_counter(put, reply, "pmd", t, "busy_cycles", s.busy_cycles);
    }
}

static void
telemetry_pmd_perf(sp_io_telemetry_put *put, void *reply)
{
    put(reply, "enabled", sp_dp_perf_enabled(running_dp));
    for (unsigned t = 0; t < running_config->n_pmds; t++) {
        struct sp_dp_pmd_perf p;

        sp_dp_pmd_perf(running_dp, t, &p);
        put_counter(put, reply, "pmd", t, "packets", p.packets);
        put_counter(put, reply, "pmd", t, "batches", p.batches);
        put_counter(put, reply, "pmd", t, "busy_cycles", p.busy_cycles);
        put_counter(put, reply, "pmd", t, "idle_cycles", p.idle_cycles);
        for (unsigned s = 0; s < SP_DP_STAGE_COUNT; s++) {
            char field[32];

            snprintf(field, sizeof field, "%s_cycles", sp_dp_stage_name(s));
            put_counter(put, reply, "pmd", t, field, p.stage_cycles[s]);
        }
    }
}

void
sp_run_telemetry_register(void)
{
    sp_io_telemetry_register("/simdpath/ports",
                             "Per-port counters. No parameters",
                             telemetry_ports);
    sp_io_telemetry_register("/simdpath/pmds",
                             "Per-PMD-thread counters. No parameters",
                             telemetry_pmds);
    sp_io_telemetry_register("/simdpath/pmd_perf",
                             "Per-PMD-thread profile by stage (cycles). "
                             "No parameters",
                             telemetry_pmd_perf);
}
