/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal: which profile takes a packet, for the x86 miniflow extract
 * parsers. Included by src/avx2/mfex.c and src/avx512/mfex.c after they
 * define, each with its own registers, struct loaded_profile (its member
 * prof is the profile), load_profile() and probe_matches() on the first 32
 * bytes; no include guard, since each includer has its own definitions.
 */
#include <immintrin.h>

#include "mfex_profile.h"

/* True when a profile takes the packet (len >= SP_MFEX_MIN_LEN): the one in
 * *lp, the previous packet's (traffic comes in runs of one shape), or else
 * the guess, which is then loaded into *lp; and its lengths check out. */
static inline bool
take_packet(struct loaded_profile *lp, const uint8_t *p, uint32_t len)
{
    __m256i head = _mm256_loadu_si256((const __m256i *)p);

    if (!probe_matches(lp, head, len)) {
        const struct sp_mfex_profile *guess =
            &sp_mfex_profiles[sp_mfex_profile_guess(p)];

        if (guess == lp->prof) { /* its probe just failed */
            return false;
        }
        *lp = load_profile(guess);
        if (!probe_matches(lp, head, len)) {
            return false;
        }
    }
    return sp_mfex_profile_lengths_ok(lp->prof, p, len);
}
