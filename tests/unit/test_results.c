/*
 * test_results.c - benchmark rows (src/tool/results.c): the CSV and JSON
 * columns written out exactly, reading both back, the incremental writer
 * keeping a complete file after every row, merging duplicates, and the
 * comparison with a baseline (a hand-made regression is caught, an
 * improvement is not a failure).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"
#include "tool/results.h"

static struct remat_i_row row_ok(void)
{
	struct remat_i_row r;

	memset(&r, 0, sizeof(r));
	strcpy(r.graph, "kumar-fig1");
	strcpy(r.file, "examples/kumar-fig1.json");
	strcpy(r.planner, "none");
	strcpy(r.budget_spec, "75%");
	r.nodes = 5;
	r.budget = 3;
	r.status = REMAT_I_RUN_OK;
	r.feasible = 1;
	r.has_schedule = 1;
	r.peak = 3;
	r.cost = 6;
	r.overhead = 0.2;
	r.recomputes = 1;
	r.time_s = 0.5;
	r.no_remat_peak = 4;
	r.lower_bound = 3;
	return r;
}

static struct remat_i_row row_nofit(void)
{
	struct remat_i_row r;

	memset(&r, 0, sizeof(r));
	strcpy(r.graph, "g,2");
	strcpy(r.file, "a b/g.json");
	strcpy(r.planner, "auto");
	strcpy(r.budget_spec, "1.5GiB");
	strcpy(r.error, "planner 'x' said \"no\", sorry");
	r.nodes = 10;
	r.budget = 1610612736;
	r.status = REMAT_I_RUN_NOFIT;
	r.time_s = NAN;
	r.no_remat_peak = 2147483648;
	r.lower_bound = 1073741824;
	return r;
}

static char *print_rows(int fmt, const struct remat_i_rows *t, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	remat_i_rows_print(f, fmt, t, NULL, flags);
	fclose(f);
	return buf;
}

static void two_rows(struct remat_i_rows *t)
{
	struct remat_i_row a = row_ok(), b = row_nofit();

	remat_i_rows_init(t);
	assert_int_equal(remat_i_rows_push(t, &a, NULL), REMAT_OK);
	assert_int_equal(remat_i_rows_push(t, &b, NULL), REMAT_OK);
}

static void test_csv_columns(void **state)
{
	struct remat_i_rows t;
	char *csv;

	(void)state;
	two_rows(&t);
	csv = print_rows('c', &t, 0);
	/* budget_pct: 3/4 = 75%, 1610612736/2147483648 = 75%.  Unknown values
	 * are empty; the name with a comma and the message with quotes are
	 * quoted as RFC 4180 says. */
	assert_string_equal(csv,
		"graph,file,nodes,planner,budget_spec,budget,budget_pct,status,feasible,peak,"
		"cost,overhead,recomputes,time_s,no_remat_peak,lower_bound,chosen,error\n"
		"kumar-fig1,examples/kumar-fig1.json,5,none,75%,3,75,ok,true,3,6,0.2,1,0.5,4,3,,\n"
		"\"g,2\",a b/g.json,10,auto,1.5GiB,1610612736,75,nofit,false,,,,,,2147483648,"
		"1073741824,,\"planner 'x' said \"\"no\"\", sorry\"\n");
	free(csv);
	/* Without times (baselines), time_s is empty. */
	csv = print_rows('c', &t, REMAT_I_ROWS_NO_TIME);
	assert_non_null(strstr(csv, "0.2,1,,4,3,,\n"));
	free(csv);
	remat_i_rows_free(&t);
}

