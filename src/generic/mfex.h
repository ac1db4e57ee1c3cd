/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal: the loop of the SIMD miniflow extract parsers, one copy per shape
 * (see src/generic/mfex_profile.h). Traffic comes in runs of one shape, so a
 * run is parsed by a loop in which the shape is a constant: offsets, lengths,
 * masks and the chunks to load fold away, and the profile's vectors stay in
 * registers. A packet whose shape no profile takes goes to the scalar parser,
 * after the loop.
 *
 * Included by each ISA's mfex.c after it defines MFEX_FN (the kernel's
 * name) and, with its own registers:
 *  - struct loaded_profile and load_profile(prof);
 *  - probe_matches(lp, p): the first SP_MFEX_PROBE_LEN bytes of p against
 *    the profile's probe (the packet has at least SP_MFEX_LEN(shape));
 *  - build_key(lp, shape, pkt, key): the key, with in_port, read from the
 *    packet's first len bytes only;
 * and MFEX_WHOLE_BATCH and MFEX_LANES, the functions (of sp_scalar_mfex's
 * arguments, the second with a mask of lanes for n) that parse the packets
 * no profile takes (a whole batch, some lanes of one); with
 * MFEX_INLINE_SCALAR this file defines them, the scalar parser's loops
 * with the parser inlined (docs/mfex.md says which ISAs gain from it).
 * No include guard: each includer has its own definitions.
 *
 * Instantiated by src/avx2/mfex.c, src/avx512/mfex.c (twice: avx512 and
 * avx512vbmi) and src/neon/mfex.c. Caller in the datapath: process_burst
 * (src/datapath/datapath.c), through SP_KERNEL(mfex), first for every
 * received burst; also `simdpath parse-pcap` (src/cli/parse_pcap.c).
 */
#include "generic/mfex_profile.h"

#ifdef MFEX_INLINE_SCALAR
#include "generic/mfex_scalar.h"

__attribute__((flatten)) uint32_t
MFEX_WHOLE_BATCH(struct sp_packet *const *pkts, uint32_t n,
                 struct sp_flow_key *keys)
{
    return parse_packets(pkts, n, keys);
}

__attribute__((flatten)) uint32_t
MFEX_LANES(struct sp_packet *const *pkts, uint32_t lanes,
           struct sp_flow_key *keys)
{
    return parse_lanes(pkts, lanes, keys);
}
#endif

/* Parses the packets from pp on while they have the shape; returns where
 * the first that does not is (end if none). */
static inline __attribute__((always_inline)) struct sp_packet *const *
parse_run(const unsigned shape, struct sp_packet *const *pp,
          struct sp_packet *const *end, struct sp_flow_key *key)
{
    const struct sp_mfex_profile *prof = sp_mfex_profiles;
    struct loaded_profile lp;

    /* The table's address opaque here, in the run, so that the compiler
     * can neither hoist the loads of all the profiles out of the batch
     * loop (that spilled them on AVX2, which has 16 vector registers:
     * docs/perf/mfex.md) nor keep the profiles' addresses in registers
     * for the whole call (saving and restoring callee-saved registers on
     * every batch: docs/perf/arm.md). */
    __asm__ volatile("" : "+r"(prof));
    lp = load_profile(prof + shape);

    for (; pp != end; pp++, key++) {
        struct sp_packet *pkt = *pp;
        const uint8_t *p = pkt->data;
        uint32_t len = pkt->len;

        if (len < SP_MFEX_LEN(shape) || !probe_matches(&lp, p) ||
            !sp_mfex_profile_lengths_ok(shape, p, len)) {
            break;
        }
        build_key(&lp, shape, pkt, key);
        sp_mfex_profile_finish(shape, pkt);
    }
    return pp;
}

/* The shape a profile may take the packet as, or SP_MFEX_PROFILES. */
static inline unsigned
guess_shape(const struct sp_packet *pkt)
{
    return pkt->len >= SP_MFEX_MIN_LEN ? sp_mfex_profile_guess(pkt->data)
                                       : SP_MFEX_PROFILES;
}

/* The batch from the shape of its first packet on. Apart from MFEX_FN, so
 * that the compiler saves the registers it needs here and not before
 * MFEX_FN's guesses, which may leave the batch to the scalar parser. Every
 * packet a profile takes is OK: the errors are the scalar parser's. */
static __attribute__((noinline)) uint32_t
parse_batch(struct sp_packet *const *pkts, uint32_t n,
            struct sp_flow_key *keys, unsigned shape)
{
    uint32_t slow = 0; /* packets for the scalar parser, after the loop */

    for (struct sp_packet *const *pp = pkts, *const *end = pkts + n;;) {
        struct sp_packet *const *stop = pp;
        uint32_t i = (uint32_t)(pp - pkts);

        /* Constant shapes: one specialised loop each. */
        switch (shape) {
#define PARSE_RUN_CASE(s)                       \
    case s:                                     \
        stop = parse_run(s, pp, end, keys + i); \
        break;
            PARSE_RUN_CASE(0)
            PARSE_RUN_CASE(1)
            PARSE_RUN_CASE(2)
            PARSE_RUN_CASE(3)
            PARSE_RUN_CASE(4)
            PARSE_RUN_CASE(5)
            PARSE_RUN_CASE(6)
            PARSE_RUN_CASE(7)
            PARSE_RUN_CASE(SP_MFEX_SHAPE_LATER_FRAG)
#undef PARSE_RUN_CASE
        }
        if (stop == pp) {
            slow |= UINT32_C(1) << i;
            stop++;
        }
        pp = stop;
        if (pp == end) {
            break;
        }
        shape = guess_shape(*pp);
    }
    return slow ? MFEX_LANES(pkts, slow, keys) : 0;
}

uint32_t
MFEX_FN(struct sp_packet *const *pkts, uint32_t n, struct sp_flow_key *keys)
{
    unsigned shape;

    if (!n) {
        return 0;
    }
    /* Traffic no profile takes (QinQ, MPLS, fragments, ...) would pay for
     * guessing and then the scalar parser: when the first packet of a
     * batch has no profile, the scalar parser takes the whole batch at
     * once (one guess more than scalar for such traffic; mixed traffic
     * loses the vector loop for a batch that starts with such a packet,
     * docs/perf/kernels.md). Its result is the same either way. */
    shape = guess_shape(pkts[0]);
    if (shape == SP_MFEX_PROFILES) {
        return MFEX_WHOLE_BATCH(pkts, n, keys);
    }
    return parse_batch(pkts, n, keys, shape);
}
