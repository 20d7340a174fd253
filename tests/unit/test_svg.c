/*
 * test_svg.c - the SVG charts (src/tool/svg.c): tick choice worked out
 * by hand, the labels a reader needs present, text escaped, invalid
 * schedules refused, and long schedules reduced to one column per pixel.
 * (The files are checked as XML by an independent parser in
 * tests/bench/run_bench_tests.py.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tool/svg.h"

static void test_nice_ticks(void **state)
{
	double first, step;

	(void)state;
	/* 100/10 = 10: norm 1 -> step 10, 0..100 is 11 ticks. */
	assert_int_equal(remat_i_nice_ticks(0, 100, 10, &first, &step), 11);
	assert_true(first == 0 && step == 10);
	/* 37/6 = 6.17 -> 5: 0, 5, ..., 35. */
	assert_int_equal(remat_i_nice_ticks(0, 37, 6, &first, &step), 8);
	assert_true(first == 0 && step == 5);
	/* 0.6/5 = 0.12 -> 0.1: 0.3, 0.4, ..., 0.9. */
	assert_int_equal(remat_i_nice_ticks(0.3, 0.9, 5, &first, &step), 7);
	assert_true(step > 0.0999999 && step < 0.1000001);
	assert_true(first > 0.2999999 && first < 0.3000001);
	/* 23/10 = 2.3 -> 2: first tick 8 (the first multiple of 2 from 7). */
	assert_int_equal(remat_i_nice_ticks(7, 30, 10, &first, &step), 12);
	assert_true(first == 8 && step == 2);
}

static char *draw(void (*fn)(FILE *, const struct remat_i_row *, int64_t),
		  const struct remat_i_row *rows, int64_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, rows, n);
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static struct remat_i_row row(const char *planner, int64_t budget, int fits, double ov)
{
	struct remat_i_row r;

	memset(&r, 0, sizeof(r));
	strcpy(r.graph, "net<1> & \"friends\"");
	strcpy(r.file, "graphs/net.json");
	strcpy(r.planner, planner);
	snprintf(r.budget_spec, sizeof(r.budget_spec), "%lld%%", (long long)budget);
	r.budget = budget * 1024 * 1024;
	r.no_remat_peak = 100 * 1024 * 1024;
	r.lower_bound = 25 * 1024 * 1024;
	r.nodes = 42;
	r.status = fits ? REMAT_I_RUN_OK : REMAT_I_RUN_NOFIT;
	r.feasible = fits;
	r.has_schedule = fits;
	r.peak = r.budget;
	r.overhead = ov;
	return r;
}

static void test_overhead_plot(void **state)
{
	struct remat_i_row rows[6];
	char *svg;

	(void)state;
	rows[0] = row("auto", 30, 0, 0);
	rows[1] = row("auto", 60, 1, 0.25);
	rows[2] = row("auto", 100, 1, 0);
	rows[3] = row("none", 30, 0, 0);
	rows[4] = row("none", 60, 0, 0);
	rows[5] = row("none", 100, 1, 0);
	svg = draw(remat_i_svg_overhead, rows, 6);
	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	/* The title, escaped; the raw name never appears. */
	assert_non_null(strstr(svg, "net&lt;1&gt; &amp; &quot;friends&quot;: compute overhead"));
	assert_null(strstr(svg, "net<1>"));
	/* Axes with units, the two reference values with their sizes. */
	assert_non_null(strstr(svg, "memory budget (% of the no-remat peak; 100% = 100.00 MiB)"));
	assert_non_null(strstr(svg, "compute overhead (% extra over no-remat cost)"));
	assert_non_null(strstr(svg, "lower bound 25.00 MiB (25.0%)"));
	assert_non_null(strstr(svg, "no-remat peak 100.00 MiB"));
	assert_non_null(strstr(svg, "42 nodes"));
	assert_non_null(strstr(svg, "6 runs, 3 within budget"));
	/* One curve per planner; the legend says how low each one went. */
	assert_int_equal(count(svg, "<g><title>"), 2);
	assert_non_null(strstr(svg, "fits down to 60%"));
	assert_non_null(strstr(svg, "fits down to 100%"));
	/* Markers only where a run fits: 2 for auto (circles), 1 for none
	 * (squares), plus one of each in the legend. */
	assert_int_equal(count(svg, "<circle"), 3);
	assert_int_equal(count(svg, "<rect x="), 2 + 1 /* shaded region */ + 1 /* frame */);
	assert_string_equal(svg + strlen(svg) - 7, "</svg>\n");
	free(svg);

	/* Nothing fits: still a picture, saying so. */
	rows[1] = row("auto", 60, 0, 0);
	rows[2] = row("auto", 100, 0, 0);
	svg = draw(remat_i_svg_overhead, rows, 3);
	assert_non_null(strstr(svg, "no run found a schedule within its budget"));
	assert_non_null(strstr(svg, "no run within budget"));
	free(svg);
}

