/* rand.c - splitmix64; see rand.h. */
#include "core/rand.h"

uint64_t remat_i_rand_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int64_t remat_i_rand_below(uint64_t *s, int64_t n)
{
	return n <= 1 ? 0 : (int64_t)(remat_i_rand_next(s) % (uint64_t)n);
}
