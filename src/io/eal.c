/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What simdpath knows about DPDK's EAL before starting it, behind
 * include/simdpath/io.h: which operator arguments it cannot honour,
 * whether the packet pool fits EAL's memory, and the arguments it gives
 * EAL. Nothing here calls DPDK, so all of it is checked first.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdpath/io.h"

#define STR(x)  #x
#define XSTR(x) STR(x)

/* The number /proc/meminfo gives for 'field' (in kB for sizes); 0 when
 * it gives none. */
static unsigned long
meminfo(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "r");
    size_t len = strlen(field);
    char line[256];
    unsigned long value = 0;

    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, field, len) && line[len] == ':') {
            value = strtoul(line + len + 1, NULL, 10);
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return value;
}

/* Free hugepage memory in bytes; 0 when there is none. */
static uint64_t
hugepages_free(void)
{
    return (uint64_t)meminfo("HugePages_Free") * meminfo("Hugepagesize") *
           1024;
}

static bool
is_pci_address(const char *dev)
{
    unsigned dom, bus, slot, fn;
    char tail;

    return sscanf(dev, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &tail) == 4 ||
           sscanf(dev, "%x:%x.%x%c", &bus, &slot, &fn, &tail) == 3;
}

/* Whether a --port specification among n names a PCI device. */
static bool
any_pci(const char *const *ports, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (is_pci_address(ports[i])) {
            return true;
        }
    }
    return false;
}

/* Whether the long option "--name[=value]" (name_len bytes) is 'full'
 * as getopt reads it: any prefix of at least min_len bytes. */
static bool
long_option_is(const char *name, size_t name_len, const char *full,
               size_t min_len)
{
    return name_len >= min_len && name_len <= strlen(full) &&
           !strncmp(name, full, name_len);
}

int
sp_io_eal_check(int argc, char *const *argv, bool *memory, struct sp_err *err)
{
    /* EAL's short options that take a value. */
    static const char with_value[] = "abcdlLmnrs";
    static const char cores[] = "simdpath gives EAL its cores itself, one "
                                "per PMD thread and one more "
                                "(--pmd-threads, --pmd-cpus, --main-cpu)";

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *next;
        size_t len;

        next = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--")) {
            break;
        }
        if (a[0] != '-' || !a[1]) {
            continue;
        }
        if (a[1] == '-') {
            len = strcspn(a + 2, "=");
            if (long_option_is(a + 2, len, "lcores", 2)) {
                return sp_err_set(err, "EAL argument '%s': %s", a, cores);
            }
            if (long_option_is(a + 2, len, "proc-type", 1) &&
                strcmp(a[2 + len] ? a + 3 + len : next, "primary")) {
                return sp_err_set(err,
                                  "EAL argument '%s%s%s': simdpath runs as "
                                  "DPDK's primary process only",
                                  a, a[2 + len] ? "" : " ",
                                  a[2 + len] ? "" : next);
            }
            *memory |= long_option_is(a + 2, len, "socket-mem", 8);
            continue;
        }
        /* A cluster of short options ("-vl0-1"): up to one with a value,
         * which is the rest or the next argument. */
        for (const char *c = a + 1; *c; c++) {
            if (*c == 'l' || *c == 'c') {
                return sp_err_set(err, "EAL argument '%s': %s", a, cores);
            }
            *memory |= *c == 'm';
            if (strchr(with_value, *c)) {
                i += !c[1];
                break;
            }
        }
    }
    return 0;
}

int
sp_io_eal_pool_check(unsigned mbufs, bool operator_memory,
                     const char *const *ports, unsigned n_ports,
                     struct sp_err *err)
{
    uint64_t hugepages = hugepages_free();
    uint64_t memory = hugepages ? hugepages : (uint64_t)SP_IO_NO_HUGE_MB << 20;
    uint64_t need = sp_io_pool_bytes(mbufs), available;

