/* SPDX-License-Identifier: BSD-3-Clause */
/* DPDK ports, mbufs and lcores behind include/simdpath/io.h. */
#include <dirent.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memzone.h>
#include <rte_telemetry.h>

#include "simdpath/io.h"

#define POOL_CACHE 256
#define POOL_SLACK 3072 /* mbufs per queue beyond its descriptors: bursts */
#define POOL_MIN   8191
/* Frames longer than a pool buffer arrive in segments; they are gathered
 * into one buffer from a second pool, since the parser and the actions read
 * a frame as one array. Its buffers are the largest an mbuf has; a few
 * hundred cover the bursts in flight (one buffer per frame and per copy of
 * one). */
#define LARGE_BUF_SIZE UINT16_MAX
#define LARGE_MBUFS    511
#define LARGE_LEN      (LARGE_BUF_SIZE - RTE_PKTMBUF_HEADROOM)
/* What a frame adds to its MTU: Ethernet header, two VLAN tags, CRC. */
#define MTU_OVERHEAD \
    (RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN)

static bool eal_ready;
/* --mtu (0: the devices' own), and the packet pools' buffers: large
 * enough for a frame of that MTU, as a device without scatter (such as
 * net_af_packet) drops a frame that does not fit one buffer. */
static unsigned mtu;
static uint16_t buf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
#define SMALL_LEN (buf_size - RTE_PKTMBUF_HEADROOM)
/* One packet pool per NUMA socket that has ports, each port's queues
 * served from its socket's; frames gathered from segments come from one
 * pool of large buffers. */
static struct rte_mempool *pools[RTE_MAX_NUMA_NODES], *large_pool;
static struct rte_mempool *port_pool[RTE_MAX_ETHPORTS]; /* by DPDK id */
static unsigned n_ports;
static uint16_t dpdk_id[SP_IO_MAX_PORTS + 1]; /* by simdpath port number */
static char port_names[SP_IO_MAX_PORTS + 1][RTE_ETH_NAME_MAX_LEN];
static bool started[SP_IO_MAX_PORTS + 1];
static unsigned worker_lcores[RTE_MAX_LCORE];
/* DPDK 22.11's net_af_packet does not read the kernel's count of frames
 * its receive rings had no room for (PACKET_STATISTICS), which is what
 * such a port loses when simdpath falls behind; simdpath reads it from
 * the driver's sockets, found among its own files by the interface they
 * are bound to. A read clears the kernel's count: it adds up here. */
static unsigned af_packet_ifindex[SP_IO_MAX_PORTS + 1]; /* 0: not one */
static unsigned af_packet_framesz[SP_IO_MAX_PORTS + 1]; /* its devargs */
static unsigned af_packet_framecnt[SP_IO_MAX_PORTS + 1];
static uint64_t ring_drops[SP_IO_MAX_PORTS + 1];
static pthread_mutex_t ring_drops_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned n_workers;

void
sp_io_device_name(const char *spec, char *name, size_t size)
{
    size_t len = strcspn(spec, ",");
    unsigned bus, slot, fn;
    char tail;

    snprintf(name, size, "%.*s", (int)len, spec);
    if (sscanf(name, "%x:%x.%x%c", &bus, &slot, &fn, &tail) == 3) {
        snprintf(name, size, "0000:%.*s", (int)len, spec);
    }
}

/* The number devarg NAME of a port's spec sets, or its default. */
static unsigned
devarg_uint(const char *spec, const char *name, unsigned dflt)
{
    char key[32];
    const char *at;

    snprintf(key, sizeof key, ",%s=", name);
    at = strstr(spec, key);
    return at ? (unsigned)atoi(at + strlen(key)) : dflt;
}

int
sp_io_init(int argc, char **argv, const char *const *ports, unsigned count,
           struct sp_err *err)
{
    unsigned lcore;

