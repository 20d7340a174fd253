/*
 * test_budget_range.c - budget lists and ranges (src/tool/budget_range.c).
 * Expected points are worked out by hand from the definition in
 * budget_range.h: LO + k(HI-LO)/(N-1), percentages rounded to the nearest
 * millionth, sizes down to a byte; steps walk from LO towards HI.
 */
#include <string.h>

#include "testutil.h"
#include "tool/budget_range.h"

/* Parse text and compare with the NULL-terminated list want. */
static void expect(const char *text, const char *const *want)
{
	struct remat_i_budget_list l;
	struct remat_error err;
	int i, n = 0;

	remat_error_clear(&err);
	if (remat_i_budget_list_parse(text, &l, &err) != REMAT_OK)
		fail_msg("'%s' did not parse: %s", text, err.msg);
	while (want[n])
		n++;
	if (l.n != n) {
		for (i = 0; i < l.n; i++)
			print_message("  got[%d] = %s\n", i, l.text[i]);
		fail_msg("'%s': %d points, expected %d", text, l.n, n);
	}
	for (i = 0; i < n; i++)
		if (strcmp(l.text[i], want[i]) != 0)
			fail_msg("'%s': point %d is '%s', expected '%s'", text, i, l.text[i], want[i]);
	remat_i_budget_list_free(&l);
}

static void expect_error(const char *text, const char *needle)
{
	struct remat_i_budget_list l;
	struct remat_error err;

	remat_error_clear(&err);
	if (remat_i_budget_list_parse(text, &l, &err) == REMAT_OK)
		fail_msg("'%s' parsed (%d points), expected an error", text, l.n);
	assert_int_equal(err.code, REMAT_EUSAGE);
	if (!strstr(err.msg, needle))
		fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, needle);
}

static void test_single_and_lists(void **state)
{
	(void)state;
	expect("60%", (const char *const[]){ "60%", NULL });
	expect(" 1.5GiB ", (const char *const[]){ "1.5GiB", NULL });
	expect("90%,80%,4GiB", (const char *const[]){ "90%", "80%", "4GiB", NULL });
	/* Repeats are kept once, in order of first appearance. */
	expect("50%,60%,50%", (const char *const[]){ "50%", "60%", NULL });
}

static void test_count_ranges(void **state)
{
	(void)state;
	/* 70/7 = 10 exactly. */
	expect("30%..100%:8", (const char *const[]){ "30%", "40%", "50%", "60%", "70%",
						     "80%", "90%", "100%", NULL });
	/* 70/9 = 7.777...: 37.7777.. -> 37.777778, 45.5555.. -> 45.555556, ... */
	expect("30%..100%:10", (const char *const[]){ "30%", "37.777778%", "45.555556%",
						      "53.333333%", "61.111111%", "68.888889%",
						      "76.666667%", "84.444444%", "92.222222%",
						      "100%", NULL });
	expect("0%..1%:3", (const char *const[]){ "0%", "0.5%", "1%", NULL });
	/* Downwards works the same way. */
	expect("100%..50%:3", (const char *const[]){ "100%", "75%", "50%", NULL });
	/* Sizes become bytes: 1000 + 1001/2 = 1500.5 rounds down. */
	expect("1000..2001:3", (const char *const[]){ "1000", "1500", "2001", NULL });
	expect("1KiB..2KiB:2", (const char *const[]){ "1024", "2048", NULL });
	/* Units may differ between the ends: 1 MB = 1000000, 1 MiB = 1048576. */
	expect("1MB..1MiB:3", (const char *const[]){ "1000000", "1024288", "1048576", NULL });
}

static void test_step_ranges(void **state)
{
	(void)state;
	expect("30%..100%:10%", (const char *const[]){ "30%", "40%", "50%", "60%", "70%",
						       "80%", "90%", "100%", NULL });
	/* HI is included only when reached exactly. */
	expect("30%..100%:20%", (const char *const[]){ "30%", "50%", "70%", "90%", NULL });
	expect("100%..70%:10%", (const char *const[]){ "100%", "90%", "80%", "70%", NULL });
	expect("10%..11%:0.25%", (const char *const[]){ "10%", "10.25%", "10.5%", "10.75%",
							"11%", NULL });
	/* 1 GiB + k * 256 MiB. */
	expect("1GiB..2GiB:256MiB", (const char *const[]){ "1073741824", "1342177280",
							   "1610612736", "1879048192",
							   "2147483648", NULL });
	expect("100..105:2B", (const char *const[]){ "100", "102", "104", NULL });
}

static void test_mixed_list(void **state)
{
	(void)state;
	/* 40% from the range is already in the list. */
	expect("1MB,40%,30%..50%:3", (const char *const[]){ "1MB", "40%", "30%", "50%", NULL });
}

static void test_round_trip(void **state)
{
	struct remat_i_budget_list l;
	struct remat_error err;
	int64_t b;

	(void)state;
	/* Every point is itself a budget: 37.777778% of 900 is 340.0000002. */
	assert_int_equal(remat_i_budget_list_parse("30%..100%:10", &l, &err), REMAT_OK);
	assert_int_equal(remat_budget_bytes(l.text[1], 900, &b, &err), REMAT_OK);
	assert_int_equal(b, 340);
	assert_int_equal(remat_budget_bytes(l.text[9], 900, &b, &err), REMAT_OK);
	assert_int_equal(b, 900);
	remat_i_budget_list_free(&l);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("", "empty item");
	expect_error("50%,,60%", "empty item");
	expect_error("abc", "cannot read budget 'abc'");
	expect_error("30%..100%", "needs ':N'");
	expect_error("30%..1GiB:3", "both ends must be percentages or both sizes");
	expect_error("30%..100%:1", "number of points must be from 2");
	expect_error("30%..100%:5MiB", "the step must be a percentage");
	expect_error("1GiB..2GiB:5%", "the step must be a size with a unit");
	expect_error("30%..100%:0%", "the step must be positive");
	expect_error("0%..100%:0.000001%", "more than 100000 points");
	expect_error("1.1234567%..2%:2", "at most 6 decimals");
	expect_error("x..100%:3", "budget range 'x..100%:3': cannot read budget 'x'");
	expect_error("10%..20%:abc", "step: cannot read budget 'abc'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_and_lists),
		cmocka_unit_test(test_count_ranges),
		cmocka_unit_test(test_step_ranges),
		cmocka_unit_test(test_mixed_list),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
