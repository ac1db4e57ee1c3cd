/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simdpath run: start DPDK, open the ports, load the rules, run the PMD
 * threads and the control socket until stopped, then report.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/control.h"
#include "cli/openflow.h"
#include "simdpath/datapath.h"
#include "simdpath/io.h"

#define DEMO_DIR "simdpath-demo"

static const char run_usage[] =
    "Usage: simdpath [OPTION]... run [RUN OPTION]... [-- EAL ARG...]\n"
    "Forwards packets between DPDK ports by flow rules.\n"
    "With no --port and no --flows it runs the bundled demo: the traffic of\n"
    "examples/traffic.pcap enters port 1, examples/flows.txt decides, and\n"
    "what ports 1 and 2 send is written to " DEMO_DIR
    "/port1.pcap and\n" DEMO_DIR
    "/port2.pcap; it stops when the capture is done.\n"
    "\n"
    "Run options:\n"
    "  --port DEVICE          add a port, a device given once; ports are\n"
    "                         numbered 1, 2, ... in order: a PCI address\n"
    "                         (0000:3b:00.0) or a DPDK virtual device\n"
    "                         (net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap;\n"
    "                         net_ring0; net_null0; ...);\n"
    "                         an rx_pcap capture must be of Ethernet, as\n"
    "                         for parse-pcap, a tx_pcap one creatable\n"
    "  --flows FILE           flow rules, one per line\n"
    "                         (docs/flow-syntax.md)\n"
    "  --pmd-threads N        packet polling threads (default 1, at most\n"
    "                         64; each takes a core, and their packet pool\n"
    "                         may take half of DPDK's memory, or without\n"
    "                         hugepages and PCI ports the memory\n"
    "                         available); each port gets a receive queue\n"
    "                         per thread, spread by RSS over IPv4/IPv6\n"
    "                         TCP/UDP\n"
    "  --pmd-cpus LIST        the CPUs of the PMD threads, one each, in\n"
    "                         order (as 2,3 or 2-5); sets --pmd-threads,\n"
    "                         or must give that many CPUs\n"
    "  --main-cpu N           the CPU of the main (control) thread\n"
    "                         (default the lowest CPU no PMD thread has)\n"
    "  --mtu N                the ports' MTU, 68 to 9000 (default: the\n"
    "                         devices'); refused if a device cannot take\n"
    "                         it\n"
    "  --emc-entries N        exact-match cache entries per thread (default\n"
    "                         8192; 0 disables the cache); bypassed while\n"
    "                         it answers under 1 lookup in 8 or there is\n"
    "                         one rule\n"
    "  --emc-insert-inv-prob N\n"
    "                         insert one cache miss in N (default 100;\n"
    "                         bypassed, every miss of the bursts that\n"
    "                         still look it up)\n"
    "  --mbufs N              packet buffers (default: what the ports\n"
    "                         need: each queue's descriptors and bursts,\n"
    "                         and a buffer per packet of every capture a\n"
    "                         net_pcap port replays with infinite_rx=1)\n"
    "  --rxd N, --txd N       descriptors per receive and transmit queue\n"
    "                         (default 1024; a power of two, 32 to 32768)\n"
    "  --pmd-perf             profile every burst from the start: cycles\n"
    "                         per packet by stage (ctl pmd-perf-show; off\n"
    "                         by default, ctl pmd-perf-enable on)\n"
    "  --ctl PATH             control socket (default $SIMDPATH_CTL,\n"
    "                         else $XDG_RUNTIME_DIR/simdpath.ctl, else for\n"
    "                         root /run/simdpath/simdpath.ctl); refused if\n"
    "                         PATH holds anything but a socket nobody\n"
    "                         serves, or others may write its directory\n"
    "  --openflow ptcp:PORT[:IP]\n"
    "                         serve OpenFlow 1.3 on this TCP port (IP\n"
    "                         default 127.0.0.1; port 0: the kernel\n"
    "                         chooses, the log names it): rules,\n"
    "                         PACKET_IN from actions=controller,\n"
    "                         PACKET_OUT\n"
    "                         (docs/openflow.md); pssl:PORT[:IP]: over TLS\n"
    "  --controller tcp:HOST:PORT\n"
    "                         connect to an OpenFlow controller (HOST an\n"
    "                         address or a name), again after 1 to 8 s\n"
    "                         when the connection ends;\n"
    "                         up to 8 times: a cluster, whose master\n"
    "                         ROLE_REQUEST elects; ssl:HOST:PORT: over TLS\n"
    "  --private-key FILE, --certificate FILE, --ca-cert FILE\n"
    "                         for ssl: and pssl:, PEM: this switch's key\n"
    "                         (without a passphrase) and certificate, and\n"
    "                         the CA that must have signed the peer's\n"
    "                         (TLS 1.2 or later)\n"
    "  --ssl-protocols LIST   TLSv1.2 and/or TLSv1.3, comma-separated\n"
    "                         (default both)\n"
    "  --ssl-ciphers LIST     TLS 1.2's ciphers, in OpenSSL's syntax\n"
    "                         (default OpenSSL's)\n"
    "  --fail-mode secure     rules stay while no controller is connected\n"
    "                         (the only mode)\n"
    "  --inactivity-probe MS  with nothing from a controller for MS\n"
    "                         milliseconds, send it an echo request;\n"
    "                         with no reply in as long again, connect\n"
    "                         anew (default 5000, as OVS; 0: never)\n"
    "  --duration SECONDS     stop after this long (default 0: no limit)\n"
    "  --exit-when-idle MS    stop once no packet arrived for MS\n"
    "                         milliseconds (default 0: never; the demo\n"
    "                         uses 500)\n"
    "  --config FILE          read options from FILE first: one long\n"
    "                         option a line, 'port net_null0' or\n"
    "                         'pmd-threads = 2', '#' starts a comment;\n"
    "                         the command line's options apply after\n"
    "                         them (a repeated --port adds ports); an\n"
    "                         error names FILE:LINE:COL\n"
    "  --log-level LEVEL      error, warning, info (default) or debug,\n"
    "                         for simdpath's messages and DPDK's\n"
    "  --impl SPEC, --max-simd BITS\n"
    "                         as before the command\n"
    "  -h, --help             show this help\n"
    "\n"
    "Arguments after -- go to DPDK's EAL as they are. simdpath gives EAL\n"
    "one core per PMD thread plus one for itself (the lowest CPUs this\n"
    "process may run on, unless --pmd-cpus and --main-cpu say), the\n"
    "ports, and --no-huge\n"
    "-m 512 --no-shconf when no hugepages are free (it says so); it refuses\n"
    "EAL's own cores (-l, -c, --lcores) and a --proc-type but primary.\n"
    "Everything it can check is checked before DPDK starts (exit 2).\n"
    "Ports on Linux interfaces (net_af_packet) need transmit checksum\n"
    "offload off on the senders: ethtool -K DEV tx off (README).\n"
    "\n"
    "SIGINT, SIGTERM, SIGHUP and SIGQUIT stop it, even during DPDK's\n"
    "start-up (it stops once started): the counters are printed, the ports\n"
    "closed, the socket removed. A second one exits at once with status\n"
    "128 + its number, without the report.\n";

