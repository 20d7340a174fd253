/* test_budget.c - budget parsing (FORMATS.md section 3), values by hand. */
#include <string.h>

#include "testutil.h"

static int64_t bytes(const char *text, int64_t peak)
{
	int64_t b = -1;
	struct remat_error err;

	if (remat_budget_bytes(text, peak, &b, &err) != REMAT_OK)
		fail_msg("'%s' did not parse: %s", text, err.msg);
	return b;
}

static void bad(const char *text, int64_t peak)
{
	int64_t b = -1;
	struct remat_error err;

	if (remat_budget_bytes(text, peak, &b, &err) != REMAT_EUSAGE)
		fail_msg("'%s' parsed as %lld", text, (long long)b);
	assert_non_null(strstr(err.msg, text));
}

static void test_plain_and_units(void **state)
{
	(void)state;
	assert_int_equal(bytes("1073741824", -1), 1073741824);
	assert_int_equal(bytes("0", -1), 0);
	assert_int_equal(bytes("7B", -1), 7);
	assert_int_equal(bytes("1kb", -1), 1000);
	assert_int_equal(bytes("1KB", -1), 1000);
	assert_int_equal(bytes("3MB", -1), 3000000);
	assert_int_equal(bytes("2GB", -1), 2000000000);
	assert_int_equal(bytes("1TB", -1), 1000000000000);
	assert_int_equal(bytes("1KiB", -1), 1024);
	assert_int_equal(bytes("1mib", -1), 1048576);
	assert_int_equal(bytes("4GiB", -1), 4294967296);
	assert_int_equal(bytes("2TiB", -1), 2199023255552);
	assert_int_equal(bytes("800 MB", -1), 800000000);
	assert_int_equal(bytes("  16KiB  ", -1), 16384);
}

static void test_decimals_round_down(void **state)
{
	(void)state;
	assert_int_equal(bytes("1.5GiB", -1), 1610612736);
	assert_int_equal(bytes("4.0gib", -1), 4294967296);
	assert_int_equal(bytes(".5KiB", -1), 512);
	assert_int_equal(bytes("5.", -1), 5);
	assert_int_equal(bytes("1.9", -1), 1);
	assert_int_equal(bytes("0.5B", -1), 0);
	/* 0.001 KiB = 1.024 bytes. */
	assert_int_equal(bytes("0.001KiB", -1), 1);
	/* 1.1 MB = 1100000 exactly, no binary rounding. */
	assert_int_equal(bytes("1.1MB", -1), 1100000);
	assert_int_equal(bytes("0.3GB", -1), 300000000);
}

static void test_percent(void **state)
{
	(void)state;
	assert_int_equal(bytes("100%", 4), 4);
	assert_int_equal(bytes("60%", 1000), 600);
	assert_int_equal(bytes("75%", 7), 5);          /* 5.25 */
	assert_int_equal(bytes("62.5%", 7), 4);        /* 4.375 */
	assert_int_equal(bytes("33.3%", 1000), 333);   /* exactly 333 */
	assert_int_equal(bytes("0%", 1000), 0);
	assert_int_equal(bytes("150%", 10), 15);
	assert_int_equal(bytes("70%", 10485760), 7340032);
}

static void test_garbage(void **state)
{
	(void)state;
	bad("lots", 10);
	bad("-5MiB", 10);
	bad("", 10);
	bad("GiB", 10);
	bad("5 GiBs", 10);
	bad("1e9", 10);
	bad("5%%", 10);
	bad("%", 10);
	bad("1.2.3", 10);
	bad("4 G iB", 10);
	bad("+5", 10);
	assert_int_equal(bytes("5 %", 100), 5); /* a blank before the unit is fine */
	bad("0x10", 10);
}

static void test_overflow(void **state)
{
	(void)state;
	assert_int_equal(bytes("9223372036854775807", -1), INT64_MAX);
	bad("9223372036854775808", -1);
	bad("99999999999999999999", -1);
	bad("9000000TiB", -1);
	bad("1000000000000000%", INT64_MAX / 2);
	/* A percentage needs a graph. */
	{
		int64_t b;
		struct remat_error err;

		assert_int_equal(remat_budget_bytes("50%", -1, &b, &err), REMAT_EUSAGE);
	}
}

static void test_lowest(void **state)
{
	const char *yes[] = { "lowest", "LOWEST", " Lowest " };
	const char *no[] = { "lowestx", "low", "lowest%", "1lowest" };
	struct remat_budget_spec spec;
	struct remat_error err;
	int64_t bytes;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		assert_int_equal(remat_budget_parse(yes[i], &spec, &err), REMAT_OK);
		assert_true(spec.lowest);
		/* No size: only remat plan takes it. */
		assert_int_equal(remat_budget_resolve(&spec, 1000, &bytes, &err), REMAT_EUSAGE);
		assert_non_null(strstr(err.msg, "only 'remat plan'"));
	}
	for (i = 0; i < sizeof(no) / sizeof(*no); i++)
		assert_int_equal(remat_budget_parse(no[i], &spec, &err), REMAT_EUSAGE);
	assert_int_equal(remat_budget_parse("60%", &spec, &err), REMAT_OK);
	assert_false(spec.lowest);
}

static void test_format_bytes(void **state)
{
	char buf[32];

	(void)state;
	remat_format_bytes(0, buf, sizeof(buf));
	assert_string_equal(buf, "0 B");
	remat_format_bytes(1023, buf, sizeof(buf));
	assert_string_equal(buf, "1023 B");
	remat_format_bytes(1024, buf, sizeof(buf));
	assert_string_equal(buf, "1.00 KiB");
	remat_format_bytes(1536, buf, sizeof(buf));
	assert_string_equal(buf, "1.50 KiB");
	remat_format_bytes(7340032, buf, sizeof(buf));
	assert_string_equal(buf, "7.00 MiB");
	remat_format_bytes(3435973837LL, buf, sizeof(buf));
	assert_string_equal(buf, "3.20 GiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_units),
		cmocka_unit_test(test_decimals_round_down),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_format_bytes),
		cmocka_unit_test(test_lowest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
