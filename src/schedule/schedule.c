/*
 * schedule.c - the schedule type, its JSON reader and its atomic writer
 * (FORMATS.md section 2).  The reader goes through the strict JSON reader
 * (core/json_read.c) as the graph loader does, and requires "format" and
 * "version" as a graph file does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "remat/schedule.h"
#include "remat/sim.h"
#include "remat/io.h"
#include "core/atomic.h"
#include "core/util.h"
#include "schedule/schedule_internal.h"

void remat_schedule_init(struct remat_schedule *s)
{
	s->steps = NULL;
	s->n = 0;
	s->cap = 0;
}

void remat_schedule_release(struct remat_schedule *s)
{
	free(s->steps);
	remat_schedule_init(s);
}

int remat_schedule_reserve(struct remat_schedule *s, int64_t cap,
			   struct remat_error *err)
{
	struct remat_step *ns;
	int64_t ncap = s->cap ? s->cap : 64;

	if (cap <= s->cap)
		return REMAT_OK;
	while (ncap < cap)
		ncap *= 2;
	if ((uint64_t)ncap > SIZE_MAX / sizeof(*ns))
		return REMAT_FAIL(err, REMAT_ENOMEM, "schedule too long");
	ns = realloc(s->steps, (size_t)ncap * sizeof(*ns));
	if (!ns)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for a schedule of %lld steps",
				  (long long)cap);
	s->steps = ns;
	s->cap = ncap;
	return REMAT_OK;
}

int remat_schedule_push(struct remat_schedule *s, enum remat_op op,
			int32_t node, struct remat_error *err)
{
	if (s->n == s->cap)
		REMAT_TRY(remat_schedule_reserve(s, s->n + 1, err));
	s->steps[s->n].op = op;
	s->steps[s->n].node = node;
	s->n++;
	return REMAT_OK;
}

int remat_schedule_copy(struct remat_schedule *dst,
			const struct remat_schedule *src, struct remat_error *err)
{
	REMAT_TRY(remat_schedule_reserve(dst, src->n, err));
	if (src->n)
		memcpy(dst->steps, src->steps, (size_t)src->n * sizeof(*src->steps));
	dst->n = src->n;
	return REMAT_OK;
}

void remat_schedule_swap(struct remat_schedule *a, struct remat_schedule *b)
{
	struct remat_schedule t = *a;

	*a = *b;
	*b = t;
}

int64_t remat_schedule_count_frees(const struct remat_schedule *s)
{
	int64_t i, k = 0;

	for (i = 0; i < s->n; i++)
		k += s->steps[i].op == REMAT_OP_FREE;
	return k;
}

static int step_fail(const char *src, long i, struct remat_error *err,
		     const char *what, const char *detail)
{
	return REMAT_FAIL(err, REMAT_EINPUT, "%s: steps[%ld]: %s%s%s%s", src, i, what,
			  detail ? " '" : "", detail ? detail : "", detail ? "'" : "");
}

/*
 * Steps from a parsed tree (consumed).  The strict reader has checked the
 * JSON (duplicate keys included); "format" and "version" are required, as
 * in a graph file.
 */
static int read_tree(cJSON *root, const char *src, const struct remat_graph *g,
		     struct remat_schedule *out, struct remat_error *err)
{
	cJSON *v, *steps, *it;
	long i = 0;
	int64_t version;
	int rc = REMAT_OK;

	if (!cJSON_IsObject(root)) {
		rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: the top level must be a JSON object", src);
		goto done;
	}
	v = remat_i_json_member(root, "format", NULL);
	if (!v || !cJSON_IsString(v) || strcmp(v->valuestring, "remat-schedule") != 0) {
		rc = remat_i_json_field_fail(src, err, "format", "must be \"remat-schedule\"", v);
		goto done;
	}
	v = remat_i_json_member(root, "version", NULL);
	if (!v || !remat_i_json_uint(v, 1, &version) || version != 1) {
		rc = remat_i_json_field_fail(src, err, "version", "must be 1", v);
		goto done;
	}
	steps = remat_i_json_member(root, "steps", NULL);
	if (!steps || !cJSON_IsArray(steps)) {
		rc = remat_i_json_field_fail(src, err, "steps", "must be an array of steps", steps);
		goto done;
	}
	rc = remat_schedule_reserve(out, cJSON_GetArraySize(steps), err);
	if (rc)
		goto done;
	cJSON_ArrayForEach(it, steps) {
		cJSON *op, *node;
		int32_t idx;
		enum remat_op o;

		if (!cJSON_IsObject(it)) {
			rc = step_fail(src, i, err, "must be an object", NULL);
			goto done;
		}
		op = remat_i_json_member(it, "op", NULL);
		node = remat_i_json_member(it, "node", NULL);
		if (!op || !cJSON_IsString(op)) {
			rc = step_fail(src, i, err, "'op' must be \"compute\" or \"free\"", NULL);
			goto done;
		}
		if (strcmp(op->valuestring, "compute") == 0) {
			o = REMAT_OP_COMPUTE;
		} else if (strcmp(op->valuestring, "free") == 0) {
			o = REMAT_OP_FREE;
		} else {
			rc = step_fail(src, i, err, "'op' must be \"compute\" or \"free\", not",
				       op->valuestring);
			goto done;
		}
		if (!node || !cJSON_IsString(node)) {
			rc = step_fail(src, i, err, "'node' must be a node id string", NULL);
			goto done;
		}
		idx = remat_graph_find(g, node->valuestring);
		if (idx < 0) {
			rc = step_fail(src, i, err, "'node': unknown node", node->valuestring);
			goto done;
		}
		rc = remat_schedule_push(out, o, idx, err);
		if (rc)
			goto done;
		i++;
	}
done:
	cJSON_Delete(root);
	return rc;
}

