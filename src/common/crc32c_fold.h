/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Folding a 64-byte flow key for CRC-32C with carry-less multiplies: the
 * 64-bit word at byte offset 8*i (i < 6) is multiplied by
 * sp_crc32c_fold[i] (x^d mod P, bit-reflected, d its distance to the end)
 * and XORed onto the last 16 bytes; the CRC of those 16 bytes is the CRC of
 * the key. Derived and checked by scripts/gen-crc32c-fold.py.
 */
#ifndef SP_CRC32C_FOLD_H
#define SP_CRC32C_FOLD_H

#define SP_CRC32C_FOLD_0 0x1c291d04 /* bytes 0-7 */
#define SP_CRC32C_FOLD_1 0xddc0152b /* bytes 8-15 */
#define SP_CRC32C_FOLD_2 0x3da6d0cb
#define SP_CRC32C_FOLD_3 0xba4fc28e
#define SP_CRC32C_FOLD_4 0xf20c0dfe
#define SP_CRC32C_FOLD_5 0x493c7d27 /* bytes 40-47 */

#endif /* SP_CRC32C_FOLD_H */
