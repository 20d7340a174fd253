/*
 * fuzz_results.c - libFuzzer target for the bench results reader that
 * 'remat bench --merge' and '--baseline' use (src/tool/results.c; CSV or
 * JSON, told apart by content).  Any byte string must read or fail with
 * a message.  Rows that read must survive the merge (dedup, sort), print
 * as CSV and as JSON, read back to the same number of rows, and compare
 * with themselves as a baseline.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "remat/remat.h"
#include "tool/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print t in format fmt and read it back: the same number of rows. */
static void round_trip(const struct remat_i_rows *t, int fmt)
{
	struct remat_i_rows back;
	struct remat_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	remat_i_rows_print(f, fmt, t, NULL, 0);
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	remat_i_rows_init(&back);
	remat_error_clear(&err);
	if (remat_i_rows_read_buffer(text, len, "round-trip", &back, &err) != REMAT_OK) {
		if (err.code != REMAT_ENOMEM)
			abort(); /* what the writer wrote, the reader must read */
	} else if (back.n != t->n) {
		abort();
	}
	remat_i_rows_free(&back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct remat_i_rows t, copy;
	struct remat_i_compare cmp = { 0 };
	struct remat_error err;
	int64_t dropped = 0;

	remat_i_rows_init(&t);
	remat_error_clear(&err);
	if (remat_i_rows_read_buffer((const char *)data, size, "fuzz", &t, &err) != REMAT_OK) {
		if (!err.msg[0])
			abort();
		remat_i_rows_free(&t);
		return 0;
	}
	remat_i_rows_init(&copy);
	for (int64_t i = 0; i < t.n; i++)
		if (remat_i_rows_push(&copy, &t.v[i], &err) != REMAT_OK)
			goto out;
	if (remat_i_rows_dedup(&t, &dropped, &err) != REMAT_OK)
		goto out;
	if (dropped < 0 || t.n + dropped != copy.n)
		abort();
	round_trip(&t, 'c');
	round_trip(&t, 'j');
	remat_i_rows_compare(&copy, &t, 0.01, &cmp, &err);
	remat_i_compare_free(&cmp);
out:
	remat_i_rows_free(&copy);
	remat_i_rows_free(&t);
	return 0;
}
