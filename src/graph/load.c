/*
 * load.c - remat-graph JSON (FORMATS.md section 1) to a graph.
 *
 * The text goes through the strict JSON reader (core/json_read.c: syntax,
 * UTF-8, numbers, duplicate keys, depth, each with line and column).  The
 * loader then checks the JSON types of every field it knows, copies what
 * it needs into the builder, frees the cJSON tree and lets the builder
 * check the graph-wide rules (ids, references, cycles).  Unknown fields
 * are ignored.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "remat/graph.h"
#include "remat/io.h"
#include "core/util.h"
#include "graph/graph_internal.h"
#include "graph/import_nx.h"

struct node_ctx {
	const char *src;
	const char *id;  /* NULL until known */
	int index;
};

static int node_fail(const struct node_ctx *c, struct remat_error *err,
		     const char *field, const char *what, const cJSON *got)
{
	char shown[64];

	if (got)
		remat_i_json_show(got, shown, sizeof(shown));
	if (c->id)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: node '%s': '%s' %s%s%s%s",
				  c->src, c->id, field, what, got ? " (got " : "",
				  got ? shown : "", got ? ")" : "");
	return REMAT_FAIL(err, REMAT_EINPUT, "%s: nodes[%d]: '%s' %s%s%s%s", c->src,
			  c->index, field, what, got ? " (got " : "", got ? shown : "",
			  got ? ")" : "");
}

static int read_bytes(const struct node_ctx *c, const cJSON *obj,
		      const char *key, int required, int64_t *out,
		      struct remat_error *err)
{
	cJSON *v = remat_i_json_member(obj, key, NULL);

	*out = 0;
	if (!v) {
		if (required)
			return node_fail(c, err, key, "is required", NULL);
		return REMAT_OK;
	}
	if (!remat_i_json_uint(v, REMAT_MAX_BYTES, out))
		return node_fail(c, err, key,
				 "must be an integer number of bytes from 0 to 2^53", v);
	return REMAT_OK;
}

struct strvec {
	const char **v;
	int32_t n, cap;
};

static int load_node(const char *src, const cJSON *jn, int index,
		     struct remat_graph_builder *b, struct strvec *ins,
		     struct remat_error *err)
{
	struct node_ctx c = { src, NULL, index };
	struct remat_node_spec s;
	cJSON *v, *it;

	memset(&s, 0, sizeof(s));
	if (!cJSON_IsObject(jn))
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: nodes[%d]: must be an object",
				  src, index);
	v = remat_i_json_member(jn, "id", NULL);
	if (!v || !cJSON_IsString(v) || !v->valuestring[0])
		return node_fail(&c, err, "id", "must be a non-empty string", v);
	c.id = s.id = v->valuestring;

	s.kind = REMAT_KIND_OP;
	v = remat_i_json_member(jn, "kind", NULL);
	if (v) {
		int k = cJSON_IsString(v) ? remat_i_kind_parse(v->valuestring) : -1;

		if (k < 0)
			return node_fail(&c, err, "kind",
					 "must be one of input, forward, loss, backward, op", v);
		s.kind = (enum remat_kind)k;
	}
	REMAT_TRY(read_bytes(&c, jn, "mem", 1, &s.mem, err));
	REMAT_TRY(read_bytes(&c, jn, "workspace", 0, &s.workspace, err));

	s.cost = -1;
	v = remat_i_json_member(jn, "cost", NULL);
	if (v) {
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
			return node_fail(&c, err, "cost", "must be a finite number >= 0", v);
		s.cost = v->valuedouble;
	}

	ins->n = 0;
	v = remat_i_json_member(jn, "inputs", NULL);
	if (v) {
		if (!cJSON_IsArray(v))
			return node_fail(&c, err, "inputs", "must be an array of node ids", v);
		cJSON_ArrayForEach(it, v) {
			if (!cJSON_IsString(it) || !it->valuestring[0])
				return node_fail(&c, err, "inputs",
						 "must hold non-empty id strings", it);
			if (ins->n == ins->cap) {
				int32_t ncap = ins->cap ? ins->cap * 2 : 16;
				const char **nv = realloc(ins->v, sizeof(char *) * (size_t)ncap);

				if (!nv)
					return REMAT_FAIL(err, REMAT_ENOMEM, "%s: out of memory", src);
				ins->v = nv;
				ins->cap = ncap;
			}
			ins->v[ins->n++] = it->valuestring;
		}
	}
	s.inputs = ins->v;
	s.n_inputs = ins->n;
	if (s.kind == REMAT_KIND_INPUT && s.n_inputs > 0)
		return node_fail(&c, err, "inputs", "must be empty on an input node", NULL);

	v = remat_i_json_member(jn, "grad_of", NULL);
	if (v) {
		if (!cJSON_IsString(v) || !v->valuestring[0])
			return node_fail(&c, err, "grad_of", "must be a node id string", v);
		s.grad_of = v->valuestring;
	}
	s.recompute = 1;
	v = remat_i_json_member(jn, "recompute", NULL);
	if (v) {
		if (!cJSON_IsBool(v))
			return node_fail(&c, err, "recompute", "must be true or false", v);
		s.recompute = cJSON_IsTrue(v);
	}
	v = remat_i_json_member(jn, "label", NULL);
	if (v) {
		if (!cJSON_IsString(v))
			return node_fail(&c, err, "label", "must be a string", v);
		s.label = v->valuestring;
	}
	return remat_builder_add(b, &s, err);
}

