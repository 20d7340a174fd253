/*
 * test_bench.c - the benchmark runner (src/tool/bench.c): choosing
 * planners, finding graph files in folders, expanding jobs, and the pool
 * of forked runs, with planners made for the test that succeed, find
 * nothing, crash, ignore their deadline, honour it, or break the contract.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "core/util.h"
#include "tool/bench.h"

static void test_planner_lists(void **state)
{
	const struct remat_planner *const *all = remat_planner_list();
	const struct remat_planner **p;
	struct remat_error err;
	int n, total = 0, fast = 0, i;

	(void)state;
	for (i = 0; all[i]; i++) {
		total++;
		fast += strcmp(all[i]->name, "auto") == 0 || (all[i]->flags & REMAT_PLANNER_AUTO);
	}
	assert_int_equal(remat_i_bench_planners("all", &p, &n, &err), REMAT_OK);
	assert_int_equal(n, total);
	for (i = 0; i < n; i++)
		assert_ptr_equal(p[i], all[i]);
	free(p);
	assert_int_equal(remat_i_bench_planners("fast", &p, &n, &err), REMAT_OK);
	assert_int_equal(n, fast);
	free(p);
	/* Registry order whatever the order asked; "-" takes away. */
	assert_int_equal(remat_i_bench_planners("none,auto", &p, &n, &err), REMAT_OK);
	assert_int_equal(n, 2);
	assert_string_equal(p[0]->name, "auto");
	assert_string_equal(p[1]->name, "none");
	free(p);
	assert_int_equal(remat_i_bench_planners("all,-auto", &p, &n, &err), REMAT_OK);
	assert_int_equal(n, total - 1);
	for (i = 0; i < n; i++)
		assert_string_not_equal(p[i]->name, "auto");
	free(p);
	assert_int_equal(remat_i_bench_planners("none,bogus", &p, &n, &err), REMAT_EUSAGE);
	assert_non_null(strstr(err.msg, "unknown planner 'bogus'"));
	assert_int_equal(remat_i_bench_planners("none,-none", &p, &n, &err), REMAT_EUSAGE);
	assert_non_null(strstr(err.msg, "selects no planner"));
	assert_int_equal(remat_i_bench_planners("none,", &p, &n, &err), REMAT_EUSAGE);
}

static void touch(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/remat-bench-XXXXXX", sub[64], slash[64];
	const char *paths[3];
	char **files;
	uint8_t *from_dir;
	int n;
	struct remat_error err;
	struct remat_graph *g;
	int skipped;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	touch(dir, "b.json", TU_KUMAR);
	touch(dir, "a.csv", "x");
	touch(dir, ".hidden.json", "{}");
	touch(dir, "notes.txt", "x");
	touch(sub, "c.json", "{\"format\": \"remat-schedule\", \"steps\": []}");
	touch(sub, "d.json", "{\"format\": \"remat-graph\", \"version\": 1}");

	/* A trailing slash names the same files. */
	snprintf(slash, sizeof(slash), "%s/", dir);
	paths[0] = slash;
	paths[1] = "given.json";
	assert_int_equal(remat_i_bench_files(paths, 2, 0, &files, &from_dir, &n, &err), REMAT_OK);
	assert_int_equal(n, 4);
	assert_string_equal(remat_i_basename(files[0]), "b.json");
	assert_true(strncmp(files[0], dir, strlen(dir)) == 0 && files[0][strlen(dir)] == '/' &&
		    files[0][strlen(dir) + 1] == 'b');
	assert_string_equal(files[1] + strlen(dir), "/sub/c.json");
	assert_string_equal(files[2] + strlen(dir), "/sub/d.json");
	assert_string_equal(files[3], "given.json");
	assert_int_equal(from_dir[0], 1);
	assert_int_equal(from_dir[3], 0);

	/* In a folder, a schedule is skipped but a broken graph is an error. */
	assert_int_equal(remat_i_bench_load(files[0], 1, &g, &skipped, &err), REMAT_OK);
	assert_int_equal(skipped, 0);
	assert_int_equal(g->n, 5);
	remat_graph_free(g);
	assert_int_equal(remat_i_bench_load(files[1], 1, &g, &skipped, &err), REMAT_OK);
	assert_int_equal(skipped, 1);
	assert_null(g);
	assert_int_equal(remat_i_bench_load(files[2], 1, &g, &skipped, &err), REMAT_EINPUT);
	/* Named on the command line, a schedule is an error too. */
	assert_int_equal(remat_i_bench_load(files[1], 0, &g, &skipped, &err), REMAT_EINPUT);
	remat_i_bench_files_free(files, from_dir, n);

	assert_int_equal(remat_i_bench_files(paths, 1, 1, &files, &from_dir, &n, &err), REMAT_OK);
	assert_int_equal(n, 4);
	assert_string_equal(remat_i_basename(files[0]), "a.csv");
	remat_i_bench_files_free(files, from_dir, n);

	paths[0] = "/nonexistent-dir/";
	assert_int_equal(remat_i_bench_files(paths, 1, 0, &files, &from_dir, &n, &err), REMAT_OK);
	assert_int_equal(n, 1); /* kept as given: loading it reports the error */
	remat_i_bench_files_free(files, from_dir, n);

	snprintf(slash, sizeof(slash), "rm -r %s", dir);
	assert_int_equal(system(slash), 0);
}