    /* Virtual devices without hugepages: the pool is the process's own
     * memory, not EAL's (pool_create, src/io/port.c). */
    if (!hugepages && !any_pci(ports, n_ports)) {
        /* Memory the kernel can give without swapping. */
        available = (uint64_t)meminfo("MemAvailable") * 1024;
        if (!available || need <= available) {
            return 0;
        }
        return sp_err_set(err,
                          "need a packet pool of %u mbufs (%llu MB), more "
                          "than the %llu MB of memory available here "
                          "(MemAvailable; without hugepages the pool is "
                          "simdpath's own memory): fewer mbufs (--mbufs, "
                          "--rxd, --txd), threads, ports or packets in "
                          "replayed captures",
                          mbufs, (unsigned long long)(need >> 20),
                          (unsigned long long)(available >> 20));
    }
    if (operator_memory || need <= memory / 2) {
        return 0;
    }
    return sp_err_set(err,
                      "need a packet pool of %u mbufs (%llu MB), more than "
                      "half of DPDK's %llu MB here (%s): give EAL more memory "
                      "(-- -m MB), or fewer mbufs (--mbufs, --rxd, --txd), "
                      "threads, ports or packets in replayed captures",
                      mbufs, (unsigned long long)(need >> 20),
                      (unsigned long long)(memory >> 20),
                      hugepages
                          ? "free hugepages"
                          : "-m " XSTR(SP_IO_NO_HUGE_MB) " without hugepages");
}

/* The CPUs of a list such as "0,2-3", in its order, into cpus[*n]. */
static int
parse_cpu_list(const char *list, unsigned *cpus, unsigned max, unsigned *n,
               struct sp_err *err)
{
    const char *p = list;

    *n = 0;
    for (;;) {
        unsigned long lo, hi;
        char *end;

        if (!isdigit((unsigned char)*p)) {
            break;
        }
        lo = hi = strtoul(p, &end, 10);
        if (*end == '-' && isdigit((unsigned char)end[1])) {
            hi = strtoul(end + 1, &end, 10);
        }
        if (hi < lo || hi > UINT16_MAX) {
            break;
        }
        for (unsigned long c = lo; c <= hi; c++) {
            for (unsigned i = 0; i < *n; i++) {
                if (cpus[i] == c) {
                    return sp_err_set(err,
                                      "--pmd-cpus %s: CPU %lu is given "
                                      "twice",
                                      list, c);
                }
            }
            if (*n == max) {
                return sp_err_set(err, "--pmd-cpus %s: more than %u CPUs",
                                  list, max);
            }
            cpus[(*n)++] = (unsigned)c;
        }
        if (*end == ',') {
            p = end + 1;
            continue;
        }
        if (!*end) {
            return 0;
        }
        p = end;
        break;
    }
    return sp_err_set(err,
                      "--pmd-cpus '%s': invalid CPU list at column %d "
                      "(CPU numbers and ranges, as 1,3-4)",
                      list, (int)(p - list) + 1);
}

/* "0-1,3": the CPUs of a set, for messages. */
static void
format_cpus(const cpu_set_t *set, char *text, size_t size)
{
    size_t used = 0;

    text[0] = 0;
    for (unsigned c = 0; c < CPU_SETSIZE && used < size; c++) {
        unsigned last = c;

        if (!CPU_ISSET(c, set)) {
            continue;
        }
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set)) {
            last++;
        }
        used += (size_t)snprintf(text + used, size - used,
                                 last > c ? "%s%u-%u" : "%s%u",
                                 used ? "," : "", c, last);
        c = last;
    }
}

static bool
in_list(const unsigned *cpus, unsigned n, unsigned cpu)
{
    for (unsigned i = 0; i < n; i++) {
        if (cpus[i] == cpu) {
            return true;
        }
    }
    return false;
}

