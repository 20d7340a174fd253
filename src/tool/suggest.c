/* suggest.c - the nearest names to a mistyped one, by edit distance. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/suggest.h"

#define SUGGEST_MAX_LEN 64

int remat_i_edit_distance(const char *a, const char *b)
{
	/* Three rows of the dynamic program: i-2, i-1, i. */
	int d[3][SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return (int)(la > lb ? la : lb);
	for (j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= la; i++) {
		int *cur = d[i % 3], *prev = d[(i - 1) % 3], *prev2 = d[(i + 1) % 3];

		cur[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]);
			int cb = tolower((unsigned char)b[j - 1]);
			int best = prev[j - 1] + (ca != cb);

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
	}
	return d[la % 3][lb];
}

int remat_i_suggest(const char *name, const char *const *candidates, char *buf,
		    size_t size)
{
	int limit = strlen(name) <= 5 ? 1 : 2, best = limit + 1, n = 0;
	const char *const *c;
	size_t len = 0;

	buf[0] = '\0';
	for (c = candidates; *c; c++) {
		int d = remat_i_edit_distance(name, *c);

		if (d < best)
			best = d;
	}
	if (best > limit)
		return 0;
	for (c = candidates; *c; c++) {
		if (remat_i_edit_distance(name, *c) != best)
			continue;
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s'%s'",
						n ? " or " : "", *c);
		n++;
	}
	return n;
}