static void test_json_columns(void **state)
{
	struct remat_i_rows t;
	char *js;
	cJSON *root, *rows, *a, *b;

	(void)state;
	two_rows(&t);
	js = print_rows('j', &t, 0);
	root = cJSON_Parse(js);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItem(root, "format")->valuestring, "remat-bench");
	assert_int_equal(cJSON_GetObjectItem(root, "version")->valueint, 1);
	rows = cJSON_GetObjectItem(root, "rows");
	assert_int_equal(cJSON_GetArraySize(rows), 2);
	a = cJSON_GetArrayItem(rows, 0);
	b = cJSON_GetArrayItem(rows, 1);
	assert_int_equal(cJSON_GetArraySize(a), 18);
	assert_string_equal(cJSON_GetObjectItem(a, "graph")->valuestring, "kumar-fig1");
	assert_int_equal(cJSON_GetObjectItem(a, "nodes")->valueint, 5);
	assert_int_equal(cJSON_GetObjectItem(a, "budget")->valuedouble, 3);
	assert_true(cJSON_GetObjectItem(a, "budget_pct")->valuedouble == 75);
	assert_string_equal(cJSON_GetObjectItem(a, "status")->valuestring, "ok");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(a, "feasible")));
	assert_true(cJSON_GetObjectItem(a, "overhead")->valuedouble == 0.2);
	assert_true(cJSON_GetObjectItem(a, "time_s")->valuedouble == 0.5);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(a, "error")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(b, "feasible")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(b, "peak")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(b, "overhead")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(b, "time_s")));
	assert_true(cJSON_GetObjectItem(b, "no_remat_peak")->valuedouble == 2147483648.0);
	assert_string_equal(cJSON_GetObjectItem(b, "error")->valuestring,
			    "planner 'x' said \"no\", sorry");
	cJSON_Delete(root);
	free(js);
	remat_i_rows_free(&t);
}

static void same_row(const struct remat_i_row *x, const struct remat_i_row *y)
{
	assert_string_equal(x->graph, y->graph);
	assert_string_equal(x->file, y->file);
	assert_string_equal(x->planner, y->planner);
	assert_string_equal(x->budget_spec, y->budget_spec);
	assert_string_equal(x->chosen, y->chosen);
	assert_string_equal(x->error, y->error);
	assert_int_equal(x->nodes, y->nodes);
	assert_int_equal(x->status, y->status);
	assert_int_equal(x->feasible, y->feasible);
	assert_int_equal(x->has_schedule, y->has_schedule);
	assert_int_equal(x->budget, y->budget);
	assert_int_equal(x->peak, y->peak);
	assert_int_equal(x->recomputes, y->recomputes);
	assert_int_equal(x->no_remat_peak, y->no_remat_peak);
	assert_int_equal(x->lower_bound, y->lower_bound);
	/* Figures are written to 12 significant digits. */
	assert_true(fabs(x->cost - y->cost) <= 1e-11 * fabs(x->cost));
	assert_true(fabs(x->overhead - y->overhead) <= 1e-11 * fabs(x->overhead));
	assert_true(x->time_s == y->time_s || (isnan(x->time_s) && isnan(y->time_s)));
}