struct run_options {
    const char *ports[SP_DP_MAX_PORTS];
    unsigned n_ports;
    const char *flows;
    const char *ctl_path;
    struct sp_of_channel_config openflow;
    struct sp_dp_config dp;
    const char *pmd_cpus;
    long main_cpu; /* -1: not given */
    unsigned mtu;  /* 0: not given */
    bool pmds_given;
    double duration;
    unsigned idle_ms;
    unsigned mbufs, rxd, txd; /* 0: sized from the ports */
    uint64_t held;            /* mbufs replayed captures keep */
    bool demo;
    int eal_argc;
    char **eal_argv;
};

/* The signal that asked to stop, 0 until one did. */
static volatile sig_atomic_t stop_signal;
/* ctl stop asked: not a signal, so that one after it (or a second ctl
 * stop) does not force the exit. */
static volatile sig_atomic_t stop_requested;
/* The control socket while it is up, for a forced exit to remove. */
static const char *volatile live_socket;

/* The first stop signal stops forwarding, which ends in the report; a
 * second one, for a shutdown that does not end, exits at once with
 * 128 + its number, as a shell reports death by that signal. */
static void
on_signal(int sig)
{
    static const char msg[] = "simdpath: second stop signal: exiting at "
                              "once, without the report\n";
    const char *socket = live_socket;

    if (!stop_signal) {
        stop_signal = sig;
        return;
    }
    if (socket) {
        unlink(socket);
    }
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* Nothing left to tell it to. */
    }
    _exit(128 + sig);
}

