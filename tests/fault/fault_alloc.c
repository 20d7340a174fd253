/*
 * fault_alloc.c - allocation failure injection into libremat.
 *
 * Design
 * ------
 * This executable is linked with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc,--wrap=strdup,--wrap=free (tests/CMakeLists.txt), so that
 * every call those functions get from the objects linked statically into
 * it -- libremat.a, testutil.c and this file -- goes to the __wrap_*
 * functions below, which pass it on to the C library (__real_*) unless
 * told to fail it.  src/ is untouched.  What is NOT wrapped: allocations
 * made inside shared libraries -- cJSON's parse trees and printed strings,
 * CBC's and GLPK's solver state, igraph, the C library's own (fopen,
 * fdopen, mkstemp, stdio buffers) -- so their failures are not injected.
 * The CBC backend solves in a forked child (src/solver/milp_cbc.c): the
 * counter is in shared memory, so the child's allocations count and fail
 * too (its blocks are not tracked: it leaves through _exit()).
 *
 * For each operation (a library call on a small input, followed by the
 * checks and the frees of what it returned), N = 1, 2, ...: the N-th
 * allocation counted during the call fails, in two modes -- "once" (that
 * call only, a transient failure) and "from" (that call and every later
 * one, exhaustion) -- until a run makes fewer than N allocations, that is
 * until the call succeeds without meeting the failure.  For the slow
 * exact planners (each run forks CBC) every stride-th N is tried, and
 * every N among the last ones (struct op .stride, .tail).  At every N:
 *
 * - the status is REMAT_ENOMEM, with the error record carrying it and a
 *   message.  Three operations may absorb a failure instead (.absorb,
 *   with the reason), answering REMAT_OK (the schedule is checked to fit)
 *   or REMAT_ENOFIT: auto, which by design keeps the other planners'
 *   schedules when one of them fails (auto.c); checkmate with its warm
 *   start, which runs those same fast planners (without the warm start it
 *   absorbs nothing: the "cold" runs hold its own path to REMAT_ENOMEM);
 *   chen-greedy, whose memo of segmentations tried is kept only when
 *   memory allows (chen.c, seen_before());
 * - every block allocated during the call has been freed once the test
 *   has released what the call returned (tracked here, so this holds in
 *   the plain build too; build-asan's LeakSanitizer checks it again);
 * - the atomic writers leave no temporary file, and the file they would
 *   have replaced still reads back whole;
 * - nothing crashes (a crash prints the operation, mode and N).
 *
 * Without a failure, every operation must answer as in a first,
 * unwatched run.  Per operation the test prints its runs and how they
 * ended, and at the end how many distinct call sites in the executable
 * had an allocation failed.  Groups (argv[1]): io, graph, analysis, plan,
 * exact; none runs all of them.  Environment: FAULT_SITES=1 lists those
 * sites (offsets for addr2line -f -i -e fault_alloc), FAULT_VERBOSE=1
 * every absorbed failure, FAULT_KEEP_GOING=1 reports a finding and goes
 * on.
 *
 * The wrappers hold one mutex from the decision to fail to the tracking
 * (and free from untracking to the real free, so that an address freed
 * and handed out again is tracked in that order): the order search of
 * lns runs its climbers on threads, each allocating.  Which thread meets
 * the N-th allocation then depends on timing; every failure must still
 * be handled.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"

/* ---- the allocator wrappers ---- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
void __real_free(void *p);

#define FI_TABLE (1u << 18)     /* live blocks tracked at once, at most half */
#define FI_SITES 4096

/*
 * The counter lives in memory shared with child processes: the CBC
 * backend solves in a forked child (src/solver/milp_cbc.c), whose
 * allocations count and may fail like the parent's.  The tracked blocks
 * are the parent's own (a child leaves with _exit()).
 */
static struct fi_shared {
	int armed;            /* counting allocations */
	long fail_at;         /* the N-th counted allocation fails; 0: none */
	int from;             /* ... and every later one */
	long calls;           /* counted allocations since armed */
	long failed;          /* injected failures */
	void *site;           /* caller of the first injected failure */
} fi_none, *fi = &fi_none;

static long fi_live;          /* tracked blocks not yet freed */
static pthread_mutex_t fi_mu = PTHREAD_MUTEX_INITIALIZER; /* the wrappers' state */

/*
 * Tracked blocks, their addresses stored complemented (key = ~address, 0
 * for none) so that LeakSanitizer does not count this table as a
 * reference to them.
 */
static struct fi_slot {
	uintptr_t key;
	void *site;
} fi_tab[FI_TABLE];

static void *fi_sites[FI_SITES];
static int fi_n_sites;

static size_t fi_hash(uintptr_t key)
{
	uint64_t x = (uint64_t)key;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (FI_TABLE - 1);
}

static void fi_track(void *p, void *site)
{
	uintptr_t key = ~(uintptr_t)p;
	size_t i = fi_hash(key);

	if (fi_live >= FI_TABLE / 2) {
		static const char m[] = "fault_alloc: too many live blocks to track\n";

		(void)!write(2, m, sizeof(m) - 1);
		abort();
	}
	while (fi_tab[i].key)
		i = (i + 1) & (FI_TABLE - 1);
	fi_tab[i].key = key;
	fi_tab[i].site = site;
	fi_live++;
}