int remat_schedule_read_buffer(const char *buf, size_t len, const char *src,
			       const struct remat_graph *g,
			       struct remat_schedule *out, struct remat_error *err)
{
	cJSON *root = NULL;

	remat_schedule_clear(out);
	REMAT_TRY(remat_i_json_parse(buf, len, src, &root, err));
	return read_tree(root, src, g, out, err);
}

int remat_schedule_read(const char *path, const struct remat_graph *g,
			struct remat_schedule *out, struct remat_error *err)
{
	cJSON *root = NULL;

	remat_schedule_clear(out);
	REMAT_TRY(remat_i_json_parse_file(path, &root, &path, err));
	return read_tree(root, path, g, out, err);
}

static void write_body(FILE *f, const struct remat_graph *g,
		       const struct remat_schedule *s,
		       const struct remat_schedule_meta *meta)
{
	const struct remat_sim_result *r = meta ? meta->summary : NULL;
	int64_t i;

	fputs("{\n  \"format\": \"remat-schedule\",\n  \"version\": 1,\n  \"graph\": ", f);
	remat_i_json_write_str(f, g->name);
	fputs(",\n  \"planner\": ", f);
	if (meta && meta->planner)
		remat_i_json_write_str(f, meta->planner);
	else
		fputs("null", f);
	fputs(",\n  \"budget\": ", f);
	if (meta && meta->budget >= 0)
		fprintf(f, "%lld", (long long)meta->budget);
	else
		fputs("null", f);
	fputs(",\n  \"steps\": [", f);
	for (i = 0; i < s->n; i++) {
		fputs(i ? ",\n    {\"op\": \"" : "\n    {\"op\": \"", f);
		fputs(s->steps[i].op == REMAT_OP_COMPUTE ? "compute" : "free", f);
		fputs("\", \"node\": ", f);
		remat_i_json_write_str(f, g->id[s->steps[i].node]);
		fputc('}', f);
	}
	fputs(s->n ? "\n  ]" : "]", f);
	if (r) {
		fprintf(f, ",\n  \"summary\": {\n    \"feasible\": %s",
			r->feasible ? "true" : "false");
		remat_i_json_write_figures(f, r, ",\n    ");
		fputs("\n  }", f);
	}
	fputs("\n}\n", f);
}

struct sched_ctx {
	const struct remat_graph *g;
	const struct remat_schedule *s;
	const struct remat_schedule_meta *meta;
};

static void write_sched_body(FILE *f, const void *ctx)
{
	const struct sched_ctx *c = ctx;

	write_body(f, c->g, c->s, c->meta);
}

int remat_schedule_write(const char *path, const struct remat_graph *g,
			 const struct remat_schedule *s,
			 const struct remat_schedule_meta *meta,
			 struct remat_error *err)
{
	struct sched_ctx c = { g, s, meta };
	int64_t bad;

	/* A schedule built through the library: every node index in range. */
	REMAT_TRY(remat_i_check_indices(g, s, &bad, err));
	return remat_i_write_atomic_stream(path, write_sched_body, &c, err);
}

int remat_i_check_indices(const struct remat_graph *g, const struct remat_schedule *s,
			  int64_t *step, struct remat_error *err)
{
	int64_t i;

	*step = -1;
	for (i = 0; i < s->n; i++)
		if (s->steps[i].node < 0 || s->steps[i].node >= g->n) {
			*step = i;
			return REMAT_FAIL(err, REMAT_EINPUT, "steps[%lld]: node index %d out of "
					  "range", (long long)i, s->steps[i].node);
		}
	return REMAT_OK;
}