void
sp_run_request_stop(void)
{
    stop_requested = 1;
}

/* Closes the control socket and removes it, after which a forced exit
 * has none to remove. */
static void
stop_control(void)
{
    sp_ctl_stop();
    live_socket = NULL;
}

/* From the start, so that one during DPDK's start-up stops simdpath
 * once started instead of killing it: SIGHUP and SIGQUIT too, since an
 * operator who sends them wants it stopped, and stopped cleanly. */
static const struct {
    int number;
    const char *name;
} stop_signals[] = {
    {SIGINT, "SIGINT"},
    {SIGTERM, "SIGTERM"},
    {SIGHUP, "SIGHUP"},
    {SIGQUIT, "SIGQUIT"},
};

static void
catch_stop_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* DPDK's start-up need not see EINTR; the wait loop sleeps short. */
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
        sigaction(stop_signals[i].number, &sa, NULL);
    }
}

static int
parse_options(int argc, char **argv, struct run_options *o)
{
    /* After the common options' codes (cli.h). */
    enum {
        OPT_PORT = SP_OPT_MAX_SIMD + 1,
        OPT_FLOWS,
        OPT_PMDS,
        OPT_EMC,
        OPT_EMC_PROB,
        OPT_CTL,
        OPT_DURATION,
        OPT_IDLE,
        OPT_CONFIG,
        OPT_LOG_LEVEL,
        OPT_OPENFLOW,
        OPT_CONTROLLER,
        OPT_FAIL_MODE,
        OPT_PROBE,
        OPT_TLS_KEY,
        OPT_TLS_CERT,
        OPT_TLS_CA,
        OPT_SSL_PROTOCOLS,
        OPT_SSL_CIPHERS,
        OPT_PMD_CPUS,
        OPT_MAIN_CPU,
        OPT_MTU,
        OPT_PERF,
        OPT_MBUFS,
        OPT_RXD,
        OPT_TXD
    };
    static const struct option options[] = {
        {"port", required_argument, NULL, OPT_PORT},
        {"flows", required_argument, NULL, OPT_FLOWS},
        {"pmd-threads", required_argument, NULL, OPT_PMDS},
        {"pmd-cpus", required_argument, NULL, OPT_PMD_CPUS},
        {"main-cpu", required_argument, NULL, OPT_MAIN_CPU},
        {"mtu", required_argument, NULL, OPT_MTU},
        {"emc-entries", required_argument, NULL, OPT_EMC},
        {"emc-insert-inv-prob", required_argument, NULL, OPT_EMC_PROB},
        {"ctl", required_argument, NULL, OPT_CTL},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"exit-when-idle", required_argument, NULL, OPT_IDLE},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"openflow", required_argument, NULL, OPT_OPENFLOW},
        {"controller", required_argument, NULL, OPT_CONTROLLER},
        {"fail-mode", required_argument, NULL, OPT_FAIL_MODE},
        {"inactivity-probe", required_argument, NULL, OPT_PROBE},
        {"private-key", required_argument, NULL, OPT_TLS_KEY},
        {"certificate", required_argument, NULL, OPT_TLS_CERT},
        {"ca-cert", required_argument, NULL, OPT_TLS_CA},
        {"ssl-protocols", required_argument, NULL, OPT_SSL_PROTOCOLS},
        {"ssl-ciphers", required_argument, NULL, OPT_SSL_CIPHERS},
        {"pmd-perf", no_argument, NULL, OPT_PERF},
        {"mbufs", required_argument, NULL, OPT_MBUFS},
        {"rxd", required_argument, NULL, OPT_RXD},
        {"txd", required_argument, NULL, OPT_TXD},
        {"help", no_argument, NULL, 'h'},
        SP_CLI_COMMON_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    unsigned long v;
    int opt, common;
    struct sp_err err;

    o->dp.n_pmds = 1;
    o->main_cpu = -1;
    o->dp.emc_entries = SP_DP_DEFAULT_EMC_ENTRIES;
    o->dp.emc_insert_inv_prob = SP_DP_DEFAULT_EMC_INV_PROB;
    o->openflow.probe_ms = SP_OF_PROBE_DEFAULT_MS;
    o->ctl_path = sp_ctl_default_path();
    if (sp_cli_config_expand(&argc, &argv, "h", options, OPT_CONFIG)) {
        return -1;
    }
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        sp_cli_config_locate(optind - 1);
        common = sp_cli_common_option(opt, optarg);
        if (common) {
            if (common < 0) {
                return -1;
            }
            continue;
        }
        switch (opt) {
        case OPT_PORT:
            if (o->n_ports == SP_DP_MAX_PORTS) {
                sp_cli_error("--port", "at most %d ports", SP_DP_MAX_PORTS);
                return -1;
            }
            o->ports[o->n_ports++] = optarg;
            break;
        case OPT_FLOWS:
            o->flows = optarg;
            break;
        case OPT_PMDS:
            if (sp_cli_parse_uint("--pmd-threads", optarg, SP_DP_MAX_PMDS,
                                  &v)) {
                return -1;
            }
            if (v == 0) {
                sp_cli_error("--pmd-threads", "at least 1 thread");
                return -1;
            }
            o->dp.n_pmds = (unsigned)v;
            o->pmds_given = true;
            break;
        case OPT_PMD_CPUS:
            o->pmd_cpus = optarg;
            break;
        case OPT_MAIN_CPU:
            if (sp_cli_parse_uint("--main-cpu", optarg, 65535, &v)) {
                return -1;
            }
            o->main_cpu = (long)v;
            break;
        case OPT_MTU:
            if (sp_cli_parse_uint("--mtu", optarg, SP_IO_MTU_MAX, &v)) {
                return -1;
            }
            if (v < SP_IO_MTU_MIN) {
                sp_cli_error("--mtu", "%lu is below %d, IPv4's minimum", v,
                             SP_IO_MTU_MIN);
                return -1;
            }
            o->mtu = (unsigned)v;
            break;
        case OPT_EMC:
            if (sp_cli_parse_uint("--emc-entries", optarg, 1u << 24, &v)) {
                return -1;
            }
            o->dp.emc_entries = (uint32_t)v;
            break;
        case OPT_EMC_PROB:
            if (sp_cli_parse_uint("--emc-insert-inv-prob", optarg, UINT32_MAX,
                                  &v)) {
                return -1;
            }
            o->dp.emc_insert_inv_prob = (uint32_t)v;
            break;
        case OPT_CTL:
            o->ctl_path = optarg;
            break;
        case OPT_DURATION:
            if (sp_cli_parse_uint("--duration", optarg, 86400 * 365, &v)) {
                return -1;
            }
            o->duration = (double)v;
            break;
        case OPT_IDLE:
            if (sp_cli_parse_uint("--exit-when-idle", optarg, 3600 * 1000,
                                  &v)) {
                return -1;
            }
            o->idle_ms = (unsigned)v;
            break;
        case OPT_CONFIG:
            break; /* read by sp_cli_config_expand */
        case OPT_LOG_LEVEL:
            if (sp_cli_set_log_level(optarg)) {
                return -1;
            }
            sp_io_set_log_level(sp_cli_log_level());
            break;
        case OPT_OPENFLOW:
        case OPT_CONTROLLER:
        case OPT_FAIL_MODE:
        case OPT_PROBE:
        case OPT_TLS_KEY:
        case OPT_TLS_CERT:
        case OPT_TLS_CA:
        case OPT_SSL_PROTOCOLS:
        case OPT_SSL_CIPHERS:
            if (opt == OPT_OPENFLOW
                    ? sp_of_channel_parse_listen(optarg, &o->openflow, &err)
                : opt == OPT_CONTROLLER ? sp_of_channel_parse_controller(
                                              optarg, &o->openflow, &err)
                : opt == OPT_PROBE
                    ? sp_of_channel_parse_probe(optarg, &o->openflow, &err)
                : opt == OPT_FAIL_MODE
                    ? sp_of_channel_parse_fail_mode(optarg, &err)
                    : sp_of_channel_parse_tls(
                          opt == OPT_TLS_KEY         ? "private-key"
                          : opt == OPT_TLS_CERT      ? "certificate"
                          : opt == OPT_TLS_CA        ? "ca-cert"
                          : opt == OPT_SSL_PROTOCOLS ? "ssl-protocols"
                                                     : "ssl-ciphers",
                          optarg, &o->openflow, &err)) {
                sp_cli_error("run", "%s", err.msg);
                return -1;
            }
            break;
        case OPT_PERF:
            o->dp.profile = true;
            break;
        case OPT_MBUFS:
            if (sp_cli_parse_uint("--mbufs", optarg, UINT32_MAX - 1, &v)) {
                return -1;
            }
            if (v < 1024) {
                sp_cli_error("--mbufs", "at least 1024 buffers");
                return -1;
            }
            o->mbufs = (unsigned)v;
            break;
        case OPT_RXD:
        case OPT_TXD:
            if (sp_cli_parse_uint(opt == OPT_RXD ? "--rxd" : "--txd", optarg,
                                  32768, &v)) {
                return -1;
            }
            if (v < 32 || (v & (v - 1))) {
                sp_cli_error(opt == OPT_RXD ? "--rxd" : "--txd",
                             "%lu: a power of two from 32 to 32768", v);
                return -1;
            }
            *(opt == OPT_RXD ? &o->rxd : &o->txd) = (unsigned)v;
            break;
        case 'h':
            fputs(run_usage, stdout);
            exit(SP_EXIT_OK);
        default:
            fputs("Try 'simdpath run --help' for more information.\n", stderr);
            return -1;
        }
    }
    sp_cli_set_origin(NULL);
    o->eal_argc = argc - optind;
    o->eal_argv = argv + optind;
    if (o->eal_argc && strcmp(argv[optind - 1], "--")) {
        sp_cli_error("run",
                     "unexpected argument '%s' (EAL arguments go "
                     "after --)",
                     argv[optind]);
        return -1;
    }
    return 0;
}