/* Forget p if tracked (linear probing, backward-shift deletion). */
static void fi_untrack(void *p)
{
	uintptr_t key = ~(uintptr_t)p;
	size_t i = fi_hash(key), j, k;

	if (!p || fi_live == 0)
		return;
	while (fi_tab[i].key && fi_tab[i].key != key)
		i = (i + 1) & (FI_TABLE - 1);
	if (!fi_tab[i].key)
		return;
	fi_live--;
	j = i;
	for (;;) {
		fi_tab[i].key = 0;
		for (;;) {
			j = (j + 1) & (FI_TABLE - 1);
			if (!fi_tab[j].key)
				return;
			k = fi_hash(fi_tab[j].key);
			/* Move j back to i unless its home k lies cyclically in (i, j]. */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		fi_tab[i] = fi_tab[j];
		i = j;
	}
}

/* Should this allocation fail?  Counts it when armed. */
static int fi_fail(void *site)
{
	if (!fi->armed)
		return 0;
	fi->calls++;
	if (fi->fail_at > 0 && (fi->calls == fi->fail_at || (fi->from && fi->calls > fi->fail_at))) {
		if (fi->failed++ == 0)
			fi->site = site;
		return 1;
	}
	return 0;
}

void *__wrap_malloc(size_t size)
{
	void *site = __builtin_return_address(0), *p;

	pthread_mutex_lock(&fi_mu);
	p = fi_fail(site) ? NULL : __real_malloc(size);
	if (p && fi->armed)
		fi_track(p, site);
	pthread_mutex_unlock(&fi_mu);
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *site = __builtin_return_address(0), *p;

	pthread_mutex_lock(&fi_mu);
	p = fi_fail(site) ? NULL : __real_calloc(n, size);
	if (p && fi->armed)
		fi_track(p, site);
	pthread_mutex_unlock(&fi_mu);
	return p;
}

void *__wrap_realloc(void *old, size_t size)
{
	void *site = __builtin_return_address(0), *p;

	pthread_mutex_lock(&fi_mu);
	if (fi_fail(site)) {
		pthread_mutex_unlock(&fi_mu);
		return NULL;
	}
	p = __real_realloc(old, size);
	if (p || size == 0)
		fi_untrack(old);
	if (p && fi->armed)
		fi_track(p, site);
	pthread_mutex_unlock(&fi_mu);
	return p;
}

char *__wrap_strdup(const char *s)
{
	void *site = __builtin_return_address(0);
	char *p;

	pthread_mutex_lock(&fi_mu);
	p = fi_fail(site) ? NULL : __real_strdup(s);
	if (p && fi->armed)
		fi_track(p, site);
	pthread_mutex_unlock(&fi_mu);
	return p;
}

void __wrap_free(void *p)
{
	pthread_mutex_lock(&fi_mu);
	fi_untrack(p);
	__real_free(p);
	pthread_mutex_unlock(&fi_mu);
}

static void fi_begin(void)
{
	fi->calls = 0;
	fi->failed = 0;
	fi->site = NULL;
	fi->armed = 1;
}

static void fi_end(void)
{
	fi->armed = 0;
}

/* ---- where we are, for a crash ---- */

static const char *cur_op = "(setup)";
static const char *cur_mode = "";
static long cur_n;

static void say_where(void)
{
	char buf[256];
	int len = snprintf(buf, sizeof(buf),
			   "fault_alloc: died in '%s', mode %s, allocation %ld failing\n", cur_op,
			   cur_mode, cur_n);

	if (len > 0)
		(void)!write(2, buf, (size_t)len);
}

static void on_signal(int sig)
{
	say_where();
	signal(sig, SIG_DFL);
	raise(sig);
}

extern void __asan_set_death_callback(void (*cb)(void)) __attribute__((weak));

static void share_counter(void)
{
	void *p = mmap(NULL, sizeof(*fi), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0, sizeof(*fi));
	fi = p;
}

static void install_crash_report(void)
{
	if (__asan_set_death_callback) {
		__asan_set_death_callback(say_where);
		return;
	}
	signal(SIGSEGV, on_signal);
	signal(SIGBUS, on_signal);
	signal(SIGFPE, on_signal);
	signal(SIGABRT, on_signal);
}

/* ---- the loop ---- */

static void site_name(void *site, char *buf, size_t n)
{
	Dl_info info;

	if (dladdr(site, &info) && info.dli_fbase)
		snprintf(buf, n, "%s+0x%lx%s%s", strrchr(info.dli_fname, '/') ?
			 strrchr(info.dli_fname, '/') + 1 : info.dli_fname,
			 (unsigned long)((char *)site - (char *)info.dli_fbase),
			 info.dli_sname ? " " : "", info.dli_sname ? info.dli_sname : "");
	else
		snprintf(buf, n, "%p", site);
}

static void note_site(void *site)
{
	int i;

	for (i = 0; i < fi_n_sites; i++)
		if (fi_sites[i] == site)
			return;
	if (fi_n_sites < FI_SITES)
		fi_sites[fi_n_sites++] = site;
}

/* Print the tracked blocks still live, with where they were allocated. */
static void print_leaks(void)
{
	size_t i;
	int shown = 0;

	for (i = 0; i < FI_TABLE && shown < 10; i++)
		if (fi_tab[i].key) {
			char name[256];

			site_name(fi_tab[i].site, name, sizeof(name));
			print_message("  leaked block %p allocated at %s\n",
				      (void *)~fi_tab[i].key, name);
			shown++;
		}
}

static void forget_all(void)
{
	memset(fi_tab, 0, sizeof(fi_tab));
	fi_live = 0;
}

struct op {
	const char *name;
	/*
	 * Runs the call between fi_begin() and fi_end(), then checks and
	 * frees what it returned; returns the call's status with *err.
	 */
	int (*run)(const struct op *o, struct remat_error *err);
	/* Why an injected failure may be absorbed (NULL: it may not). */
	const char *absorb;
	/* Operation data. */
	const char *planner;
	const struct remat_graph *const *graph;
	int64_t budget;
	const struct remat_kv *opts;
	int n_opts;
	int variant;
	/*
	 * Slow operations: below the last TAIL allocations of an undisturbed
	 * run (tail, or TAIL when 0), test every stride-th N only (0 or 1:
	 * every N).
	 */
	int stride, tail;
};

/*
 * A finding fails the test (FAULT_KEEP_GOING=1: reported, and the run goes
 * on).  The one bug this test found (import_nx.c reported an allocation
 * failure as bad input) is fixed; a new one is fixed in src/ rather than
 * listed here.
 */
static void problem(const struct op *o, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(const struct op *o, const char *what, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	(void)o;
	(void)what;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (getenv("FAULT_KEEP_GOING")) {
		print_message("PROBLEM: %s\n", msg);
		return;
	}
	fail_msg("%s", msg);
}

#define TAIL 150

/* The N after n: every one, or strides up to the tail of most allocations. */
static long next_n(const struct op *o, long n, long most)
{
	long edge = most - (o->tail ? o->tail : TAIL);

	if (o->stride <= 1 || n >= edge)
		return n + 1;
	return n + o->stride < edge ? n + o->stride : edge;
}

/* The loop of the header comment, for one operation. */
static void loop(const struct op *o)
{
	struct remat_error err;
	int base, mode;
	long runs = 0, enomem = 0, absorbed = 0, most = 0;
	double t0 = remat_now();

	cur_op = o->name;
	cur_mode = "none";
	cur_n = 0;
	forget_all();
	remat_error_clear(&err);
	base = o->run(o, &err);
	if (fi_live)
		fail_msg("%s: %ld blocks left without any failure", o->name, fi_live);
	most = fi->calls;
	for (mode = 0; mode < 2; mode++) {
		long n;

		cur_mode = mode ? "from" : "once";
		for (n = 1; n <= 1000000; n = next_n(o, n, most)) {
			char site[256];
			int rc;

			cur_n = n;
			fi->fail_at = n;
			fi->from = mode;
			forget_all();
			remat_error_clear(&err);
			rc = o->run(o, &err);
			fi->fail_at = 0;
			runs++;
			site_name(fi->site, site, sizeof(site));
			if (fi_live) {
				print_message("%s: mode %s, allocation %ld of %ld failed (at %s): "
					      "status %d, %ld blocks leaked\n", o->name, cur_mode, n,
					      fi->calls, site, rc, fi_live);
				print_leaks();
				problem(o, "leak", "%s: leak after an injected failure (mode %s, "
					"N = %ld, at %s)", o->name, cur_mode, n, site);
			}
			if (fi->failed == 0) {
				if (rc != base)
					fail_msg("%s: status %d without a failure, %d at first", o->name,
						 rc, base);
				break;
			}
			note_site(fi->site);
			if (rc != REMAT_OK && (err.code != rc || !err.msg[0]))
				problem(o, "status", "%s: mode %s, N = %ld (at %s): status %d with "
					"error record %d '%s'", o->name, cur_mode, n, site, rc, err.code,
					err.msg);
			if (rc == REMAT_ENOMEM) {
				enomem++;
				continue;
			}
			if (!o->absorb || (rc != REMAT_OK && rc != REMAT_ENOFIT)) {
				problem(o, "status", "%s: mode %s: allocation %ld (at %s) failed, "
					"status %d (%s): '%s'", o->name, cur_mode, n, site, rc,
					remat_status_name(rc), err.msg);
				continue;
			}
			absorbed++;
			if (getenv("FAULT_VERBOSE"))
				print_message("  absorbed: %s, mode %s, N = %ld (at %s): status %d\n",
					      o->name, cur_mode, n, site, rc);
		}
	}
	print_message("%-40s %4ld allocations, %5ld runs: %5ld out of memory, %4ld absorbed%s%s",
		      o->name, most, runs, enomem, absorbed, absorbed ? ": " : "",
		      absorbed ? o->absorb : "");
	print_message(" (%.1f s)\n", remat_now() - t0);
	cur_op = "(between operations)";
}

/* ---- inputs ---- */

static const char *const TRAIN =
	"{\"format\":\"remat-graph\",\"version\":1,\"name\":\"fault-train\",\"cost_unit\":\"us\","
	"\"nodes\":["
	"{\"id\":\"x\",\"kind\":\"input\",\"mem\":4,\"label\":\"the input\"},"
	"{\"id\":\"w\",\"kind\":\"input\",\"mem\":1},"
	"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":4,\"cost\":2,\"inputs\":[\"x\",\"w\"]},"
	"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":2,\"cost\":1,\"workspace\":3,"
	"\"inputs\":[\"f1\"]},"
	"{\"id\":\"m\",\"kind\":\"forward\",\"mem\":1,\"cost\":1,\"recompute\":false,"
	"\"inputs\":[\"f1\"]},"
	"{\"id\":\"f3\",\"kind\":\"forward\",\"mem\":3,\"cost\":3,\"inputs\":[\"f2\",\"f1\"]},"
	"{\"id\":\"f4\",\"kind\":\"forward\",\"mem\":2,\"cost\":1,\"inputs\":[\"f3\"]},"
	"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"cost\":1,\"inputs\":[\"f4\"]},"
	"{\"id\":\"b4\",\"kind\":\"backward\",\"grad_of\":\"f4\",\"mem\":2,\"cost\":2,"
	"\"inputs\":[\"loss\",\"f3\",\"f4\"]},"
	"{\"id\":\"b3\",\"kind\":\"backward\",\"grad_of\":\"f3\",\"mem\":3,\"cost\":2,"
	"\"inputs\":[\"b4\",\"f2\",\"f1\"]},"
	"{\"id\":\"b2\",\"kind\":\"backward\",\"grad_of\":\"f2\",\"mem\":2,\"cost\":2,"
	"\"workspace\":1,\"inputs\":[\"b3\",\"f1\"]},"
	"{\"id\":\"b1\",\"kind\":\"backward\",\"grad_of\":\"f1\",\"mem\":4,\"cost\":2,"
	"\"inputs\":[\"b2\",\"b3\",\"x\",\"m\"]},"
	"{\"id\":\"dead\",\"kind\":\"op\",\"mem\":9,\"inputs\":[\"f2\"]}],"
	"\"outputs\":[\"b1\",\"loss\"]}";

static const char *const NX =
	"{\"directed\": true, \"multigraph\": false,"
	" \"graph\": {\"name\": \"tiny\", \"order\": [0, 1, 2, 3, 4, 5]},"
	" \"nodes\": ["
	"  {\"name\": \"conv\", \"backward\": false, \"cost_cpu\": 10, \"cost_ram\": 400, \"id\": 0},"
	"  {\"name\": \"fc\", \"backward\": false, \"cost_cpu\": 5, \"cost_ram\": 40, \"id\": 1},"
	"  {\"name\": \"Loss\", \"backward\": true, \"cost_cpu\": 1, \"cost_ram\": 4, \"id\": 2},"
	"  {\"name\": \"fc_backward\", \"backward\": true, \"cost_cpu\": 9, \"cost_ram\": 40, \"id\": 3},"
	"  {\"name\": \"conv_backward\", \"backward\": true, \"cost_cpu\": 21.5, \"cost_ram\": 400,"
	"   \"id\": 4},"
	"  {\"name\": \"odd_backward\", \"backward\": true, \"cost_cpu\": 1, \"cost_ram\": 8, \"id\": 5}],"
	" \"links\": [{\"source\": 0, \"target\": 1}, {\"source\": 1, \"target\": 2},"
	"  {\"source\": 2, \"target\": 3}, {\"source\": 1, \"target\": 3},"
	"  {\"source\": 3, \"target\": 4}, {\"source\": 0, \"target\": 4},"
	"  {\"source\": 1, \"target\": 4}, {\"source\": 4, \"target\": 5}]}";

static struct remat_graph *g_kumar, *g_train, *g_fwd;
static struct remat_schedule s_train;     /* a valid explicit schedule of g_train */
static char tmpdir[64];

static void setup_inputs(void)
{
	struct remat_plan_request req;
	struct remat_sim_result r;
	struct remat_error err;

	g_kumar = tu_graph(TU_KUMAR);
	g_train = tu_graph(TRAIN);
	g_fwd = tu_graph("{\"format\":\"remat-graph\",\"version\":1,\"name\":\"fwd\",\"nodes\":["
			 "{\"id\":\"x\",\"kind\":\"input\",\"mem\":2},"
			 "{\"id\":\"a\",\"mem\":2,\"inputs\":[\"x\"]},"
			 "{\"id\":\"b\",\"mem\":1,\"cost\":3,\"inputs\":[\"a\"]},"
			 "{\"id\":\"c\",\"mem\":2,\"inputs\":[\"a\",\"b\"]},"
			 "{\"id\":\"d\",\"mem\":1,\"inputs\":[\"c\",\"x\"]}]}");
	remat_schedule_init(&s_train);
	memset(&req, 0, sizeof(req));
	req.graph = g_train;
	req.budget = g_train->no_remat_peak;
	assert_int_equal(remat_plan_run(remat_planner_find("none"), &req, &s_train, &r, &err),
			 REMAT_OK);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/remat-fault-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
}

static void teardown_inputs(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/s.json", tmpdir);
	remove(path);
	snprintf(path, sizeof(path), "%s/g.json", tmpdir);
	remove(path);
	rmdir(tmpdir);
	remat_schedule_release(&s_train);
	remat_graph_free(g_kumar);
	remat_graph_free(g_train);
	remat_graph_free(g_fwd);
}

/* ---- operations: graphs in ---- */

static int op_load(const struct op *o, struct remat_error *err)
{
	struct remat_graph *g = NULL;
	int rc;

	(void)o;
	fi_begin();
	rc = remat_graph_load_buffer(TRAIN, strlen(TRAIN), "t.json", &g, err);
	fi_end();
	if (rc == REMAT_OK) {
		assert_int_equal(g->n, g_train->n);
		assert_int_equal(g->no_remat_peak, g_train->no_remat_peak);
		remat_graph_free(g);
	} else {
		assert_null(g);
	}
	return rc;
}

static int op_load_nx(const struct op *o, struct remat_error *err)
{
	struct remat_graph *g = NULL;
	int rc;

	fi_begin();
	if (o->variant)
		rc = remat_nx_load_buffer(NX, strlen(NX), "n.json", REMAT_NX_GRAPH_ORDER, &g, err);
	else
		rc = remat_graph_load_buffer(NX, strlen(NX), "n.json", &g, err);
	fi_end();
	if (rc == REMAT_OK) {
		assert_int_equal(g->n, 6);
		remat_graph_free(g);
	}
	return rc;
}

static int op_builder(const struct op *o, struct remat_error *err)
{
	struct remat_graph_builder *b = NULL;
	struct remat_graph *g = NULL;
	const char *in_a[] = { "x" }, *in_b[] = { "a", "x" };
	struct remat_node_spec x = { "x", REMAT_KIND_INPUT, 4, 0, -1, 1, "input", NULL, NULL, 0 };
	struct remat_node_spec a = { "a", REMAT_KIND_FORWARD, 2, 1, 1, 1, NULL, NULL, in_a, 1 };
	struct remat_node_spec l = { "l", REMAT_KIND_LOSS, 1, 0, 1, 1, NULL, NULL, in_b, 2 };
	const char *in_g[] = { "l", "a", "x" };
	struct remat_node_spec ga = { "ga", REMAT_KIND_BACKWARD, 2, 0, 2, 0, "grad", "a", in_g, 3 };
	int rc;

	(void)o;
	fi_begin();
	rc = remat_builder_new("built", &b, err);
	if (rc == REMAT_OK)
		rc = remat_builder_set_name(b, "built graph", err);
	if (rc == REMAT_OK)
		rc = remat_builder_set_cost_unit(b, "ms", err);
	if (rc == REMAT_OK)
		rc = remat_builder_add(b, &x, err);
	if (rc == REMAT_OK)
		rc = remat_builder_add(b, &a, err);
	if (rc == REMAT_OK)
		rc = remat_builder_add(b, &l, err);
	if (rc == REMAT_OK)
		rc = remat_builder_add(b, &ga, err);
	if (rc == REMAT_OK)
		rc = remat_builder_add_output(b, "ga", err);
	if (rc == REMAT_OK) {
		rc = remat_builder_finish(b, &g, err);   /* consumes b */
		b = NULL;
	}
	fi_end();
	remat_builder_free(b);
	if (rc == REMAT_OK) {
		assert_int_equal(g->n, 4);
		assert_string_equal(g->name, "built graph");
		remat_graph_free(g);
	}
	return rc;
}

static int op_train(const struct op *o, struct remat_error *err)
{
	struct remat_train_opts opts;
	struct remat_graph *g = NULL;
	int rc;

	(void)o;
	remat_train_opts_init(&opts);
	fi_begin();
	rc = remat_graph_train(g_fwd, &opts, &g, err);
	fi_end();
	if (rc == REMAT_OK) {
		assert_int_equal(g->n, 2 * g_fwd->n);   /* 4 backward nodes and the loss */
		remat_graph_free(g);
	}
	return rc;
}

static int op_gen(const struct op *o, struct remat_error *err)
{
	struct remat_graph *g = NULL;
	int rc;

	fi_begin();
	if (strcmp(o->planner, "chain") == 0 || strcmp(o->planner, "chain-random") == 0 ||
	    strcmp(o->planner, "chain-forward") == 0) {
		struct remat_gen_chain_opts c;

		remat_gen_chain_opts_init(&c);
		c.n = 4;
		c.random = strcmp(o->planner, "chain-random") == 0;
		c.seed = 3;
		c.forward_only = strcmp(o->planner, "chain-forward") == 0;
		rc = remat_gen_chain(&c, &g, err);
	} else if (strcmp(o->planner, "layered") == 0) {
		struct remat_gen_layered_opts l;

		remat_gen_layered_opts_init(&l);
		l.n = 12;
		l.seed = 5;
		rc = remat_gen_layered(&l, &g, err);
	} else {
		struct remat_gen_unet_opts u;

		remat_gen_unet_opts_init(&u);
		u.depth = 1;
		u.train = 1;
		rc = remat_gen_unet(&u, &g, err);
	}
	fi_end();
	if (rc == REMAT_OK) {
		assert_true(g->n > 0);
		remat_graph_free(g);
	}
	return rc;
}

/* ---- operations: schedules and files ---- */

static int op_simulate(const struct op *o, struct remat_error *err)
{
	struct remat_sim_result r;
	struct remat_schedule co;
	int64_t timeline[64];
	int64_t i;
	int rc;

	remat_schedule_init(&co);
	if (o->variant)   /* compute-only: the simulator derives the frees */
		for (i = 0; i < s_train.n; i++)
			if (s_train.steps[i].op == REMAT_OP_COMPUTE)
				assert_int_equal(remat_schedule_push(&co, REMAT_OP_COMPUTE,
								     s_train.steps[i].node, NULL),
						 REMAT_OK);
	assert_true(s_train.n <= 64);
	fi_begin();
	rc = remat_simulate(g_train, o->variant ? &co : &s_train, g_train->no_remat_peak,
			    timeline, &r, err);
	fi_end();
	if (rc == REMAT_OK) {
		assert_true(r.valid && r.feasible);
		assert_int_equal(r.peak_mem, g_train->no_remat_peak);
	}
	remat_schedule_release(&co);
	return rc;
}

static int op_liveness(const struct op *o, struct remat_error *err)
{
	struct remat_schedule order, out;
	int rc;

	remat_schedule_init(&order);
	remat_schedule_init(&out);
	assert_int_equal(remat_schedule_copy(&order, &s_train, NULL), REMAT_OK);
	fi_begin();
	if (strcmp(o->planner, "liveness") == 0) {
		rc = remat_liveness(g_train, &s_train, &out, err);
	} else if (strcmp(o->planner, "topo") == 0) {
		rc = remat_schedule_topo(g_train, &out, err);
		if (rc == REMAT_OK)
			rc = remat_schedule_add_frees(g_train, &out, err);
	} else {
		/* Copy into an empty schedule, then the frees of a compute-only one. */
		rc = remat_schedule_copy(&out, &s_train, err);
		order.n = 0;
		if (rc == REMAT_OK)
			rc = remat_schedule_push(&order, REMAT_OP_COMPUTE, g_train->topo[2], err);
		if (rc == REMAT_OK)
			rc = remat_schedule_add_frees(g_train, &order, err);
	}
	fi_end();
	if (rc == REMAT_OK)
		assert_int_equal(out.n, s_train.n);
	remat_schedule_release(&order);
	remat_schedule_release(&out);
	return rc;
}

/*
 * The atomic writers leave nothing behind when they fail: the directory
 * holds only s.json and g.json, and a file that was there before still
 * reads back whole.
 */
static void check_dir(int rc, const char *keep)
{
	struct remat_schedule back;
	struct remat_graph *g = NULL;
	char path[128];
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, "s.json") && strcmp(e->d_name, "g.json"))
			fail_msg("'%s' left in %s (status %d)", e->d_name, tmpdir, rc);
	closedir(d);
	if (rc == REMAT_OK)
		return;
	snprintf(path, sizeof(path), "%s/%s", tmpdir, keep);
	if (keep[0] == 's') {
		remat_schedule_init(&back);
		assert_int_equal(remat_schedule_read(path, g_train, &back, NULL), REMAT_OK);
		assert_int_equal(back.n, s_train.n);
		remat_schedule_release(&back);
	} else {
		assert_int_equal(remat_graph_load_file(path, &g, NULL), REMAT_OK);
		assert_int_equal(g->n, g_train->n);
		remat_graph_free(g);
	}
}