/* ---- planners made for the pool test ---- */

static int quick_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		      struct remat_error *err)
{
	return remat_schedule_topo(req->graph, out, err);
}

static int crash_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		      struct remat_error *err)
{
	(void)req;
	(void)out;
	(void)err;
	raise(SIGKILL);
	return REMAT_OK;
}

static void nap(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static int stubborn_plan(const struct remat_plan_request *req, struct remat_schedule *out,
			 struct remat_error *err)
{
	int i;

	(void)req;
	(void)out;
	(void)err;
	for (i = 0; i < 3000; i++) /* a minute, whatever the deadline */
		nap();
	return REMAT_OK;
}

static int honest_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		       struct remat_error *err)
{
	(void)out;
	while (!remat_plan_expired(req))
		nap();
	return REMAT_FAIL(err, REMAT_ECANCELED, "gave up at the deadline");
}

static int buggy_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		      struct remat_error *err)
{
	/* E before its inputs: an invalid schedule. */
	return remat_schedule_push(out, REMAT_OP_COMPUTE, remat_graph_find(req->graph, "E"), err);
}

static const struct remat_planner quick = { "quick", "", 0, NULL, quick_plan };
static const struct remat_planner crash = { "crash", "", 0, NULL, crash_plan };
static const struct remat_planner stubborn = { "stubborn", "", 0, NULL, stubborn_plan };
static const struct remat_planner honest = { "honest", "", 0, NULL, honest_plan };
static const struct remat_planner buggy = { "buggy", "", 0, NULL, buggy_plan };

struct collect {
	struct remat_i_rows rows;
	int stop_after;             /* set the stop flag after this many rows */
	volatile sig_atomic_t *stop;
	int fail;                   /* on_row returns REMAT_EIO */
};

static int collect_row(void *ctx, const struct remat_i_row *r, struct remat_error *err)
{
	struct collect *c = ctx;

	if (c->fail)
		return REMAT_FAIL(err, REMAT_EIO, "cannot write");
	assert_int_equal(remat_i_rows_push(&c->rows, r, err), REMAT_OK);
	if (c->stop_after && c->rows.n >= c->stop_after)
		*c->stop = 1;
	return REMAT_OK;
}

static const struct remat_i_row *find_row(const struct collect *c, const char *planner,
					  int64_t budget)
{
	int64_t i;

	for (i = 0; i < c->rows.n; i++)
		if (strcmp(c->rows.v[i].planner, planner) == 0 && c->rows.v[i].budget == budget)
			return &c->rows.v[i];
	fail_msg("no row for %s at %lld", planner, (long long)budget);
	return NULL;
}