/* The bundled example files: installed beside the program (prefix/bin and
 * prefix/share, also in a package unpacked elsewhere), else next to the
 * sources it was built from, else in ./examples. */
static const char *
examples_dir(void)
{
    static char installed[PATH_MAX];
    const char *candidates[] = {installed, SP_EXAMPLES_DIR, "examples"};
    char exe[PATH_MAX], *slash;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct stat st;

    exe[len > 0 ? len : 0] = '\0';
    slash = strrchr(exe, '/');
    if (slash) {
        snprintf(slash, sizeof exe - (size_t)(slash - exe), "/%s",
                 SP_EXAMPLES_INSTALLED);
        if (!realpath(exe, installed)) {
            installed[0] = '\0';
        }
    }
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        char path[PATH_MAX];

        snprintf(path, sizeof path, "%s/traffic.pcap", candidates[i]);
        if (candidates[i][0] && !stat(path, &st)) {
            return candidates[i];
        }
    }
    return NULL;
}

static int
setup_demo(struct run_options *o)
{
    static char flows[4096], port1[4096], port2[4096];
    const char *dir = examples_dir();

    if (!dir) {
        sp_cli_error("run",
                     "the bundled examples are missing (looked in "
                     "the program's %s, %s and ./examples); give --port "
                     "and --flows",
                     SP_EXAMPLES_INSTALLED, SP_EXAMPLES_DIR);
        return -1;
    }
    if (mkdir(DEMO_DIR, 0755) && errno != EEXIST) {
        sp_cli_error("run", "cannot create %s: %s", DEMO_DIR, strerror(errno));
        return -1;
    }
    snprintf(flows, sizeof flows, "%s/flows.txt", dir);
    snprintf(port1, sizeof port1,
             "net_pcap0,rx_pcap=%s/traffic.pcap,tx_pcap=" DEMO_DIR
             "/port1.pcap",
             dir);
    snprintf(port2, sizeof port2, "net_pcap1,tx_pcap=" DEMO_DIR "/port2.pcap");
    o->flows = flows;
    o->ports[o->n_ports++] = port1;
    o->ports[o->n_ports++] = port2;
    if (!o->idle_ms) {
        o->idle_ms = 500;
    }
    o->demo = true;
    sp_cli_log(SP_LOG_INFO,
               "demo: %s/traffic.pcap in through port 1, rules %s", dir,
               flows);
    return 0;
}