    if (count > SP_IO_MAX_PORTS) {
        return sp_err_set(err, "%u ports; at most %d are supported", count,
                          SP_IO_MAX_PORTS);
    }
    if (rte_eal_init(argc, argv) < 0) {
        return sp_err_set(err, "DPDK EAL initialisation failed: %s",
                          rte_strerror(rte_errno));
    }
    eal_ready = true;
    RTE_LCORE_FOREACH_WORKER(lcore)
    {
        worker_lcores[n_workers++] = lcore;
    }
    /* Port p is the p-th --port, whatever order DPDK probed them in. */
    for (unsigned p = 1; p <= count; p++) {
        sp_io_device_name(ports[p - 1], port_names[p], sizeof port_names[p]);
        if (rte_eth_dev_get_port_by_name(port_names[p], &dpdk_id[p])) {
            return sp_err_set(err,
                              "port %u (%s) did not open: DPDK says why "
                              "above",
                              p, ports[p - 1]);
        }
    }
    n_ports = count;
    for (unsigned p = 1; p <= count; p++) {
        const char *iface = strstr(ports[p - 1], ",iface=");
        char name[IF_NAMESIZE];

        if (iface && !strncmp(ports[p - 1], "net_af_packet", 13)) {
            snprintf(name, sizeof name, "%.*s", (int)strcspn(iface + 7, ","),
                     iface + 7);
            af_packet_ifindex[p] = if_nametoindex(name);
            af_packet_framesz[p] = devarg_uint(ports[p - 1], "framesz", 2048);
            af_packet_framecnt[p] = devarg_uint(ports[p - 1], "framecnt", 512);
        }
    }
    return 0;
}

void
sp_io_cleanup(void)
{
    if (eal_ready) {
        rte_eal_cleanup();
        eal_ready = false;
    }
}