static int op_schedule_file(const struct op *o, struct remat_error *err)
{
	struct remat_schedule back;
	struct remat_schedule_meta meta = { "none", g_train->no_remat_peak, NULL };
	char path[128];
	int rc, wrc;

	(void)o;
	snprintf(path, sizeof(path), "%s/s.json", tmpdir);
	remat_schedule_init(&back);
	fi_begin();
	rc = wrc = remat_schedule_write(path, g_train, &s_train, &meta, err);
	if (rc == REMAT_OK)
		rc = remat_schedule_read(path, g_train, &back, err);
	fi_end();
	check_dir(wrc, "s.json");
	if (rc == REMAT_OK) {
		assert_int_equal(back.n, s_train.n);
		assert_memory_equal(back.steps, s_train.steps, sizeof(*back.steps) * (size_t)back.n);
	}
	remat_schedule_release(&back);
	return rc;
}

static int op_schedule_buffer(const struct op *o, struct remat_error *err)
{
	static const char text[] =
		"{\"format\":\"remat-schedule\",\"version\":1,\"graph\":\"kumar-fig1\","
		"\"steps\":[{\"op\":\"compute\",\"node\":\"A\"},{\"op\":\"compute\",\"node\":\"B\"},"
		"{\"op\":\"compute\",\"node\":\"C\"},{\"op\":\"free\",\"node\":\"A\"},"
		"{\"op\":\"compute\",\"node\":\"D\"},{\"op\":\"compute\",\"node\":\"A\"},"
		"{\"op\":\"compute\",\"node\":\"E\"}]}";
	struct remat_schedule s;
	int rc;

	(void)o;
	remat_schedule_init(&s);
	fi_begin();
	rc = remat_schedule_read_buffer(text, strlen(text), "k.json", g_kumar, &s, err);
	fi_end();
	if (rc == REMAT_OK)
		assert_int_equal(s.n, 7);
	remat_schedule_release(&s);
	return rc;
}