static void test_round_trip(void **state)
{
	struct remat_i_rows t, back;
	struct remat_error err;
	int fmt;

	(void)state;
	two_rows(&t);
	t.v[0].overhead = 1.0 / 3; /* not exact in 12 digits */
	strcpy(t.v[0].chosen, "none");
	for (fmt = 0; fmt < 2; fmt++) {
		char *s = print_rows(fmt ? 'j' : 'c', &t, 0);

		remat_i_rows_init(&back);
		remat_error_clear(&err);
		if (remat_i_rows_read_buffer(s, strlen(s), "x", &back, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(back.n, 2);
		same_row(&t.v[0], &back.v[0]);
		same_row(&t.v[1], &back.v[1]);
		remat_i_rows_free(&back);
		free(s);
	}
	remat_i_rows_free(&t);
}

static void expect_read_error(const char *text, const char *needle)
{
	struct remat_i_rows t;
	struct remat_error err;

	remat_i_rows_init(&t);
	remat_error_clear(&err);
	assert_int_equal(remat_i_rows_read_buffer(text, strlen(text), "r.csv", &t, &err),
			 REMAT_EINPUT);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
	remat_i_rows_free(&t);
}

static void test_read_errors(void **state)
{
	(void)state;
	expect_read_error("file,planner,budget_spec,budget,feasible\nx,y,1,1,true\n",
			  "r.csv:1: not a remat bench results file (no 'status' column)");
	expect_read_error("file,planner,budget_spec,budget,status,feasible\n"
			  "g.json,none,50%,7,great,true\n",
			  "r.csv:2: 'status' must be ok, nofit, timeout, crash or error");
	expect_read_error("file,planner,budget_spec,budget,status,feasible\n"
			  "g.json,none,50%,-7,ok,true\n",
			  "r.csv:2: 'budget' must be a non-negative integer");
	expect_read_error("file,planner,budget_spec,budget,status,feasible\n"
			  "g.json,none,50%,7,ok\n", "r.csv:2: 5 fields, the header has 6");
	expect_read_error("file,planner,budget_spec,budget,status,feasible\n"
			  "\"g.json,none,50%,7,ok,true\n", "unterminated quoted field");
	expect_read_error("{\"format\": \"remat-bench\"}", "no 'rows' array");
	expect_read_error("{\"rows\": [{\"file\": \"g\", \"planner\": \"p\", \"budget_spec\": "
			  "\"5\", \"budget\": \"big\", \"status\": \"ok\", \"feasible\": true}]}",
			  "rows[0]: 'budget' must be a number");
	expect_read_error("{\"rows\": [{\"file\": \"g\", \"planner\": \"p\", \"budget\": 5, "
			  "\"status\": \"ok\", \"feasible\": true}]}",
			  "rows[0]: 'budget_spec' is required");
	expect_read_error("  \n", "empty file");
	/* Found by tests/fuzz/fuzz_results.c: CSV text is UTF-8, as JSON's. */
	expect_read_error("file,planner,budget_spec,budget,status,feasible\n"
			  "g\xc7.json,none,50%,7,ok,true\n",
			  "r.csv:2:2: invalid UTF-8 (byte 0xc7): a results file must be UTF-8 text");
}

/*
 * Found by tests/fuzz/fuzz_results.c: a time too large to round to the
 * microsecond is written as it is (not as null, which CSV cannot read
 * back), a name in another encoding becomes U+FFFD in JSON, and a long
 * error is cut between characters.
 */
static void test_round_trip_extremes(void **state)
{
	struct remat_i_rows t, back;
	struct remat_error err;
	int fmt;

	(void)state;
	two_rows(&t);
	t.v[0].time_s = 2.4e305;
	strcpy(t.v[1].file, "caf\xe9.json");
	for (fmt = 0; fmt < 2; fmt++) {
		char *s = print_rows(fmt ? 'j' : 'c', &t, 0);

		remat_i_rows_init(&back);
		remat_error_clear(&err);
		if (fmt == 0) {
			/* CSV keeps the byte, and the reader refuses it. */
			assert_int_equal(remat_i_rows_read_buffer(s, strlen(s), "x", &back, &err),
					 REMAT_EINPUT);
		} else {
			if (remat_i_rows_read_buffer(s, strlen(s), "x", &back, &err))
				fail_msg("%s", err.msg);
			assert_int_equal(back.n, 2);
			assert_true(back.v[0].time_s == 2.4e305);
			assert_string_equal(back.v[1].file, "caf\xef\xbf\xbd.json");
		}
		remat_i_rows_free(&back);
		free(s);
	}
	/* An error cut to the row's 400 bytes is cut before a whole character. */
	{
		char text[1024];
		int n = snprintf(text, sizeof(text), "file,planner,budget_spec,budget,status,"
				 "feasible,error\ng.json,none,50%%,7,error,false,");

		memset(text + n, 'x', 398); /* then an e-acute across the 400th byte */
		strcpy(text + n + 398, "\xc3\xa9\n");
		remat_i_rows_init(&back);
		if (remat_i_rows_read_buffer(text, strlen(text), "x", &back, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(strlen(back.v[0].error), 398);
		remat_i_rows_free(&back);
	}
	t.v[1].file[3] = 'e';
	{
		char *s = print_rows('c', &t, 0);

		remat_i_rows_init(&back);
		if (remat_i_rows_read_buffer(s, strlen(s), "x", &back, &err))
			fail_msg("%s", err.msg);
		assert_true(back.v[0].time_s == 2.4e305);
		remat_i_rows_free(&back);
		free(s);
	}
	remat_i_rows_free(&t);
}

static int count_json_rows(const char *path)
{
	char buf[65536];
	FILE *f = fopen(path, "r");
	size_t len;
	cJSON *root;
	int n;

	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	root = cJSON_Parse(buf);
	if (!root)
		fail_msg("%s is not JSON:\n%s", path, buf);
	n = cJSON_GetArraySize(cJSON_GetObjectItem(root, "rows"));
	cJSON_Delete(root);
	return n;
}

static void test_incremental(void **state)
{
	char dir[] = "/tmp/remat-results-XXXXXX", js[64], csv[64], line[256];
	struct remat_i_rows_out *oj, *oc;
	struct remat_i_row a = row_ok(), b = row_nofit();
	struct remat_error err;
	FILE *f;
	int lines = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(js, sizeof(js), "%s/r.json", dir);
	snprintf(csv, sizeof(csv), "%s/r.csv", dir);
	assert_int_equal(remat_i_rows_out_open(js, NULL, &oj, &err), REMAT_OK);
	assert_int_equal(remat_i_rows_out_open(csv, NULL, &oc, &err), REMAT_OK);
	/* A complete document before, between and after the rows. */
	assert_int_equal(count_json_rows(js), 0);
	assert_int_equal(remat_i_rows_out_add(oj, &a, &err), REMAT_OK);
	assert_int_equal(count_json_rows(js), 1);
	assert_int_equal(remat_i_rows_out_add(oj, &b, &err), REMAT_OK);
	assert_int_equal(count_json_rows(js), 2);
	assert_int_equal(remat_i_rows_out_add(oc, &a, &err), REMAT_OK);
	assert_int_equal(remat_i_rows_out_add(oc, &b, &err), REMAT_OK);
	/* Flushed: readable before close. */
	f = fopen(csv, "r");
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	assert_int_equal(lines, 3);
	assert_int_equal(remat_i_rows_out_close(oj, &err), REMAT_OK);
	assert_int_equal(remat_i_rows_out_close(oc, &err), REMAT_OK);
	assert_int_equal(count_json_rows(js), 2);
	/* Names that are neither .csv nor .json are refused. */
	assert_int_equal(remat_i_rows_out_open("/tmp/x.txt", NULL, &oj, &err), REMAT_EUSAGE);
	unlink(js);
	unlink(csv);
	rmdir(dir);
}

static struct remat_i_row mk(const char *file, const char *planner, const char *spec,
			     int64_t budget, int status, double ov, int64_t peak)
{
	struct remat_i_row r;

	memset(&r, 0, sizeof(r));
	strcpy(r.graph, "g");
	strcpy(r.file, file);
	strcpy(r.planner, planner);
	strcpy(r.budget_spec, spec);
	r.budget = budget;
	r.status = status;
	r.feasible = status == REMAT_I_RUN_OK;
	r.has_schedule = peak >= 0;
	r.peak = peak;
	r.overhead = ov;
	r.cost = 100 * (1 + ov);
	r.no_remat_peak = 100;
	r.time_s = NAN;
	return r;
}

static void push(struct remat_i_rows *t, struct remat_i_row r)
{
	assert_int_equal(remat_i_rows_push(t, &r, NULL), REMAT_OK);
}

static void test_dedup_and_order(void **state)
{
	struct remat_i_rows t;
	int64_t dropped;

	(void)state;
	remat_i_rows_init(&t);
	push(&t, mk("b.json", "none", "50%", 50, REMAT_I_RUN_NOFIT, 0, -1));
	push(&t, mk("a.json", "none", "90%", 90, REMAT_I_RUN_NOFIT, 0, -1));
	push(&t, mk("a.json", "auto", "90%", 90, REMAT_I_RUN_NOFIT, 0, -1));
	push(&t, mk("a.json", "none", "50%", 50, REMAT_I_RUN_NOFIT, 0, -1));
	push(&t, mk("a.json", "none", "90%", 90, REMAT_I_RUN_OK, 0, 90));
	assert_int_equal(remat_i_rows_dedup(&t, &dropped, NULL), REMAT_OK);
	assert_int_equal(dropped, 1);
	assert_int_equal(t.n, 4);
	/* File, then planner in registry order (auto before none), then budget. */
	assert_string_equal(t.v[0].planner, "auto");
	assert_string_equal(t.v[1].budget_spec, "50%");
	assert_string_equal(t.v[2].budget_spec, "90%");
	assert_int_equal(t.v[2].status, REMAT_I_RUN_OK); /* the later of the two */
	assert_string_equal(t.v[3].file, "b.json");
	remat_i_rows_free(&t);
}

static int has_finding(const struct remat_i_compare *c, int kind, const char *needle)
{
	int64_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].kind == kind && strstr(c->v[i].msg, needle))
			return 1;
	return 0;
}

static void compare_case(double tol, int64_t want_regressions)
{
	struct remat_i_rows base, cur;
	struct remat_i_compare c;
	struct remat_error err;
	int64_t i;

	remat_i_rows_init(&base);
	remat_i_rows_init(&cur);
	/* a: overhead 10% -> 12%: cost 1.12/1.10 = +1.82%. */
	push(&base, mk("g.json", "p", "a", 10, REMAT_I_RUN_OK, 0.10, 10));
	push(&cur, mk("g.json", "p", "a", 10, REMAT_I_RUN_OK, 0.12, 10));
	/* b: feasible -> no schedule. */
	push(&base, mk("g.json", "p", "b", 20, REMAT_I_RUN_OK, 0.20, 20));
	push(&cur, mk("g.json", "p", "b", 20, REMAT_I_RUN_NOFIT, 0, -1));
	/* c: infeasible -> feasible: an improvement. */
	push(&base, mk("g.json", "p", "c", 30, REMAT_I_RUN_NOFIT, 0, -1));
	push(&cur, mk("g.json", "p", "c", 30, REMAT_I_RUN_OK, 0.05, 30));
	/* d: claims to fit with a peak over its budget. */
	push(&base, mk("g.json", "p", "d", 40, REMAT_I_RUN_OK, 0, 40));
	push(&cur, mk("g.json", "p", "d", 40, REMAT_I_RUN_OK, 0, 41));
	/* e: 30% -> 25%: better. */
	push(&base, mk("g.json", "p", "e", 50, REMAT_I_RUN_OK, 0.30, 50));
	push(&cur, mk("g.json", "p", "e", 50, REMAT_I_RUN_OK, 0.25, 50));
	/* f: 10% -> 10.5%: cost +0.45%. */
	push(&base, mk("g.json", "p", "f", 60, REMAT_I_RUN_OK, 0.10, 60));
	push(&cur, mk("g.json", "p", "f", 60, REMAT_I_RUN_OK, 0.105, 60));
	/* g: the budget moved: the graph changed. */
	push(&base, mk("g.json", "p", "g", 70, REMAT_I_RUN_OK, 0, 70));
	push(&cur, mk("g.json", "p", "g", 71, REMAT_I_RUN_OK, 0, 70));
	/* h only in the baseline, i only in the results. */
	push(&base, mk("g.json", "p", "h", 80, REMAT_I_RUN_OK, 0, 80));
	push(&cur, mk("g.json", "p", "i", 90, REMAT_I_RUN_OK, 0, 90));

	assert_int_equal(remat_i_rows_compare(&base, &cur, tol, &c, &err), REMAT_OK);
	for (i = 0; i < c.n; i++)
		print_message("  [%d] %s\n", c.v[i].kind, c.v[i].msg);
	assert_int_equal(c.compared, 7);
	assert_int_equal(c.count[REMAT_I_REGRESSION], want_regressions);
	assert_int_equal(c.count[REMAT_I_MISMATCH], 1);
	assert_int_equal(c.count[REMAT_I_IMPROVED], 2);
	assert_int_equal(c.count[REMAT_I_NEW], 1);
	assert_int_equal(c.count[REMAT_I_MISSING], 1);
	assert_true(has_finding(&c, REMAT_I_REGRESSION, "g p b: feasible in the baseline "
				"(overhead +20.00%), now nofit"));
	assert_true(has_finding(&c, REMAT_I_REGRESSION, "g p d: peak 41 bytes exceeds its "
				"budget of 40 bytes"));
	assert_true(has_finding(&c, REMAT_I_IMPROVED, "g p c: now feasible"));
	assert_true(has_finding(&c, REMAT_I_IMPROVED, "g p e: overhead +25.00%, baseline "
				"+30.00%"));
	assert_true(has_finding(&c, REMAT_I_MISMATCH, "g p g: budget is 71 bytes, 70 in the "
				"baseline"));
	assert_int_equal(has_finding(&c, REMAT_I_REGRESSION, "g p a: overhead +12.00%, "
				     "baseline +10.00%: cost up 1.82%"), tol < 0.0182);
	assert_int_equal(has_finding(&c, REMAT_I_REGRESSION, "g p f:"), tol < 0.0045);
	assert_false(has_finding(&c, REMAT_I_REGRESSION, "g p c:"));
	assert_false(has_finding(&c, REMAT_I_REGRESSION, "g p e:"));
	remat_i_compare_free(&c);
	remat_i_rows_free(&base);
	remat_i_rows_free(&cur);
}

static void test_compare(void **state)
{
	(void)state;
	compare_case(0.01, 3);  /* a, b, d */
	compare_case(0.02, 2);  /* b, d: a's +1.82% is within 2% */
	compare_case(0, 4);     /* a, b, d, f */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_columns),
		cmocka_unit_test(test_json_columns),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_round_trip_extremes),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_dedup_and_order),
		cmocka_unit_test(test_compare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
