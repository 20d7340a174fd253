/* test_schedule.c - schedule JSON reading and atomic writing. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "core/util.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/remat-test-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char p[512];

	(void)state;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", tmpdir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	return rmdir(tmpdir);
}

static int read_text(const struct remat_graph *g, const char *text, struct remat_schedule *s,
		     struct remat_error *err)
{
	return remat_schedule_read_buffer(text, strlen(text), "s.json", g, s, err);
}

static void test_roundtrip(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s, back;
	struct remat_sim_result r;
	struct remat_schedule_meta meta;
	char path[512], *buf;
	size_t len;
	DIR *d;
	struct dirent *e;
	int files = 0;

	(void)state;
	remat_schedule_init(&s);
	remat_schedule_init(&back);
	tu_sched(g, "A B -A C D -B -C A E -A -D", &s);
	assert_int_equal(remat_simulate(g, &s, 3, NULL, &r, NULL), REMAT_OK);
	meta.planner = "hand \"quoted\"";
	meta.budget = 3;
	meta.summary = &r;
	snprintf(path, sizeof(path), "%s/plan.json", tmpdir);
	assert_int_equal(remat_schedule_write(path, g, &s, &meta, NULL), REMAT_OK);
	assert_int_equal(remat_schedule_read(path, g, &back, NULL), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &back), tu_sched_text(g, &s));
	assert_int_equal(remat_i_read_file(path, &buf, &len, NULL), REMAT_OK);
	assert_non_null(strstr(buf, "\"format\": \"remat-schedule\""));
	assert_non_null(strstr(buf, "\"planner\": \"hand \\\"quoted\\\"\""));
	assert_non_null(strstr(buf, "\"budget\": 3"));
	assert_non_null(strstr(buf, "\"peak_mem\": 3"));
	assert_non_null(strstr(buf, "\"cost\": 6"));
	assert_non_null(strstr(buf, "\"overhead\": 0.2"));
	assert_non_null(strstr(buf, "\"recomputes\": 1"));
	free(buf);
	/* Only the file itself: the temporary was renamed away. */
	d = opendir(tmpdir);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			files++;
	closedir(d);
	assert_int_equal(files, 1);
	remat_schedule_release(&s);
	remat_schedule_release(&back);
	remat_graph_free(g);
}

static void test_write_failure_leaves_nothing(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_error err;
	char path[512];

	(void)state;
	remat_schedule_init(&s);
	tu_sched(g, "A B C D E", &s);
	snprintf(path, sizeof(path), "%s/missing/plan.json", tmpdir);
	assert_int_equal(remat_schedule_write(path, g, &s, NULL, &err), REMAT_EIO);
	assert_non_null(strstr(err.msg, "cannot write"));
	assert_non_null(strstr(err.msg, path));
	/*
	 * A node index out of range (a schedule built through the library):
	 * refused, nothing written (an outside review: it read past g->id).
	 */
	snprintf(path, sizeof(path), "%s/bad-index.json", tmpdir);
	assert_int_equal(remat_schedule_push(&s, REMAT_OP_COMPUTE, g->n, &err), REMAT_OK);
	assert_int_equal(remat_schedule_write(path, g, &s, NULL, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "out of range"));
	assert_int_equal(access(path, F_OK), -1);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

#define SH "{\"format\":\"remat-schedule\",\"version\":1,"

static void test_read_errors(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(read_text(g, SH "\"steps\": [", &s, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "s.json:1:"));
	assert_int_equal(read_text(g, "[]", &s, &err), REMAT_EINPUT);
	assert_int_equal(read_text(g, "{\"format\":\"remat-graph\",\"steps\":[]}", &s, &err),
			 REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "'format'"));
	assert_int_equal(read_text(g, "{\"format\":\"remat-schedule\",\"version\":2,\"steps\":[]}",
				   &s, &err), REMAT_EINPUT);
	assert_string_equal(err.msg, "s.json: 'version' must be 1 (got 2)");
	assert_int_equal(read_text(g, SH "\"steps\":{}}", &s, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "'steps'"));
	assert_int_equal(read_text(g, SH "\"steps\":[1]}", &s, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "steps[0]"));
	assert_int_equal(read_text(g, SH "\"steps\":[{\"op\":\"compute\",\"node\":\"A\"},"
				   "{\"op\":\"drop\",\"node\":\"A\"}]}", &s, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "steps[1]"));
	assert_non_null(strstr(err.msg, "'drop'"));
	assert_int_equal(read_text(g, SH "\"steps\":[{\"op\":\"compute\"}]}", &s, &err),
			 REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "'node'"));
	assert_int_equal(read_text(g, SH "\"steps\":[{\"op\":\"compute\",\"node\":\"Z\"}]}", &s,
				   &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "unknown node 'Z'"));
	/* Unknown fields are fine. */
	assert_int_equal(read_text(g, SH "\"steps\":[{\"op\":\"compute\",\"node\":\"A\",\"t\":1}],"
				   "\"extra\":0}", &s, &err), REMAT_OK);
	assert_int_equal(s.n, 1);
	assert_int_equal(remat_schedule_read("/nonexistent/x.json", g, &s, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "cannot read"));
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * One reading discipline for schedules and graphs: the strict JSON reader
 * (duplicate keys, \u0000, UTF-8, numbers), and "format" and "version"
 * required.  Exact messages.
 */