static int op_graph_file(const struct op *o, struct remat_error *err)
{
	struct remat_graph *g = NULL;
	char path[128];
	int rc, wrc;

	(void)o;
	snprintf(path, sizeof(path), "%s/g.json", tmpdir);
	fi_begin();
	rc = wrc = remat_graph_write_file(path, g_train, err);
	if (rc == REMAT_OK)
		rc = remat_graph_load_file(path, &g, err);
	fi_end();
	check_dir(wrc, "g.json");
	if (rc == REMAT_OK) {
		assert_int_equal(g->n, g_train->n);
		remat_graph_free(g);
	}
	return rc;
}

/* ---- operations: analyses ---- */

static int op_chain(const struct op *o, struct remat_error *err)
{
	struct remat_chain *c = NULL;
	int rc;

	fi_begin();
	rc = remat_chain_build(*o->graph, &c, err);
	fi_end();
	if (rc == REMAT_OK) {
		assert_true(c->n_stages >= 1);
		remat_chain_free(c);
	}
	return rc;
}

static int op_chain_cuts(const struct op *o, struct remat_error *err)
{
	struct remat_chain *c = NULL;
	int rc;

	fi_begin();
	rc = remat_chain_build_ex(*o->graph, REMAT_CHAIN_CUTS, &c, err);
	fi_end();
	if (rc == REMAT_OK) {
		assert_true(c->n_stages >= 1);
		remat_chain_free(c);
	}
	return rc;
}

