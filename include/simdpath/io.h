/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet I/O through DPDK. This header has no DPDK type: the rest of
 * simdpath sees packets as struct sp_packet, whose 'owner' is the mbuf.
 * Ports are numbered from 1 in the order they were given (OpenFlow style).
 */
#ifndef SP_IO_H
#define SP_IO_H

#include <stdbool.h>
#include <stdint.h>

#include "simdpath/datapath.h"
#include "simdpath/dispatch.h"
#include "simdpath/packet.h"

#define SP_IO_MAX_PORTS 32

/* EAL's memory when no hugepages are free, in MB. */
#define SP_IO_NO_HUGE_MB   512
#define SP_IO_EAL_MAX_ARGS 128

/* Refuses the operator's EAL arguments simdpath cannot honour: cores
 * (-l, -c, --lcores), which it gives EAL itself (sp_io_cpus_pick), and a
 * --proc-type but primary, which waits for a primary forever. Sets *memory
 * when they size EAL's memory (-m, --socket-mem). */
int sp_io_eal_check(int argc, char *const *argv, bool *memory,
                    struct sp_err *err);
/* Refuses a packet pool larger than half of EAL's memory (free hugepages,
 * else SP_IO_NO_HUGE_MB), or DPDK starts only to fail; the operator's own
 * memory size it does not check. Without hugepages and with no PCI
 * device among the ports (their --port specifications) the pool is not
 * in EAL's memory but the process's: then it refuses one larger than the
 * memory available. Its message starts "need a packet pool of ...". */
int sp_io_eal_pool_check(unsigned mbufs, bool operator_memory,
                         const char *const *ports, unsigned n_ports,
                         struct sp_err *err);

/* The CPUs the threads run on (--pmd-cpus, --main-cpu). */
struct sp_io_cpus {
    unsigned pmd[SP_DP_MAX_PMDS]; /* PMD thread t runs on CPU pmd[t] */
    unsigned main;                /* the main thread's */
    bool shared;                  /* a CPU runs more than one of them */
};
/* Picks the CPUs for n_pmds PMD threads and the main one from the CPUs
 * this process may run on (sched_getaffinity): 'list' ("1,3-5", NULL when
 * not given) and 'main_cpu' (-1 when not given) as the operator gave
 * them, else the lowest free ones, the main thread first. A list sets
 * *n_pmds if pmds_given is false, else must hold exactly *n_pmds CPUs.
 * Refuses a bad list, a CPU given twice or not available. */
int sp_io_cpus_pick(const char *list, long main_cpu, unsigned *n_pmds,
                    bool pmds_given, struct sp_io_cpus *cpus,
                    struct sp_err *err);

/* The arguments simdpath gives EAL: cores, ports, memory, then the
 * operator's. */
struct sp_io_eal {
    char *argv[SP_IO_EAL_MAX_ARGS]; /* argv[argc] is NULL */
    int argc;
    char cores[1024];
    bool no_huge; /* no free hugepages: --no-huge -m 512 --no-shconf */
};
/* Fills eal for n_pmds PMD threads on cpus (lcore 0 the main thread, on
 * cpus->main; lcore t + 1 PMD thread t, on cpus->pmd[t]) on these ports
 * (PCI addresses or virtual devices) and the operator's arguments, which
 * it points to, as it does to ports. */
void sp_io_eal_args(struct sp_io_eal *eal, unsigned n_pmds,
                    const struct sp_io_cpus *cpus, const char *const *ports,
                    unsigned n_ports, int argc, char *const *argv);

/* Starts DPDK's EAL with these arguments (sp_io_eal_args's) and finds
 * the devices 'ports' name (the --port texts, which EAL was given too):
 * ports[p - 1] becomes port p. */
int sp_io_init(int argc, char **argv, const char *const *ports, unsigned count,
               struct sp_err *err);
/* Undoes sp_io_init, also one that failed half way. */
void sp_io_cleanup(void);

/* --mtu: the ports' MTU, IPv4's minimum to jumbo frames. */
#define SP_IO_MTU_MIN 68
#define SP_IO_MTU_MAX 9000
/* Sets every port's MTU (0: leaves the devices' own) at
 * sp_io_start_ports, whose packet pools then have buffers that hold a
 * whole frame of it; call before sp_io_pool_bytes. */
void sp_io_set_mtu(unsigned mtu);
/* Default descriptors per receive and transmit queue. */
#define SP_IO_DEFAULT_RXD 1024
#define SP_IO_DEFAULT_TXD 1024
/* Creates a packet pool on every NUMA socket that has ports, its share
 * (by ports) of 'mbufs' buffers (sp_io_pool_mbufs), and configures every
 * port with 'rxq' receive queues of 'rxd' descriptors and 'txq' transmit
 * queues of 'txd', served from its socket's pool, then starts them. */