int
sp_io_cpus_pick(const char *list, long main_cpu, unsigned *n_pmds,
                bool pmds_given, struct sp_io_cpus *cpus, struct sp_err *err)
{
    cpu_set_t allowed;
    unsigned free_cpus[SP_DP_MAX_PMDS], n_free = 0, n = 0;
    char text[256];

    memset(cpus, 0, sizeof *cpus);
    if (sched_getaffinity(0, sizeof allowed, &allowed)) {
        CPU_ZERO(&allowed);
        CPU_SET(0, &allowed);
    }
    format_cpus(&allowed, text, sizeof text);
    if (main_cpu >= 0 &&
        (main_cpu >= CPU_SETSIZE || !CPU_ISSET(main_cpu, &allowed))) {
        return sp_err_set(err,
                          "--main-cpu %ld: not a CPU this process may run "
                          "on (%s)",
                          main_cpu, text);
    }
    if (list) {
        if (parse_cpu_list(list, cpus->pmd, SP_DP_MAX_PMDS, &n, err)) {
            return -1;
        }
        for (unsigned i = 0; i < n; i++) {
            if (cpus->pmd[i] >= CPU_SETSIZE ||
                !CPU_ISSET(cpus->pmd[i], &allowed)) {
                return sp_err_set(err,
                                  "--pmd-cpus %s: CPU %u is not one this "
                                  "process may run on (%s)",
                                  list, cpus->pmd[i], text);
            }
        }
        if (pmds_given && n != *n_pmds) {
            return sp_err_set(err,
                              "--pmd-cpus %s: %u CPU(s) for %u PMD "
                              "threads (--pmd-threads): give one per "
                              "thread",
                              list, n, *n_pmds);
        }
        *n_pmds = n;
    }
    /* Unless told, the main thread takes the lowest CPU no PMD thread
     * was given, and PMD threads the next ones, one each while there are
     * enough. */
    cpus->main = main_cpu >= 0 ? (unsigned)main_cpu : list ? cpus->pmd[0] : 0;
    for (unsigned c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &allowed) || in_list(cpus->pmd, n, c)) {
            continue;
        }
        if (main_cpu < 0) {
            cpus->main = c;
            main_cpu = c;
        } else if (c != cpus->main && n_free < SP_DP_MAX_PMDS) {
            free_cpus[n_free++] = c;
        }
    }
    for (unsigned t = n; t < *n_pmds; t++) {
        cpus->pmd[t] = n_free ? free_cpus[t % n_free] : cpus->main;
    }
    for (unsigned t = 0; t < *n_pmds; t++) {
        cpus->shared |=
            cpus->pmd[t] == cpus->main || in_list(cpus->pmd, t, cpus->pmd[t]);
    }
    return 0;
}

void
sp_io_eal_args(struct sp_io_eal *eal, unsigned n_pmds,
               const struct sp_io_cpus *cpus, const char *const *ports,
               unsigned n_ports, int argc, char *const *argv)
{
    size_t used;

    eal->argc = 0;
    eal->argv[eal->argc++] = "simdpath";
    /* Lcore 0, the main one, watches and serves control; lcore t + 1 is
     * PMD thread t. */
    used = (size_t)snprintf(eal->cores, sizeof eal->cores, "0@%u", cpus->main);
    for (unsigned t = 0; t < n_pmds && used < sizeof eal->cores; t++) {
        used += (size_t)snprintf(eal->cores + used, sizeof eal->cores - used,
                                 ",%u@%u", t + 1, cpus->pmd[t]);
    }
    eal->argv[eal->argc++] = "--lcores";
    eal->argv[eal->argc++] = eal->cores;
    eal->argv[eal->argc++] = "--log-level=lib.eal:warning";
    eal->argv[eal->argc++] = "--log-level=lib.telemetry:warning";
    for (unsigned i = 0; i < n_ports; i++) {
        eal->argv[eal->argc++] = is_pci_address(ports[i]) ? "-a" : "--vdev";
        eal->argv[eal->argc++] = (char *)ports[i];
    }
    if (!any_pci(ports, n_ports)) {
        eal->argv[eal->argc++] = "--no-pci";
    }
    eal->no_huge = !hugepages_free();
    if (eal->no_huge) {
        eal->argv[eal->argc++] = "--no-huge";
        eal->argv[eal->argc++] = "-m";
        eal->argv[eal->argc++] = XSTR(SP_IO_NO_HUGE_MB);
        eal->argv[eal->argc++] = "--no-shconf";
    }
    for (int i = 0; i < argc && eal->argc < SP_IO_EAL_MAX_ARGS - 1; i++) {
        eal->argv[eal->argc++] = argv[i];
    }
    eal->argv[eal->argc] = NULL;
}