static char *timeline(const struct remat_graph *g, const char *text, int64_t budget,
		      int want_rc)
{
	struct remat_schedule s;
	struct remat_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	remat_schedule_init(&s);
	tu_sched(g, text, &s);
	remat_error_clear(&err);
	assert_int_equal(remat_i_svg_timeline(f, g, &s, budget, "test", &err), want_rc);
	fclose(f);
	remat_schedule_release(&s);
	return buf;
}

static void test_timeline(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	char *svg;

	(void)state;
	/* A is computed again at step 4; D's step peaks at B, C, D = 3. */
	svg = timeline(g, "A B C D A E", 3, REMAT_OK);
	assert_non_null(strstr(svg, "kumar-fig1: memory at every step"));
	assert_non_null(strstr(svg, "6 steps"));
	assert_non_null(strstr(svg, "budget 3 B (fits)"));
	assert_non_null(strstr(svg, "1 recomputation "));
	assert_non_null(strstr(svg, "overhead +20.00%"));
	assert_non_null(strstr(svg, "peak 3 B (step 3)"));
	assert_non_null(strstr(svg, "no-remat peak 4 B"));
	assert_non_null(strstr(svg, "memory (bytes)"));
	assert_non_null(strstr(svg, "schedule step"));
	assert_non_null(strstr(svg, "recomputation (1)"));
	assert_null(strstr(svg, "over budget"));
	free(svg);
	/* Over a budget of 2: the excess is drawn and named. */
	svg = timeline(g, "A B C D A E", 2, REMAT_OK);
	assert_non_null(strstr(svg, "budget 2 B (over budget)"));
	assert_non_null(strstr(svg, "clip-path=\"url(#over)\""));
	free(svg);
	/* No budget: no budget line. */
	svg = timeline(g, "A B C D E", -1, REMAT_OK);
	assert_null(strstr(svg, "budget"));
	assert_non_null(strstr(svg, "0 recomputations"));
	free(svg);
	/* D before C: refused, with the simulator's reason. */
	free(timeline(g, "A B D", 3, REMAT_EINPUT));
	remat_graph_free(g);
}

static void test_timeline_long(void **state)
{
	/* A chain of 4000 nodes: 3999 computes and as many frees. */
	size_t cap = 4000 * 80, len = 0;
	char *json = malloc(cap), *svg = NULL;
	struct remat_graph *g;
	struct remat_schedule s;
	struct remat_error err;
	size_t slen = 0;
	FILE *f;
	int i;

	(void)state;
	len += (size_t)snprintf(json + len, cap - len, "{\"format\":\"remat-graph\",\"version\":1,"
				"\"nodes\":[{\"id\":\"n0\",\"kind\":\"input\",\"mem\":1048576}");
	for (i = 1; i < 4000; i++)
		len += (size_t)snprintf(json + len, cap - len, ",{\"id\":\"n%d\",\"mem\":%d,"
					"\"inputs\":[\"n%d\"]}", i, 1048576 + (i % 7) * 4096, i - 1);
	snprintf(json + len, cap - len, "]}");
	g = tu_graph(json);
	remat_schedule_init(&s);
	assert_int_equal(remat_schedule_topo(g, &s, &err), REMAT_OK);
	{
		struct remat_schedule ex;

		remat_schedule_init(&ex);
		assert_int_equal(remat_liveness(g, &s, &ex, &err), REMAT_OK);
		assert_true(ex.n > 7000);
		f = open_memstream(&svg, &slen);
		assert_int_equal(remat_i_svg_timeline(f, g, &ex, -1, NULL, &err), REMAT_OK);
		fclose(f);
		remat_schedule_release(&ex);
	}
	/* 800 columns, two points each, whatever the number of steps. */
	assert_true(count(svg, "L") <= 2 * 800 + 4);
	assert_true(slen < 60000);
	free(svg);
	free(json);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nice_ticks),
		cmocka_unit_test(test_overhead_plot),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_timeline_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