/* Warnings and notes at start-up, on stdout as run's own. */
static void __rte_format_printf(1, 2) note(const char *fmt, ...)
{
    va_list ap;

    fputs("simdpath: ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

/* RSS over the flows a PMD thread should keep to itself, as far as the
 * device offers to hash them: without it a NIC delivers every packet to
 * queue 0 and the other threads idle. */
static void
configure_rss(unsigned port, const struct rte_eth_dev_info *info, unsigned rxq,
              struct rte_eth_conf *conf)
{
    static const uint64_t want =
        RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_NONFRAG_IPV4_TCP |
        RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_TCP |
        RTE_ETH_RSS_NONFRAG_IPV6_UDP;
    uint64_t offered = info->flow_type_rss_offloads & want;

    if (rxq < 2) {
        return;
    }
    if (!offered) {
        note("port %u (%s) offers no RSS hash over IPv4/IPv6 TCP/UDP: its "
             "%u receive queues get packets only as the driver spreads "
             "them itself (net_af_packet: the kernel's fanout hash), if at "
             "all",
             port, info->driver_name, rxq);
        return;
    }
    conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf->rx_adv_conf.rss_conf.rss_key = NULL; /* the driver's own key */
    conf->rx_adv_conf.rss_conf.rss_hf = offered;
}

/* The NUMA socket of a port's device; a virtual device has none and is
 * served from the main thread's. */
static unsigned
port_socket(unsigned port)
{
    int socket = rte_eth_dev_socket_id(dpdk_id[port]);

    return socket >= 0 && socket < RTE_MAX_NUMA_NODES ? (unsigned)socket
                                                      : rte_socket_id();
}

void
sp_io_set_mtu(unsigned n)
{
    unsigned need = RTE_PKTMBUF_HEADROOM + n + MTU_OVERHEAD;

    mtu = n;
    buf_size = need > RTE_MBUF_DEFAULT_BUF_SIZE
                   ? (uint16_t)RTE_ALIGN_CEIL(need, 1024)
                   : RTE_MBUF_DEFAULT_BUF_SIZE;
}

/* An af_packet port's MTU is its interface's. DPDK 22.11's driver
 * reports frames of at most 1,518 bytes whatever its ring's frame size
 * (framesz), so ethdev refuses any larger MTU: it is checked against
 * framesz, and set on the interface, as the driver's own MTU call does. */
static int
set_af_packet_mtu(unsigned port, struct sp_err *err)
{
    unsigned head = (unsigned)TPACKET2_HDRLEN + TPACKET_ALIGNMENT;
    unsigned room = af_packet_framesz[port] - head;
    unsigned framesz = RTE_ALIGN_CEIL(mtu + MTU_OVERHEAD + head, 1024);
    unsigned blocksz = framesz;
    struct ifreq ifr;
    int fd, rc;

    /* The kernel wants blocks of whole pages, the driver frames that
     * follow one another without a gap: blocks of whole frames. */
    while (blocksz % 4096) {
        blocksz += framesz;
    }
    if (mtu + MTU_OVERHEAD > room) {
        return sp_err_set(err,
                          "port %u (net_af_packet): --mtu %u needs frames "
                          "of up to %u bytes; its ring's frames hold %u "
                          "(framesz=%u): give framesz=%u,blocksz=%u",
                          port, mtu, mtu + MTU_OVERHEAD, room,
                          af_packet_framesz[port], framesz, blocksz);
    }
    memset(&ifr, 0, sizeof ifr);
    if_indextoname(af_packet_ifindex[port], ifr.ifr_name);
    ifr.ifr_mtu = (int)mtu;
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    rc = fd < 0 ? -1 : ioctl(fd, SIOCSIFMTU, &ifr);
    if (rc) {
        sp_err_set(err, "port %u (net_af_packet): cannot set MTU %u on %s: %s",
                   port, mtu, ifr.ifr_name, strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
    return rc;
}

/* --mtu on a port, refused as the device's limits require. */
static int
set_mtu(unsigned port, const struct rte_eth_dev_info *info, struct sp_err *err)
{
    uint32_t frame = mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
    int rc;

    if (af_packet_ifindex[port]) {
        return set_af_packet_mtu(port, err);
    }
    if (mtu < info->min_mtu || mtu > info->max_mtu ||
        frame > info->max_rx_pktlen) {
        return sp_err_set(err,
                          "port %u (%s): --mtu %u needs frames of %u "
                          "bytes; the device takes an MTU of %u to %u and "
                          "frames of up to %u bytes (max_rx_pktlen)",
                          port, info->driver_name, mtu, frame, info->min_mtu,
                          info->max_mtu, info->max_rx_pktlen);
    }
    rc = rte_eth_dev_set_mtu(dpdk_id[port], (uint16_t)mtu);
    if (rc == -ENOTSUP) {
        /* net_pcap, net_ring, net_null: no link, nothing to set; they
         * deliver frames of any length. */
        return 0;
    }
    if (rc) {
        return sp_err_set(err, "port %u (%s): the device refused MTU %u: %s",
                          port, info->driver_name, mtu, rte_strerror(-rc));
    }
    return 0;
}

/* DPDK 22.11's net_af_packet opens its sockets for every interface's
 * frames and binds them to its own only after their rings exist, so a
 * ring holds whatever any interface carried meanwhile (loopback traffic
 * included) and simdpath would forward it. Those, and the port's own
 * frames from before it started, are dropped here, at most a ring's
 * worth a queue, and the port's counters start after them. */
static void
drop_frames_before_start(unsigned port, unsigned rxq)
{
    uint16_t id = dpdk_id[port];
    unsigned dropped = 0;

    for (unsigned q = 0; q < rxq; q++) {
        unsigned from_queue = 0;
        uint16_t n;

        do {
            struct rte_mbuf *burst[32];

            n = rte_eth_rx_burst(id, (uint16_t)q, burst, 32);
            rte_pktmbuf_free_bulk(burst, n);
            from_queue += n;
        } while (n && from_queue < af_packet_framecnt[port]);
        dropped += from_queue;
    }
    if (dropped) {
        note("port %u (net_af_packet): dropped %u frame(s) its ring held "
             "before it started (the driver's sockets take every "
             "interface's frames until they are bound to theirs)",
             port, dropped);
    }
    sp_io_nic_stats_clear(port);
}

static int
start_port(unsigned port, unsigned rxq, unsigned txq, unsigned rxd,
           unsigned txd, struct sp_err *err)
{
    uint16_t id = dpdk_id[port];
    unsigned socket = port_socket(port);
    struct rte_eth_conf conf;
    struct rte_eth_dev_info info;
    int rc;

    memset(&conf, 0, sizeof conf);
    rc = rte_eth_dev_info_get(id, &info);
    if (rc) {
        return sp_err_set(err, "port %u: no device information: %s", port,
                          rte_strerror(-rc));
    }
    if (rxq > info.max_rx_queues || txq > info.max_tx_queues) {
        return sp_err_set(err,
                          "port %u (%s) has at most %u rx and %u tx queues; "
                          "%u and %u were asked for",
                          port, info.driver_name, info.max_rx_queues,
                          info.max_tx_queues, rxq, txq);
    }
    configure_rss(port, &info, rxq, &conf);
    rc = rte_eth_dev_configure(id, (uint16_t)rxq, (uint16_t)txq, &conf);
    if (!rc && mtu && set_mtu(port, &info, err)) {
        return -1;
    }
    for (unsigned q = 0; !rc && q < rxq; q++) {
        rc = rte_eth_rx_queue_setup(id, (uint16_t)q, (uint16_t)rxd, socket,
                                    NULL, port_pool[id]);
    }
    for (unsigned q = 0; !rc && q < txq; q++) {
        rc = rte_eth_tx_queue_setup(id, (uint16_t)q, (uint16_t)txd, socket,
                                    NULL);
    }
    if (!rc) {
        rc = rte_eth_dev_start(id);
    }
    if (rc) {
        return sp_err_set(err, "port %u (%s): set-up failed: %s", port,
                          info.driver_name, rte_strerror(-rc));
    }
    started[port] = true;
    /* Tests and demos send frames that are not addressed to the port. */
    rte_eth_promiscuous_enable(id);
    if (af_packet_ifindex[port]) {
        drop_frames_before_start(port, rxq);
    }
    return 0;
}

unsigned
sp_io_pool_mbufs(unsigned ports, unsigned rxq, unsigned txq, unsigned rxd,
                 unsigned txd, uint64_t held)
{
    uint64_t mbufs = (uint64_t)ports * (rxq * (rxd + POOL_SLACK) +
                                        txq * (txd + POOL_SLACK)) +
                     held;

    mbufs = mbufs > POOL_MIN ? mbufs : POOL_MIN;
    return mbufs < UINT32_MAX ? (unsigned)mbufs : UINT32_MAX;
}

uint64_t
sp_io_pool_bytes(unsigned mbufs)
{
    struct rte_mempool_objsz size;

    rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) + buf_size, 0, &size);
    return (uint64_t)mbufs * size.total_size;
}

static void
free_zone(struct rte_mempool_memhdr *chunk, void *zone)
{
    (void)chunk;
    rte_memzone_free(zone);
}

/* Populates the whole pool from len bytes at addr; else gives the memory
 * back by free_cb when the pool took none of it, and returns -1 with
 * rte_errno set. */
static int
populate_whole(struct rte_mempool *mp, void *addr, rte_iova_t iova, size_t len,
               rte_mempool_memchunk_free_cb_t *free_cb, void *opaque)
{
    struct rte_mempool_memhdr chunk = {.addr = addr, .len = len};

    if (rte_mempool_populate_iova(mp, addr, iova, len, free_cb, opaque) ==
        (int)mp->size) {
        return 0;
    }
    if (!mp->nb_mem_chunks) {
        free_cb(&chunk, opaque);
    }
    rte_errno = ENOMEM;
    return -1;
}

/* Lays the pool out in a zone of EAL's memory, which DPDK maps for the
 * devices' DMA. Returns 0 or -1 with rte_errno set. */
static int
populate_from_zone(struct rte_mempool *mp, size_t bytes, int socket)
{
    const struct rte_memzone *zone = rte_memzone_reserve_aligned(
        mp->name, bytes, socket, 0, RTE_MEMPOOL_ALIGN);

    return zone ? populate_whole(mp, zone->addr, zone->iova, zone->len,
                                 free_zone, (void *)(uintptr_t)zone)
                : -1;
}

static void
unmap_chunk(struct rte_mempool_memhdr *chunk, void *opaque)
{
    (void)opaque;
    munmap(chunk->addr, chunk->len);
}

/* Lays the pool out in memory of the process's own, 2 MB aligned and
 * advised to the kernel's transparent huge pages: EAL's memory without
 * hugepages is shared memory in 4 KB pages, where a pool larger than the
 * TLB covers costs a page walk on most of a packet's touches
 * (docs/perf/pmd-loop.md). Its pages are allocated now, so that memory
 * that is not there is an error at start and not a kill later. IO
 * addresses are virtual: a buffer's is its address. Returns 0 or -1 with
 * rte_errno set. */
static int
populate_from_huge_pages(struct rte_mempool *mp, size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    size_t len = RTE_ALIGN_CEIL(bytes, huge);
    uint8_t *raw = mmap(NULL, len + huge, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *at;

    if (raw == MAP_FAILED) {
        rte_errno = errno;
        return -1;
    }
    /* The slack before the first 2 MB boundary and after the pool goes
     * back. */
    at = RTE_PTR_ALIGN_CEIL(raw, huge);
    if (at > raw) {
        munmap(raw, (size_t)(at - raw));
    }
    munmap(at + len, huge - (size_t)(at - raw));
    /* Advice only: without transparent huge pages the pool is in 4 KB
     * pages, as EAL's memory would be. An older kernel without
     * MADV_POPULATE_WRITE (5.14) is left to fault the pages in. */
    madvise(at, len, MADV_HUGEPAGE);
    if (madvise(at, len, MADV_POPULATE_WRITE) && errno != EINVAL) {
        rte_errno = errno;
        munmap(at, len);
        return -1;
    }
    return populate_whole(mp, at, (rte_iova_t)(uintptr_t)at, len, unmap_chunk,
                          NULL);
}

/*
 * A packet pool as rte_pktmbuf_pool_create makes one, but packed when IO
 * addresses are virtual. DPDK keeps each buffer inside one page. Without
 * hugepages a page is 4 KB and holds one 2.3 KB buffer, so every mbuf
 * starts at the same offset of its page: a burst's 32 mbuf headers share
 * one L1 cache set of 12 ways, and each stage's first touch of a packet
 * misses L1 (docs/perf/pmd-loop.md). With IOVA as VA a buffer that
 * crosses pages is contiguous in IO addresses too: the pool lifts the
 * page rule (RTE_MEMPOOL_F_NO_IOVA_CONTIG) and is populated from one
 * piece of memory with its IO addresses, which that flag alone would
 * leave unset: the process's own in huge pages when every device is
 * virtual (no DMA), else a zone of EAL's. Hugepages and physical IO
 * addresses keep DPDK's own layout.
 */
static struct rte_mempool *
pool_create(const char *name, unsigned n, unsigned cache, uint16_t data_room,
            int socket)
{
    struct rte_pktmbuf_pool_private priv = {
        .mbuf_data_room_size = data_room,
    };
    struct rte_mempool *mp;
    size_t bytes;

    if (rte_eal_has_hugepages() || rte_eal_iova_mode() != RTE_IOVA_VA) {
        return rte_pktmbuf_pool_create(name, n, cache, 0, data_room, socket);
    }
    mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + data_room,
                                  cache, sizeof priv, socket,
                                  RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (!mp) {
        return NULL;
    }
    if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL)) {
        goto fail;
    }
    rte_pktmbuf_pool_init(mp, &priv);
    bytes = (size_t)n * (mp->header_size + mp->elt_size + mp->trailer_size);
    if (rte_eal_has_pci() ? populate_from_zone(mp, bytes, socket)
                          : populate_from_huge_pages(mp, bytes)) {
        goto fail;
    }
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
    return mp;
fail:
    rte_mempool_free(mp);
    return NULL;
}

int
sp_io_start_ports(unsigned rxq, unsigned txq, unsigned mbufs, unsigned rxd,
                  unsigned txd, struct sp_err *err)
{
    if (n_ports == 0) {
        return sp_err_set(err, "no ports: give at least one --port");
    }
    /* net_af_packet copies a ring frame into one buffer, and refuses a
     * queue whose buffers cannot hold its frame size. */
    for (unsigned port = 1; port <= n_ports; port++) {
        unsigned need = af_packet_framesz[port] + RTE_PKTMBUF_HEADROOM;

        if (af_packet_ifindex[port] && need > buf_size) {
            buf_size = (uint16_t)RTE_ALIGN_CEIL(need, 1024);
        }
    }
    for (unsigned socket = 0; socket < RTE_MAX_NUMA_NODES; socket++) {
        unsigned ports = 0, share;
        char name[RTE_MEMPOOL_NAMESIZE];

        for (unsigned port = 1; port <= n_ports; port++) {
            ports += port_socket(port) == socket;
        }
        if (!ports) {
            continue;
        }
        /* Each socket's pool its ports' share of the buffers. */
        share = (unsigned)(((uint64_t)mbufs * ports + n_ports - 1) / n_ports);
        snprintf(name, sizeof name, "sp_pool%u", socket);
        pools[socket] =
            pool_create(name, share, POOL_CACHE, buf_size, (int)socket);
        if (!pools[socket]) {
            return sp_err_set(err,
                              "cannot create the packet pool of %u mbufs of "
                              "NUMA socket %u: %s (fewer --mbufs, or, for a "
                              "pool in EAL's memory, more of it: -- -m MB)",
                              share, socket, rte_strerror(rte_errno));
        }
        for (unsigned port = 1; port <= n_ports; port++) {
            if (port_socket(port) == socket) {
                port_pool[dpdk_id[port]] = pools[socket];
            }
        }
    }
    large_pool = pool_create("sp_large_pool", LARGE_MBUFS, 0, LARGE_BUF_SIZE,
                             (int)rte_socket_id());
    if (!large_pool) {
        return sp_err_set(err,
                          "cannot create the pool for frames over %d "
                          "bytes: %s",
                          SMALL_LEN, rte_strerror(rte_errno));
    }
    for (unsigned port = 1; port <= n_ports; port++) {
        if (start_port(port, rxq, txq, rxd, txd, err)) {
            sp_io_stop_ports();
            return -1;
        }
    }
    return 0;
}

void
sp_io_numa_check(unsigned port, unsigned queue, unsigned pmd)
{
    unsigned lcore = worker_lcores[pmd];
    unsigned socket = rte_lcore_to_socket_id(lcore);

    if (socket != port_socket(port)) {
        note("warning: PMD thread %u (CPU %d, NUMA socket %u) polls queue "
             "%u of port %u (%s), which is on socket %u: its packets cross "
             "sockets; give it a CPU of socket %u (--pmd-cpus)",
             pmd, rte_lcore_to_cpu_id((int)lcore), socket, queue, port,
             port_names[port], port_socket(port), port_socket(port));
    }
}

void
sp_io_stop_ports(void)
{
    for (unsigned port = 1; port <= n_ports; port++) {
        if (started[port]) {
            rte_eth_dev_stop(dpdk_id[port]);
            rte_eth_dev_close(dpdk_id[port]);
            started[port] = false;
        }
    }
}

const char *
sp_io_port_name(unsigned port)
{
    return port >= 1 && port <= n_ports ? port_names[port] : "?";
}

void
sp_io_port_mac(unsigned port, uint8_t mac[6])
{
    struct rte_ether_addr addr;

    memset(mac, 0, 6);
    if (port >= 1 && port <= n_ports &&
        !rte_eth_macaddr_get(dpdk_id[port], &addr)) {
        memcpy(mac, addr.addr_bytes, 6);
    }
}

bool
sp_io_port_link_up(unsigned port)
{
    struct rte_eth_link link;

    if (port < 1 || port > n_ports ||
        rte_eth_link_get_nowait(dpdk_id[port], &link)) {
        return true;
    }
    return link.link_status == RTE_ETH_LINK_UP;
}

int
sp_io_port_set_link(unsigned port, bool up)
{
    if (port < 1 || port > n_ports) {
        return -EINVAL;
    }
    return up ? rte_eth_dev_set_link_up(dpdk_id[port])
              : rte_eth_dev_set_link_down(dpdk_id[port]);
}

/* Adds what the kernel dropped on af_packet ports' rings since the last
 * call to ring_drops; called with ring_drops_lock held. */
static void
collect_ring_drops(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *e;

    while (dir && (e = readdir(dir))) {
        int fd = atoi(e->d_name), domain;
        socklen_t len = sizeof domain;
        struct sockaddr_ll addr;
        struct tpacket_stats st;

        if (fd == dirfd(dir) ||
            getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) ||
            domain != AF_PACKET) {
            continue;
        }
        len = sizeof addr;
        if (getsockname(fd, (struct sockaddr *)&addr, &len)) {
            continue;
        }
        for (unsigned p = 1; p <= n_ports; p++) {
            len = sizeof st;
            if (af_packet_ifindex[p] &&
                af_packet_ifindex[p] == (unsigned)addr.sll_ifindex &&
                !getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len)) {
                ring_drops[p] += st.tp_drops;
            }
        }
    }
    if (dir) {
        closedir(dir);
    }
}

