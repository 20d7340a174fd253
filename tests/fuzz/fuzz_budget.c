/*
 * fuzz_budget.c - libFuzzer target for the budget and size parser
 * (remat/budget.h): any text must parse or fail with a message; a parsed
 * budget resolves against several no-remat peaks to a size from 0 up or
 * to an error with a message, the same through remat_budget_bytes(), and
 * formats into a short buffer without overrunning it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remat/remat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t peaks[] = { 0, 1, 1000, 4096, (int64_t)1 << 53, INT64_MAX };
	struct remat_budget_spec spec;
	struct remat_error err;
	char text[257], buf[16];

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	remat_error_clear(&err);
	if (remat_budget_parse(text, &spec, &err) != REMAT_OK) {
		if (!err.msg[0] || err.code != REMAT_EUSAGE)
			abort();
		return 0;
	}
	for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++) {
		int64_t a = -1, b = -1;
		int ra, rb;

		remat_error_clear(&err);
		ra = remat_budget_resolve(&spec, peaks[i], &a, &err);
		if (ra != REMAT_OK && !err.msg[0])
			abort();
		remat_error_clear(&err);
		rb = remat_budget_bytes(text, peaks[i], &b, &err);
		if (ra != rb || (ra == REMAT_OK && (a != b || a < 0)))
			abort();
		if (ra == REMAT_OK && spec.percent && spec.num == 100 && spec.scale == 0 &&
		    a != peaks[i])
			abort(); /* 100% is the peak itself */
		if (ra == REMAT_OK) {
			remat_format_bytes(a, buf, (int)sizeof(buf));
			if (!memchr(buf, '\0', sizeof(buf)))
				abort();
		}
	}
	return 0;
}