static int op_treedec(const struct op *o, struct remat_error *err)
{
	struct remat_treedec td;
	uint8_t mask[64];
	int32_t v;
	int rc;

	memset(&td, 0, sizeof(td));
	for (v = 0; v < (*o->graph)->n && v < 64; v++)
		mask[v] = v % 3 != 1;
	fi_begin();
	rc = remat_treedec_build(*o->graph, o->variant ? mask : NULL, &td, err);
	fi_end();
	if (rc == REMAT_OK)
		assert_true(td.n_bags >= 1);
	remat_treedec_release(&td);
	return rc;
}

/*
 * The cut bounds (src/plan/bound_cut.c) on the training graph: the cost
 * bound halfway between the least peak and the no-remat peak (price
 * searches, max-flows and, for the most promising nodes, CBC's knapsack
 * in a forked child), the peak bound (variant 1), the window bound
 * (variant 2: the same searches, then one MILP over the windows) and the
 * down-set bound (variant 3: the cuts of many down-sets, then knapsacks).
 */
static int op_cut(const struct op *o, struct remat_error *err)
{
	const struct remat_graph *g = *o->graph;
	int64_t budget = (g->min_peak_lower_bound + g->no_remat_peak) / 2, peak = -1;
	enum remat_bound_status st = REMAT_BOUND_NOT_TRIED;
	double lb = NAN;
	int32_t at = -1, mo[8], nmo = 0;
	int rc;

	fi_begin();
	if (o->variant == 1)
		rc = remat_bound_cut_peak(g, 0, &peak, &at, err);
	else if (o->variant == 2)
		rc = remat_bound_window(g, budget, 0, &lb, &st, mo, 8, &nmo, err);
	else if (o->variant == 3)
		rc = remat_bound_downset(g, budget, 0, &lb, &st, &at, err);
	else
		rc = remat_bound_cut(g, budget, 0, &lb, &st, &at, err);
	fi_end();
	if (rc == REMAT_OK && o->variant == 1)
		assert_true(peak >= g->min_peak_lower_bound);
	if (rc == REMAT_OK && o->variant != 1)
		assert_true(st == REMAT_BOUND_INFEASIBLE || lb >= tu_least_cost(g) * (1 - 1e-12));
	return rc;
}