/* Every --port names a device, each its own: DPDK would open the second
 * of two as the first again. */
static int
check_ports(const struct run_options *o)
{
    char names[SP_DP_MAX_PORTS][256];

    for (unsigned p = 0; p < o->n_ports; p++) {
        sp_io_device_name(o->ports[p], names[p], sizeof names[p]);
        if (!names[p][0]) {
            sp_cli_error("--port", "'%s' names no device", o->ports[p]);
            return -1;
        }
        for (unsigned q = 0; q < p; q++) {
            if (!strcmp(names[p], names[q])) {
                sp_cli_error("--port",
                             "port %u (%s) is port %u's device (%s) again",
                             p + 1, o->ports[p], q + 1, names[q]);
                return -1;
            }
        }
    }
    return 0;
}

/* Whether the capture a pcap port is to write can be created: not a
 * directory, in a directory that exists and is writable. */
static int
check_writable(const char *path, struct sp_err *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    struct stat st;

    if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
        return sp_err_set(err, "%s: a directory, not a file", path);
    }
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1,
             slash ? path : ".");
    if (access(dir, W_OK)) {
        return sp_err_set(err, "%s: cannot write in %s: %s", path, dir,
                          strerror(errno));
    }
    return 0;
}

/* The captures of pcap ports ("net_pcap0,rx_pcap=FILE,tx_pcap=FILE"),
 * checked before DPDK opens them: one to read must be of Ethernet, as
 * parse-pcap requires, one to write must be possible to create. */
