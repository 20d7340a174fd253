/*
 * rand.h - the one random sequence of libremat: splitmix64 (Steele, Lea
 * and Flood 2014), a fixed, portable sequence for a given seed, so that
 * every seeded search (orders, LNS's replay search, the LP rounding, the
 * generators) is the same on every machine.  Internal to libremat.
 */
#ifndef REMAT_CORE_RAND_H
#define REMAT_CORE_RAND_H

#include <stdint.h>

/* The next number of the sequence whose state is *s. */
uint64_t remat_i_rand_next(uint64_t *s);

/*
 * A number in [0, n): the next one modulo n (0 when n <= 1).  Slightly
 * biased toward small values for huge n, which the searches do not mind;
 * the generators, which must be uniform, reject instead.
 */
int64_t remat_i_rand_below(uint64_t *s, int64_t n);

#endif