/* ---- operations: planners ---- */

static int op_plan(const struct op *o, struct remat_error *err)
{
	const struct remat_graph *g = *o->graph;
	struct remat_plan_request req;
	struct remat_plan_report rep;
	struct remat_schedule s;
	struct remat_sim_result r, again;
	int rc;

	memset(&req, 0, sizeof(req));
	req.graph = g;
	req.budget = o->budget;
	req.seed = 1;
	req.options = o->opts;
	req.n_options = o->n_opts;
	req.report = &rep;
	remat_plan_report_init(&rep);
	remat_schedule_init(&s);
	fi_begin();
	rc = remat_plan_run(remat_planner_find(o->planner), &req, &s, &r, err);
	fi_end();
	if (rc == REMAT_OK) {
		/* Whatever was absorbed, what comes back is a schedule that fits. */
		assert_int_equal(remat_simulate(g, &s, o->budget, NULL, &again, NULL), REMAT_OK);
		if (!again.valid || !again.feasible)
			fail_msg("%s: status OK with a schedule that simulates %s: %s", o->name,
				 again.valid ? "over budget" : "invalid", again.error);
	}
	remat_schedule_release(&s);
	return rc;
}

/* ---- the groups ---- */

#define OP(name_, run_, ...) { .name = name_, .run = run_, __VA_ARGS__ }

