/*
 * suggest.h - "did you mean ...?" for a mistyped name (a command, a
 * planner): the candidates nearest to it by edit distance.
 */
#ifndef REMAT_SUGGEST_H
#define REMAT_SUGGEST_H

#include <stddef.h>

/*
 * Optimal string alignment distance (Levenshtein plus the swap of two
 * neighbouring characters, as in 'plna' for 'plan'), case-insensitive.
 */
int remat_i_edit_distance(const char *a, const char *b);

/*
 * Write into buf the candidates (a NULL-terminated list) nearest to name,
 * quoted and joined with " or " ("'plan'", "'chen' or 'dtr'"), when they
 * are near enough to be a typo: at distance 1 for names of up to 5
 * characters, 2 for longer ones.  Returns how many were written (0: buf
 * is "").
 */
int remat_i_suggest(const char *name, const char *const *candidates, char *buf,
		    size_t size);

#endif