static void test_strict_reader(void **state)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		/* the second "node" used to be ignored: the step freed f1 */
		{ SH "\"steps\":[{\"op\":\"compute\",\"node\":\"A\"},\n"
		  "{\"op\":\"free\",\"node\":\"A\",\"node\":\"B\"}]}",
		  "s.json:2:25: duplicate key: 'node' is given more than once in this object" },
		{ SH "\"steps\":[],\"steps\":[]}",
		  "s.json:1:51: duplicate key: 'steps' is given more than once in this object" },
		{ "{\"format\":\"remat-schedule\",\"steps\":[]}", "s.json: 'version' must be 1" },
		{ "{\"version\":1,\"steps\":[]}", "s.json: 'format' must be \"remat-schedule\"" },
		{ "{\"format\":\"remat-schedule\",\"version\":\"1\",\"steps\":[]}",
		  "s.json: 'version' must be 1 (got \"1\")" },
		{ "{\"format\":\"remat-schedule\\u0000x\",\"version\":1,\"steps\":[]}",
		  "s.json:1:26: invalid JSON string: '\\u0000' is not allowed (a NUL would cut "
		  "the string short)" },
		{ SH "\"steps\":[{\"op\":\"compute\",\"node\":\"A\\u0000B\"}]}",
		  "s.json:1:74: invalid JSON string: '\\u0000' is not allowed (a NUL would cut "
		  "the string short)" },
		{ SH "\"steps\":[{\"op\":\"compute\",\"node\":\"\xff\"}]}",
		  "s.json:1:73: invalid UTF-8 in a string (byte 0xff): JSON text must be UTF-8" },
		{ SH "\"budget\":01,\"steps\":[]}",
		  "s.json:1:49: invalid JSON number '01': leading zeros are not allowed" },
		{ SH "\"steps\":[{\"op\":\"compute\",\"node\":\"\\u001b]0;x\\u0007\"}]}",
		  "s.json: steps[0]: 'node': unknown node '\\x1b]0;x\\x07'" },
	};
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	size_t i, bad = 0;

	(void)state;
	remat_schedule_init(&s);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct remat_error err;
		int rc = read_text(g, cases[i].json, &s, &err);

		if (rc != REMAT_EINPUT || strcmp(err.msg, cases[i].msg) != 0) {
			print_message("case %zu (status %d):\n  got  %s\n  want %s\n", i, rc, err.msg,
				      cases[i].msg);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_write_failure_leaves_nothing),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_strict_reader),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