static int
check_port_captures(struct run_options *o)
{
    static const char rx[] = "rx_pcap=", tx[] = "tx_pcap=";

    for (unsigned p = 0; p < o->n_ports; p++) {
        const char *arg = strchr(o->ports[p], ',');

        if (strncmp(o->ports[p], "net_pcap", 8)) {
            continue;
        }
        for (; arg; arg = strchr(arg, ',')) {
            char path[4096];
            size_t len = strcspn(++arg, ",");
            bool is_rx = !strncmp(arg, rx, strlen(rx));
            struct sp_err err;
            uint64_t packets = 0;

            if (!is_rx && strncmp(arg, tx, strlen(tx))) {
                continue;
            }
            snprintf(path, sizeof path, "%.*s", (int)(len - strlen(rx)),
                     arg + strlen(rx));
            if (!path[0] ? sp_err_set(&err, "%.8s names no file", arg)
                : is_rx  ? sp_cli_pcap_check(path, &packets, &err)
                         : check_writable(path, &err)) {
                sp_cli_error("run", "port %u (%s): %s", p + 1, o->ports[p],
                             err.msg);
                return -1;
            }
            /* The driver keeps the whole capture in mbufs, per queue. */
            if (is_rx && strstr(o->ports[p], "infinite_rx=1")) {
                o->held += packets * o->dp.n_rxq;
            }
        }
    }
    return 0;
}

static struct sp_io_ops dpdk_io = {
    .rx = sp_io_rx,
    .tx = sp_io_tx,
    .free = sp_io_free,
    .clone = sp_io_clone,
    .tsc = sp_io_tsc,
    .alloc = sp_io_alloc,
};

struct pmd_launch {
    struct sp_dp *dp;
    unsigned pmd;
};

static int
pmd_thread(void *arg)
{
    struct pmd_launch *l = arg;

    return sp_dp_pmd_run(l->dp, l->pmd);
}

static double
now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t
total_rx(struct sp_dp *dp, unsigned n_ports)
{
    uint64_t rx = 0;

    for (unsigned p = 1; p <= n_ports; p++) {
        struct sp_dp_port_stats s;

        sp_dp_port_stats(dp, p, &s);
        rx += s.rx;
    }
    return rx;
}