void
sp_io_nic_stats(unsigned port, struct sp_io_nic_stats *s)
{
    struct rte_eth_stats st;

    memset(s, 0, sizeof *s);
    if (port >= 1 && port <= n_ports && started[port] &&
        !rte_eth_stats_get(dpdk_id[port], &st)) {
        s->rx_missed = st.imissed;
        s->rx_errors = st.ierrors;
        s->rx_nombuf = st.rx_nombuf;
        s->tx_errors = st.oerrors;
    }
    if (port >= 1 && port <= n_ports && af_packet_ifindex[port]) {
        pthread_mutex_lock(&ring_drops_lock);
        collect_ring_drops();
        s->rx_missed += ring_drops[port];
        pthread_mutex_unlock(&ring_drops_lock);
    }
}

int
sp_io_port_xstats(unsigned port,
                  void (*put)(void *ctx, const char *name, uint64_t v),
                  void *ctx, struct sp_err *err)
{
    struct rte_eth_xstat_name *names = NULL;
    struct rte_eth_xstat *values = NULL;
    int n = -1;

    if (port >= 1 && port <= n_ports && started[port]) {
        n = rte_eth_xstats_get_names(dpdk_id[port], NULL, 0);
    }
    if (n > 0) {
        names = calloc((size_t)n, sizeof *names);
        values = calloc((size_t)n, sizeof *values);
    }
    if (!names || !values ||
        rte_eth_xstats_get_names(dpdk_id[port], names, (unsigned)n) != n ||
        rte_eth_xstats_get(dpdk_id[port], values, (unsigned)n) != n) {
        free(names);
        free(values);
        return sp_err_set(err, "port %u (%s) gives no extended counters", port,
                          sp_io_port_name(port));
    }
    for (int i = 0; i < n; i++) {
        put(ctx, names[values[i].id].name, values[i].value);
    }
    free(names);
    free(values);
    return 0;
}