int sp_io_start_ports(unsigned rxq, unsigned txq, unsigned mbufs, unsigned rxd,
                      unsigned txd, struct sp_err *err);
/* DPDK's name of the device a --port gives: the text before the first
 * comma, with the PCI domain added when it was left out. */
void sp_io_device_name(const char *spec, char *name, size_t size);
/* The buffers the ports need: each queue's descriptors plus bursts in
 * flight, and 'held' more that devices keep for themselves (net_pcap with
 * infinite_rx holds one per packet of its capture per queue). */
unsigned sp_io_pool_mbufs(unsigned ports, unsigned rxq, unsigned txq,
                          unsigned rxd, unsigned txd, uint64_t held);
/* The memory a pool of that many buffers takes; callable before
 * sp_io_init, to check that it fits. */
uint64_t sp_io_pool_bytes(unsigned mbufs);
void sp_io_stop_ports(void);
/* Warns when PMD thread 'pmd', which polls receive queue 'queue' of
 * 'port', runs on another NUMA socket than the port's device. */
void sp_io_numa_check(unsigned port, unsigned queue, unsigned pmd);

const char *sp_io_port_name(unsigned port);
/* The port's Ethernet address (zeros if it has none). */
void sp_io_port_mac(unsigned port, uint8_t mac[6]);
/* Whether the port's link is up now, without waiting
 * (rte_eth_link_get_nowait); a device that cannot say is up. For the
 * control thread: OpenFlow's PORT_STATUS and port descriptions. */
bool sp_io_port_link_up(unsigned port);
/* Sets the port's link up or down (rte_eth_dev_set_link_up/down):
 * 0, -ENOTSUP when the device cannot, or another negative errno. */
int sp_io_port_set_link(unsigned port, bool up);

/* What a port's device counted itself (rte_eth_stats): frames it lost
 * before simdpath could receive them (no room in the receive ring,
 * errored, no buffer) and frames it took to send but failed to. */
struct sp_io_nic_stats {
    uint64_t rx_missed, rx_errors, rx_nombuf, tx_errors;
};
/* All 0 when the device cannot say. */
void sp_io_nic_stats(unsigned port, struct sp_io_nic_stats *s);
/* The driver's extended counters of a port, each as put(ctx, name,
 * value); -1 with err when the device has none to give. */
int sp_io_port_xstats(unsigned port,
                      void (*put)(void *ctx, const char *name, uint64_t v),
                      void *ctx, struct sp_err *err);
/* Zeroes the device's counters and extended counters. */
void sp_io_nic_stats_clear(unsigned port);

/* Receives up to max packets into pkts[] (data, len, in_port, owner). A
 * frame that came in several segments is gathered into one buffer (up to
 * 65,407 bytes), or else freed and counted in *drops. */
uint32_t sp_io_rx(unsigned port, unsigned queue, struct sp_packet *pkts,
                  uint32_t max, struct sp_rx_drops *drops);
/* Sends pkt->data/pkt->len (the actions may have moved the start of a
 * frame, e.g. for a VLAN tag); what the device refuses is freed. Returns
 * how many were sent. */
uint32_t sp_io_tx(unsigned port, unsigned queue, struct sp_packet *const *pkts,
                  uint32_t n);
void sp_io_free(struct sp_packet *pkt);
/* A copy of pkt->data/pkt->len with its own buffer; -1 when the pool is
 * empty. */
int sp_io_clone(const struct sp_packet *pkt, struct sp_packet *copy);
/* A packet of its own holding a copy of len bytes (PACKET_OUT), from any
 * thread; -1 when the pool is empty or the frame too long. */
int sp_io_alloc(const uint8_t *data, uint32_t len, struct sp_packet *pkt);
/* Writable bytes in front of every received packet. */
uint32_t sp_io_headroom(void);

/* Packet buffers taken from the pools and not given back: 0 once the
 * ports are stopped, unless something leaked. */
unsigned sp_io_mbufs_in_use(void);

/* Worker lcores, for PMD threads beyond the main one. */
unsigned sp_io_worker_count(void);
int sp_io_launch(unsigned worker, int (*fn)(void *), void *arg);
void sp_io_wait_workers(void);

/* DPDK's log level, callable before sp_io_init: 0 errors, 1 warnings,
 * 2 information, 3 debugging (simdpath's --log-level). */
void sp_io_set_log_level(unsigned level);

/* DPDK's TSC, for the datapath's busy and idle cycle counts. */
uint64_t sp_io_tsc(void);

/* A telemetry command ("/simdpath/..."): cb writes a JSON-free text reply
 * as DPDK telemetry strings via the put callback. */
typedef void sp_io_telemetry_put(void *reply, const char *name,
                                 uint64_t value);
typedef void sp_io_telemetry_fn(sp_io_telemetry_put *put, void *reply);
int sp_io_telemetry_register(const char *command, const char *help,
                             sp_io_telemetry_fn *fn);

#endif /* SP_IO_H */