/* Waits on the main lcore for a signal, the duration or idleness. */
static void
wait_for_stop(struct sp_dp *dp, const struct run_options *o)
{
    double start = now_seconds(), last_change = start;
    double last_maintenance = start;
    uint64_t last_rx = 0;

    while (!stop_signal && !stop_requested) {
        double now = now_seconds();
        uint64_t rx = total_rx(dp, o->n_ports);

        if (now - last_maintenance >= 1.0) {
            sp_dp_maintain(dp);
            last_maintenance = now;
        }
        if (rx != last_rx) {
            last_rx = rx;
            last_change = now;
        }
        if (o->duration > 0 && now - start >= o->duration) {
            break;
        }
        if (o->idle_ms && (now - last_change) * 1000 >= o->idle_ms) {
            break;
        }
        usleep(10000);
    }
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
        if (stop_signal == stop_signals[i].number) {
            sp_cli_log(SP_LOG_INFO,
                       "%s: stopping (send it again to exit at once)",
                       stop_signals[i].name);
        }
    }
}

/* Runs the PMD threads on the EAL workers until a stop condition. */
static int
serve(struct sp_dp *dp, const struct run_options *o)
{
    struct pmd_launch launches[SP_DP_MAX_PMDS];
    struct sp_err err;

    if (sp_run_control_start(dp, &o->dp, &err)) {
        sp_cli_error("run", "%s", err.msg);
        return SP_EXIT_FAILURE;
    }
    sp_run_telemetry_register();
    for (unsigned p = 0; p < o->dp.n_pmds; p++) {
        launches[p] = (struct pmd_launch){dp, p};
        if (sp_io_launch(p, pmd_thread, &launches[p])) {
            sp_cli_error("run", "cannot start PMD thread %u", p);
            sp_dp_stop(dp);
            sp_io_wait_workers();
            stop_control();
            return SP_EXIT_FAILURE;
        }
    }
    /* The controller's first BARRIER must find PMD 0 running, to wait
     * for the PACKET_OUTs before it. */
    sp_dp_wait_running(dp);
    if (sp_of_channel_start(dp, &o->dp, &err)) {
        sp_cli_error("run", "%s", err.msg);
        sp_dp_stop(dp);
        sp_io_wait_workers();
        stop_control();
        return SP_EXIT_FAILURE;
    }
    sp_cli_log(SP_LOG_INFO,
               "forwarding on %u port(s) with %u PMD thread(s); control "
               "socket %s",
               o->n_ports, o->dp.n_pmds, o->ctl_path);
    wait_for_stop(dp, o);
    /* The PMD threads first: they may still write to the channel's
     * eventfd, and the channel to their queue. */
    sp_dp_stop(dp);
    sp_io_wait_workers();
    sp_of_channel_stop();
    sp_dp_controller_drain(dp);
    stop_control();
    return SP_EXIT_OK;
}