void
sp_io_nic_stats_clear(unsigned port)
{
    if (port >= 1 && port <= n_ports && started[port]) {
        rte_eth_stats_reset(dpdk_id[port]);
        rte_eth_xstats_reset(dpdk_id[port]);
        pthread_mutex_lock(&ring_drops_lock);
        collect_ring_drops();
        ring_drops[port] = 0;
        pthread_mutex_unlock(&ring_drops_lock);
    }
}

/* A one-segment mbuf for a frame of len bytes after the usual headroom,
 * the bytes still to be written, or NULL. */
static struct rte_mbuf *
alloc_frame(uint32_t len, uint16_t port)
{
    struct rte_mbuf *m;

    if (len > LARGE_LEN) {
        return NULL;
    }
    m = rte_pktmbuf_alloc(len <= (uint32_t)SMALL_LEN ? port_pool[port]
                                                     : large_pool);
    if (m) {
        m->data_len = (uint16_t)len;
        m->pkt_len = len;
        m->port = port;
    }
    return m;
}

/* The frame of a chain of segments in one buffer; the chain is freed. A
 * frame that does not fit or finds no buffer is counted in *drops and
 * freed, and NULL returned. */
static __rte_noinline struct rte_mbuf *
gather(struct rte_mbuf *m, struct sp_rx_drops *drops)
{
    uint32_t len = rte_pktmbuf_pkt_len(m);
    struct rte_mbuf *one = alloc_frame(len, m->port);

    if (one) {
        uint8_t *dst = rte_pktmbuf_mtod(one, uint8_t *);
        const void *src = rte_pktmbuf_read(m, 0, len, dst);

        if (src != dst) { /* all of it was in the first segment */
            memcpy(dst, src, len);
        }
    } else if (len > LARGE_LEN) {
        drops->too_long++;
    } else {
        drops->no_buffer++;
    }
    rte_pktmbuf_free(m);
    return one;
}