static int build_from_json(const cJSON *root, const char *src,
			   struct remat_graph_builder *b, struct remat_error *err)
{
	struct strvec ins = { NULL, 0, 0 };
	cJSON *v, *it;
	int rc = REMAT_OK, i = 0;
	int64_t version;

	if (!cJSON_IsObject(root))
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: the top level must be a JSON object", src);
	if (remat_i_nx_detect(root)) /* networkx node-link: see import_nx.c */
		return remat_i_nx_build(root, src, 0, b, err);
	v = remat_i_json_member(root, "format", NULL);
	if (!v || !cJSON_IsString(v) || strcmp(v->valuestring, "remat-graph") != 0)
		return remat_i_json_field_fail(src, err, "format", "must be \"remat-graph\"", v);
	v = remat_i_json_member(root, "version", NULL);
	if (!v || !remat_i_json_uint(v, 1, &version) || version != 1)
		return remat_i_json_field_fail(src, err, "version", "must be 1", v);
	v = remat_i_json_member(root, "name", NULL);
	if (v) {
		if (!cJSON_IsString(v))
			return remat_i_json_field_fail(src, err, "name", "must be a string", v);
		REMAT_TRY(remat_builder_set_name(b, v->valuestring, err));
	}
	v = remat_i_json_member(root, "cost_unit", NULL);
	if (v) {
		if (!cJSON_IsString(v))
			return remat_i_json_field_fail(src, err, "cost_unit",
						       "must be a string", v);
		REMAT_TRY(remat_builder_set_cost_unit(b, v->valuestring, err));
	}
	v = remat_i_json_member(root, "fixed_bytes", NULL);
	if (v) {
		int64_t fixed;

		if (!remat_i_json_uint(v, REMAT_MAX_BYTES, &fixed))
			return remat_i_json_field_fail(src, err, "fixed_bytes",
					"must be an integer number of bytes from 0 to 2^53", v);
		remat_builder_set_fixed_bytes(b, fixed);
	}
	v = remat_i_json_member(root, "nodes", NULL);
	if (!v || !cJSON_IsArray(v))
		return remat_i_json_field_fail(src, err, "nodes",
					       "must be an array of node objects", v);
	cJSON_ArrayForEach(it, v) {
		rc = load_node(src, it, i++, b, &ins, err);
		if (rc)
			break;
	}
	free(ins.v);
	if (rc)
		return rc;
	v = remat_i_json_member(root, "outputs", NULL);
	if (v) {
		if (!cJSON_IsArray(v))
			return remat_i_json_field_fail(src, err, "outputs",
						       "must be an array of node ids", v);
		remat_builder_outputs_given(b);
		cJSON_ArrayForEach(it, v) {
			if (!cJSON_IsString(it))
				return remat_i_json_field_fail(src, err, "outputs",
							       "must hold id strings", it);
			REMAT_TRY(remat_builder_add_output(b, it->valuestring, err));
		}
	}
	return REMAT_OK;
}

/* Build from a parsed tree (consumed). */
static int load_tree(cJSON *root, const char *source, struct remat_graph **out,
		     struct remat_error *err)
{
	struct remat_graph_builder *b = NULL;
	int rc;

	rc = remat_builder_new(source, &b, err);
	if (rc == REMAT_OK)
		rc = build_from_json(root, source, b, err);
	cJSON_Delete(root);
	if (rc) {
		remat_builder_free(b);
		return rc;
	}
	return remat_builder_finish(b, out, err);
}

int remat_graph_load_buffer(const char *buf, size_t len, const char *source,
			    struct remat_graph **out, struct remat_error *err)
{
	cJSON *root = NULL;

	*out = NULL;
	if (!source)
		source = "<graph>";
	REMAT_TRY(remat_i_json_parse(buf, len, source, &root, err));
	return load_tree(root, source, out, err);
}

int remat_graph_load_file(const char *path, struct remat_graph **out,
			  struct remat_error *err)
{
	cJSON *root = NULL;

	*out = NULL;
	REMAT_TRY(remat_i_json_parse_file(path, &root, &path, err));
	return load_tree(root, path, out, err);
}