static void test_pool(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_i_bench_graph gr = { "kumar.json", g };
	struct remat_i_bench_job jobs[] = {
		{ 0, &quick, "100%", 4 }, { 0, &quick, "75%", 3 }, { 0, &crash, "100%", 4 },
		{ 0, &stubborn, "100%", 4 }, { 0, &honest, "75%", 3 }, { 0, &buggy, "100%", 4 },
	};
	struct remat_i_bench_opts o;
	struct collect c;
	const struct remat_i_row *r;
	struct remat_error err;
	double t0;

	(void)state;
	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	remat_i_rows_init(&c.rows);
	o.jobs = 3;
	o.time_limit = 0.3;
	o.on_row = collect_row;
	o.ctx = &c;
	t0 = remat_now();
	assert_int_equal(remat_i_bench_pool(&gr, jobs, 6, &o, &err), REMAT_OK);
	/* The stubborn run is killed at 0.3 + 2 s, not after its minute. */
	assert_true(remat_now() - t0 < 10);
	assert_int_equal(c.rows.n, 6);

	/* Kumar's no-remat order peaks at 4 with cost 5 (5 nodes of cost 1). */
	r = find_row(&c, "quick", 4);
	assert_int_equal(r->status, REMAT_I_RUN_OK);
	assert_true(r->feasible && r->has_schedule);
	assert_int_equal(r->peak, 4);
	assert_true(r->cost == 5 && r->overhead == 0);
	assert_int_equal(r->no_remat_peak, 4);
	assert_int_equal(r->lower_bound, 3);
	assert_int_equal(r->nodes, 5);
	assert_string_equal(r->file, "kumar.json");
	assert_string_equal(r->budget_spec, "100%");
	/* At 3 the same schedule is over budget. */
	r = find_row(&c, "quick", 3);
	assert_int_equal(r->status, REMAT_I_RUN_NOFIT);
	assert_false(r->feasible);
	assert_true(r->has_schedule);
	assert_int_equal(r->peak, 4);
	r = find_row(&c, "crash", 4);
	assert_int_equal(r->status, REMAT_I_RUN_CRASH);
	assert_non_null(strstr(r->error, "signal 9"));
	r = find_row(&c, "stubborn", 4);
	assert_int_equal(r->status, REMAT_I_RUN_TIMEOUT);
	assert_non_null(strstr(r->error, "killed after"));
	assert_true(r->time_s >= 2.3 - 0.05);
	/*
	 * Below the no-remat peak (at it, the runner would hand out the
	 * no-remat order in place of the planner that gave up).
	 */
	r = find_row(&c, "honest", 3);
	assert_int_equal(r->status, REMAT_I_RUN_TIMEOUT);
	assert_string_equal(r->error, "gave up at the deadline");
	assert_true(r->time_s >= 0.3 && r->time_s < 2.3);
	r = find_row(&c, "buggy", 4);
	assert_int_equal(r->status, REMAT_I_RUN_ERROR);
	assert_non_null(strstr(r->error, "invalid schedule"));
	remat_i_rows_free(&c.rows);
	remat_graph_free(g);
}

static void test_pool_stops(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_i_bench_graph gr = { "kumar.json", g };
	struct remat_i_bench_job jobs[5];
	volatile sig_atomic_t stop = 0;
	struct remat_i_bench_opts o;
	struct collect c;
	struct remat_error err;
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		jobs[i].graph = 0;
		jobs[i].planner = &quick;
		jobs[i].budget_spec = "100%";
		jobs[i].budget = 4;
	}
	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	o.jobs = 1;
	o.on_row = collect_row;
	o.ctx = &c;
	o.stop = &stop;
	c.stop = &stop;
	c.stop_after = 2;
	assert_int_equal(remat_i_bench_pool(&gr, jobs, 5, &o, &err), REMAT_ECANCELED);
	assert_int_equal(c.rows.n, 2);
	remat_i_rows_free(&c.rows);

	/* A failing on_row stops the pool with its status. */
	memset(&c, 0, sizeof(c));
	stop = 0;
	c.fail = 1;
	assert_int_equal(remat_i_bench_pool(&gr, jobs, 5, &o, &err), REMAT_EIO);
	assert_string_equal(err.msg, "cannot write");
	remat_graph_free(g);
}

static void test_expand_and_kill_time(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_i_bench_graph gr[2] = { { "a.json", g }, { "b.json", g } };
	const struct remat_planner *ps[2] = { &quick, &honest };
	char *budgets[3] = { "100%", "75%", "2" };
	struct remat_i_bench_job *jobs;
	int64_t n;
	struct remat_error err;

	(void)state;
	assert_int_equal(remat_i_bench_expand(gr, 2, ps, 2, budgets, 3, &jobs, &n, &err), REMAT_OK);
	assert_int_equal(n, 12);
	/* Graph, then planner, then budget; percentages of the peak of 4. */
	assert_int_equal(jobs[0].graph, 0);
	assert_ptr_equal(jobs[0].planner, &quick);
	assert_int_equal(jobs[0].budget, 4);
	assert_int_equal(jobs[1].budget, 3);
	assert_int_equal(jobs[2].budget, 2);
	assert_ptr_equal(jobs[3].planner, &honest);
	assert_int_equal(jobs[6].graph, 1);
	free(jobs);
	assert_true(remat_i_bench_kill_after(0.3) == 2.3);
	assert_true(remat_i_bench_kill_after(100) == 110);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_planner_lists),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_pool_stops),
		cmocka_unit_test(test_expand_and_kill_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