static void
from_mbuf(struct rte_mbuf *m, unsigned port, struct sp_packet *pkt)
{
    pkt->data = rte_pktmbuf_mtod(m, uint8_t *);
    pkt->len = rte_pktmbuf_data_len(m);
    pkt->in_port = (uint16_t)port;
    pkt->reframed = false;
    pkt->owner = m;
}

uint32_t
sp_io_rx(unsigned port, unsigned queue, struct sp_packet *pkts, uint32_t max,
         struct sp_rx_drops *drops)
{
    struct rte_mbuf *mbufs[SP_BATCH_MAX];
    /* A pointer that steps: pkts[got++] cost the loop three instructions
     * a packet to scale and add the index. */
    struct sp_packet *out = pkts;
    uint16_t n;

    n = rte_eth_rx_burst(dpdk_id[port], (uint16_t)queue, mbufs,
                         (uint16_t)(max < SP_BATCH_MAX ? max : SP_BATCH_MAX));
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = mbufs[i];

        if (unlikely(m->nb_segs > 1) && !(m = gather(m, drops))) {
            continue;
        }
        from_mbuf(m, port, out++);
    }
    return (uint32_t)(out - pkts);
}

/* The mbuf of a packet, its start and length brought up to date with
 * what the actions did to pkt->data and pkt->len (VLAN push and pop),
 * which they say in pkt->reframed. Every packet is one segment: rx
 * gathered the others. */