static const struct op IO_OPS[] = {
	OP("load remat-graph", op_load),
	OP("load networkx (detected)", op_load_nx),
	OP("load networkx (graph order)", op_load_nx, .variant = 1),
	OP("builder", op_builder),
	OP("schedule write + read", op_schedule_file),
	OP("schedule read (buffer)", op_schedule_buffer),
	OP("graph write + load", op_graph_file),
};

static const struct op GRAPH_OPS[] = {
	OP("remat_graph_train", op_train),
	OP("gen chain", op_gen, .planner = "chain"),
	OP("gen chain (random)", op_gen, .planner = "chain-random"),
	OP("gen chain (forward)", op_gen, .planner = "chain-forward"),
	OP("gen layered", op_gen, .planner = "layered"),
	OP("gen unet (train)", op_gen, .planner = "unet"),
};

static const struct op ANALYSIS_OPS[] = {
	OP("simulate (explicit)", op_simulate),
	OP("simulate (compute-only)", op_simulate, .variant = 1),
	OP("liveness", op_liveness, .planner = "liveness"),
	OP("topo + add_frees", op_liveness, .planner = "topo"),
	OP("copy + add_frees", op_liveness, .planner = "copy"),
	OP("chain build (training)", op_chain, .graph = (const struct remat_graph *const *)&g_train),
	OP("chain build (inference)", op_chain, .graph = (const struct remat_graph *const *)&g_kumar),
	OP("chain build, cuts view", op_chain_cuts,
	   .graph = (const struct remat_graph *const *)&g_train),
	OP("treedec build", op_treedec, .graph = (const struct remat_graph *const *)&g_train),
	OP("treedec build (masked)", op_treedec, .graph = (const struct remat_graph *const *)&g_train,
	   .variant = 1),
	OP("cut bound", op_cut, .graph = (const struct remat_graph *const *)&g_train, .stride = 5),
	OP("cut peak bound", op_cut, .graph = (const struct remat_graph *const *)&g_train,
	   .variant = 1),
	OP("window bound", op_cut, .graph = (const struct remat_graph *const *)&g_train,
	   .variant = 2, .stride = 5),
	OP("down-set bound", op_cut, .graph = (const struct remat_graph *const *)&g_train,
	   .variant = 3, .stride = 5),
};

static void run_ops(const struct op *ops, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		loop(&ops[i]);
}

static void test_io(void **state)
{
	(void)state;
	run_ops(IO_OPS, sizeof(IO_OPS) / sizeof(IO_OPS[0]));
}

static void test_graph(void **state)
{
	(void)state;
	run_ops(GRAPH_OPS, sizeof(GRAPH_OPS) / sizeof(GRAPH_OPS[0]));
}

static void test_analysis(void **state)
{
	(void)state;
	run_ops(ANALYSIS_OPS, sizeof(ANALYSIS_OPS) / sizeof(ANALYSIS_OPS[0]));
}

/*
 * Every planner in the registry but the exact ones (checkmate,
 * checkmate-lp and auto, which runs checkmate) on Kumar's graph below its
 * no-remat peak (4) and on the training graph 1 byte below it: both make
 * the planner do its own work.
 */