int
sp_cmd_run(int argc, char **argv)
{
    struct run_options o;
    struct sp_err err;
    struct sp_io_eal eal;
    struct sp_io_cpus cpus;
    int rc = SP_EXIT_OK;
    bool operator_memory = false;
    struct sp_dp *dp;

    memset(&o, 0, sizeof o);
    catch_stop_signals();
    if (parse_options(argc, argv, &o)) {
        return SP_EXIT_USAGE;
    }
    if (!o.n_ports && !o.flows && setup_demo(&o)) {
        return SP_EXIT_USAGE;
    }
    if (!o.n_ports || !o.flows) {
        sp_cli_error("run", "%s",
                     !o.n_ports ? "no --port given" : "no --flows given");
        return SP_EXIT_USAGE;
    }
    if (sp_io_cpus_pick(o.pmd_cpus, o.main_cpu, &o.dp.n_pmds, o.pmds_given,
                        &cpus, &err)) {
        sp_cli_error("run", "%s", err.msg);
        return SP_EXIT_USAGE;
    }
    sp_io_set_mtu(o.mtu);
    o.dp.n_ports = o.n_ports;
    dpdk_io.headroom = sp_io_headroom();
    o.dp.n_rxq = o.dp.n_pmds;
    if (sp_io_eal_check(o.eal_argc, o.eal_argv, &operator_memory, &err)) {
        sp_cli_error("run", "%s", err.msg);
        return SP_EXIT_USAGE;
    }
    if (check_ports(&o) || check_port_captures(&o)) {
        return SP_EXIT_USAGE;
    }
    o.rxd = o.rxd ? o.rxd : SP_IO_DEFAULT_RXD;
    o.txd = o.txd ? o.txd : SP_IO_DEFAULT_TXD;
    if (!o.mbufs) {
        o.mbufs = sp_io_pool_mbufs(o.n_ports, o.dp.n_rxq, o.dp.n_pmds, o.rxd,
                                   o.txd, o.held);
    }
    if (sp_io_eal_pool_check(o.mbufs, operator_memory, o.ports, o.n_ports,
                             &err)) {
        sp_cli_error("run", "%u PMD threads on %u port(s) %s", o.dp.n_pmds,
                     o.n_ports, err.msg);
        return SP_EXIT_USAGE;
    }
    /* Rules are read before DPDK starts: a bad file starts nothing. */
    dp = sp_dp_create(&o.dp, &dpdk_io, &err);
    if (!dp || sp_dp_flows_load(dp, o.flows, &err)) {
        char text[SP_ERR_TEXT_LEN];

        sp_cli_error("run", "%s",
                     sp_err_text(&err, o.flows, text, sizeof text));
        sp_dp_destroy(dp);
        return SP_EXIT_USAGE;
    }
    /* So are the control socket and the OpenFlow one: every problem with
     * their addresses is found before DPDK starts. */
    if (sp_ctl_open(o.ctl_path, &err) ||
        sp_of_channel_open(&o.openflow, &err)) {
        sp_ctl_stop();
        sp_cli_error("run", "%s", err.msg);
        sp_dp_destroy(dp);
        return SP_EXIT_USAGE;
    }
    live_socket = o.ctl_path;
    if (o.openflow.listen) {
        sp_cli_log(SP_LOG_INFO, "OpenFlow: listening on %s port %u",
                   o.openflow.listen_ip, sp_of_channel_listen_port());
    }
    sp_io_eal_args(&eal, o.dp.n_pmds, &cpus, o.ports, o.n_ports, o.eal_argc,
                   o.eal_argv);
    if (cpus.shared) {
        sp_cli_log(SP_LOG_WARNING,
                   "%u PMD thread(s) and the main thread share CPUs "
                   "(lcore@CPU: %s): expect less than full speed",
                   o.dp.n_pmds, eal.cores);
    }
    if (eal.no_huge) {
        sp_cli_log(SP_LOG_INFO,
                   "no free hugepages: running DPDK with --no-huge -m %d "
                   "--no-shconf",
                   SP_IO_NO_HUGE_MB);
    }
    if (sp_io_init(eal.argc, eal.argv, o.ports, o.n_ports, &err)) {
        sp_cli_error("run", "%s", err.msg);
        stop_control();
        sp_dp_destroy(dp);
        sp_io_cleanup();
        return SP_EXIT_FAILURE;
    }
    if (sp_io_worker_count() < o.dp.n_pmds) {
        sp_cli_error("run",
                     "%u PMD threads need %u cores besides the main "
                     "one; EAL has %u",
                     o.dp.n_pmds, o.dp.n_pmds, sp_io_worker_count());
        rc = SP_EXIT_FAILURE;
    } else if (sp_io_start_ports(o.dp.n_rxq, o.dp.n_pmds, o.mbufs, o.rxd,
                                 o.txd, &err)) {
        sp_cli_error("run", "%s", err.msg);
        rc = SP_EXIT_FAILURE;
    }
    for (unsigned p = 1; rc == SP_EXIT_OK && p <= o.n_ports; p++) {
        for (unsigned q = 0; q < o.dp.n_rxq; q++) {
            sp_io_numa_check(p, q, sp_dp_queue_pmd(&o.dp, p, q));
        }
    }
    if (rc == SP_EXIT_OK) {
        rc = serve(dp, &o);
        if (sp_run_report(dp, &o.dp, stdout) && rc == SP_EXIT_OK) {
            /* Traffic got scalar's results; the operator gets told. */
            rc = SP_EXIT_FAILURE;
        }
        if (o.demo) {
            printf("output: " DEMO_DIR "/port1.pcap, " DEMO_DIR
                   "/port2.pcap (tcpdump -r reads them)\n");
        }
        sp_io_stop_ports();
        printf("mbufs in use after the ports closed: %u\n",
               sp_io_mbufs_in_use());
        if (sp_io_mbufs_in_use() && rc == SP_EXIT_OK) {
            rc = SP_EXIT_FAILURE;
        }
    }
    sp_of_channel_stop();
    stop_control();
    sp_dp_destroy(dp);
    sp_io_cleanup();
    return rc;
}