static struct rte_mbuf *
to_mbuf(const struct sp_packet *pkt)
{
    struct rte_mbuf *m = pkt->owner;

    if (unlikely(pkt->reframed)) {
        m->data_off = (uint16_t)(pkt->data - (uint8_t *)m->buf_addr);
        m->data_len = (uint16_t)pkt->len;
        m->pkt_len = pkt->len;
    }
    return m;
}

uint32_t
sp_io_tx(unsigned port, unsigned queue, struct sp_packet *const *pkts,
         uint32_t n)
{
    struct rte_mbuf *mbufs[SP_BATCH_MAX];
    uint16_t sent;

    for (uint32_t i = 0; i < n; i++) {
        mbufs[i] = to_mbuf(pkts[i]);
    }
    sent =
        rte_eth_tx_burst(dpdk_id[port], (uint16_t)queue, mbufs, (uint16_t)n);
    if (sent < n) {
        rte_pktmbuf_free_bulk(mbufs + sent, n - sent);
    }
    return sent;
}

void
sp_io_free(struct sp_packet *pkt)
{
    rte_pktmbuf_free(pkt->owner);
    pkt->owner = NULL;
}

/* From pkt->data and pkt->len, not from the mbuf: the actions have not
 * told the mbuf where the frame starts and ends now (to_mbuf does, at
 * transmit). */