static void test_plan(void **state)
{
	const struct remat_planner *const *pp;
	char names[32][80];
	int k = 0;

	(void)state;
	for (pp = remat_planner_list(); *pp; pp++) {
		const struct remat_planner *p = *pp;
		int gi;

		if (strncmp(p->name, "checkmate", 9) == 0 || strcmp(p->name, "auto") == 0 ||
		    strcmp(p->name, "lns") == 0)
			continue;
		for (gi = 0; gi < 2; gi++) {
			struct op o = OP(names[k], op_plan, .planner = p->name);

			assert_true(k < 32);
			o.graph = (const struct remat_graph *const *)(gi ? &g_train : &g_kumar);
			o.budget = gi ? g_train->no_remat_peak - 1 : 3;
			if (strcmp(p->name, "chen-greedy") == 0)
				o.absorb = "segmentations tried are remembered only when memory allows";
			snprintf(names[k], sizeof(names[k]), "plan %s (%s)", p->name,
				 gi ? "training" : "kumar");
			loop(&o);
			k++;
		}
	}
}

/*
 * The exact planners, whose solver runs cost milliseconds each (CBC's in
 * a forked child, tens of milliseconds under ASan): Kumar's graph at 3,
 * and the solver's own path on the training graph; without the warm start
 * nothing may be absorbed.  With it, and in auto, the fast planners'
 * failures are absorbed by design (auto.c: "one planner failing ... must
 * not deny the user the others' schedules"), and a sample of N is tried
 * but the tail (model, solver, runner).  CBC is run cold, and warm only
 * for its tail (the warm start's arrays in the child); checkmate-lp with
 * GLPK only (its CBC path is the cold MILP's solve_here() with relax set).
 */
static const struct remat_kv WARM_OFF[] = { { "warm-start", "off" } };
static const struct remat_kv WARM_OFF_GLPK[] = { { "warm-start", "off" }, { "solver", "glpk" } };
static const struct remat_kv LP_GLPK[] = { { "rounds", "3" }, { "solver", "glpk" } };
static const struct remat_kv GLPK[] = { { "solver", "glpk" } };
/*
 * A short order search in lns: every replay allocates alike, and even a
 * 5-node graph has block moves, so its default (2,000 replays and more
 * without improvement, on two climbers) would make tens of thousands of
 * allocations to fail one by one.
 */
static const struct remat_kv LNS_SHORT[] = { { "lns-replay-stall", "20" } };
#define KUMAR .graph = (const struct remat_graph *const *)&g_kumar
#define TRAINING .graph = (const struct remat_graph *const *)&g_train

static const struct op EXACT_OPS[] = {
	OP("plan checkmate (kumar, cbc, cold)", op_plan, .planner = "checkmate", KUMAR,
	   .budget = 3, .opts = WARM_OFF, .n_opts = 1),
	OP("plan checkmate (kumar, glpk, cold)", op_plan, .planner = "checkmate", KUMAR,
	   .budget = 3, .opts = WARM_OFF_GLPK, .n_opts = 2),
	OP("plan checkmate (training, glpk, cold)", op_plan, .planner = "checkmate", TRAINING,
	   .budget = 18, .opts = WARM_OFF_GLPK, .n_opts = 2),
	OP("plan checkmate-lp (kumar, glpk)", op_plan, .planner = "checkmate-lp", KUMAR,
	   .budget = 3, .opts = LP_GLPK, .n_opts = 2),
	OP("plan checkmate (kumar, glpk, warm start)", op_plan, .planner = "checkmate", KUMAR,
	   .budget = 3, .opts = GLPK, .n_opts = 1, .stride = 7,
	   .absorb = "the warm start runs the fast planners"),
	OP("plan checkmate (kumar, cbc, warm start)", op_plan, .planner = "checkmate", KUMAR,
	   .budget = 3, .stride = 1000, .tail = 20, .absorb = "the warm start runs the fast planners"),
	OP("plan auto (kumar, no-remat peak)", op_plan, .planner = "auto", KUMAR, .budget = 4,
	   .absorb = "auto keeps the other planners' schedules"),
	OP("plan auto (kumar, glpk)", op_plan, .planner = "auto", KUMAR, .budget = 3,
	   .opts = GLPK, .n_opts = 1, .stride = 11,
	   .absorb = "auto keeps the other planners' schedules"),
	OP("plan lns (kumar)", op_plan, .planner = "lns", KUMAR, .budget = 3, .opts = LNS_SHORT,
	   .n_opts = 1, .stride = 11,
	   .absorb = "lns starts from the fast planners' schedules, as auto does"),
};

static void test_exact(void **state)
{
	(void)state;
	run_ops(EXACT_OPS, sizeof(EXACT_OPS) / sizeof(EXACT_OPS[0]));
}

static int group_setup(void **state)
{
	(void)state;
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_graph),
		cmocka_unit_test(test_analysis),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_exact),
	};
	static const char *const names[] = { "io", "graph", "analysis", "plan", "exact" };
	struct CMUnitTest one[1];
	size_t i, n = sizeof(all) / sizeof(all[0]);
	int rc;

	share_counter();
	install_crash_report();
	setup_inputs();
	if (argc > 1) {
		for (i = 0; i < n && strcmp(argv[1], names[i]) != 0; i++)
			;
		if (i == n) {
			fprintf(stderr, "usage: fault_alloc [io|graph|analysis|plan|exact]\n");
			return 2;
		}
		one[0] = all[i];
		rc = cmocka_run_group_tests_name(names[i], one, group_setup, NULL);
	} else {
		rc = cmocka_run_group_tests_name("fault_alloc", all, group_setup, NULL);
	}
	print_message("%d distinct call sites had an allocation failed\n", fi_n_sites);
	if (getenv("FAULT_SITES"))
		for (i = 0; i < (size_t)fi_n_sites; i++) {
			char name[256];

			site_name(fi_sites[i], name, sizeof(name));
			print_message("  site %s\n", name);
		}
	teardown_inputs();
	return rc;
}