int
sp_io_clone(const struct sp_packet *pkt, struct sp_packet *copy)
{
    const struct rte_mbuf *from = pkt->owner;
    struct rte_mbuf *m = alloc_frame(pkt->len, from->port);

    if (!m) {
        return -1;
    }
    memcpy(rte_pktmbuf_mtod(m, uint8_t *), pkt->data, pkt->len);
    *copy = *pkt;
    copy->data = rte_pktmbuf_mtod(m, uint8_t *);
    copy->reframed = false; /* alloc_frame made m's length pkt->len */
    copy->owner = m;
    return 0;
}

int
sp_io_alloc(const uint8_t *data, uint32_t len, struct sp_packet *pkt)
{
    /* From any thread: without an lcore, the pool skips its caches. */
    struct rte_mbuf *m = alloc_frame(len, dpdk_id[1]);

    if (!m) {
        return -1;
    }
    memcpy(rte_pktmbuf_mtod(m, uint8_t *), data, len);
    memset(pkt, 0, sizeof *pkt);
    pkt->data = rte_pktmbuf_mtod(m, uint8_t *);
    pkt->len = len;
    pkt->owner = m;
    return 0;
}

uint32_t
sp_io_headroom(void)
{
    return RTE_PKTMBUF_HEADROOM;
}

unsigned
sp_io_mbufs_in_use(void)
{
    unsigned n = large_pool ? rte_mempool_in_use_count(large_pool) : 0;

    for (unsigned socket = 0; socket < RTE_MAX_NUMA_NODES; socket++) {
        n += pools[socket] ? rte_mempool_in_use_count(pools[socket]) : 0;
    }
    return n;
}

unsigned
sp_io_worker_count(void)
{
    return n_workers;
}

int
sp_io_launch(unsigned worker, int (*fn)(void *), void *arg)
{
    return rte_eal_remote_launch(fn, arg, worker_lcores[worker]);
}

void
sp_io_wait_workers(void)
{
    rte_eal_mp_wait_lcore();
}

uint64_t
sp_io_tsc(void)
{
    return rte_get_tsc_cycles();
}

#define MAX_TELEMETRY 8

static struct {
    char command[64];
    sp_io_telemetry_fn *fn;
} telemetry[MAX_TELEMETRY];

static void
telemetry_put(void *reply, const char *name, uint64_t value)
{
    rte_tel_data_add_dict_u64(reply, name, value);
}

static int
telemetry_handler(const char *command, const char *params,
                  struct rte_tel_data *reply)
{
    (void)params;
    for (unsigned i = 0; i < MAX_TELEMETRY; i++) {
        if (telemetry[i].fn && !strcmp(telemetry[i].command, command)) {
            rte_tel_data_start_dict(reply);
            telemetry[i].fn(telemetry_put, reply);
            return 0;
        }
    }
    return -1;
}

int
sp_io_telemetry_register(const char *command, const char *help,
                         sp_io_telemetry_fn *fn)
{
    for (unsigned i = 0; i < MAX_TELEMETRY; i++) {
        if (!telemetry[i].fn) {
            snprintf(telemetry[i].command, sizeof telemetry[i].command, "%s",
                     command);
            telemetry[i].fn = fn;
            return rte_telemetry_register_cmd(telemetry[i].command,
                                              telemetry_handler, help);
        }
    }
    return -1;
}

void
sp_io_set_log_level(unsigned level)
{
    static const uint32_t rte_levels[] = {RTE_LOG_ERR, RTE_LOG_WARNING,
                                          RTE_LOG_INFO, RTE_LOG_DEBUG};

    rte_log_set_global_level(rte_levels[level]);
    /* Each log type has a level of its own (INFO by default), which
     * caps the global one: debug must lower them too. */
    if (rte_levels[level] == RTE_LOG_DEBUG) {
        rte_log_set_level_pattern("*", RTE_LOG_DEBUG);
    }
}
