/*
 * import_nx.c - networkx node-link JSON to a graph.
 *
 * The published rematerialization benchmarks (Checkmate's Keras graphs and
 * the random layered graphs of Gagrani et al., as released with Moccasin)
 * are networkx node-link files.  This importer maps them onto remat-graph
 * fields (see remat/gen.h for the table) and hands them to the builder, so
 * an imported graph is checked by exactly the rules a remat-graph file is.
 *
 * 1. Pick the node key: "id" when every node has one (networkx's default),
 *    else "name" (the random layered files).  Keys may be numbers or
 *    strings; 7 and "7" are different keys, as in networkx.
 * 2. Hash the keys; resolve every link's two ends ("source"/"target" or
 *    "0"/"1") to node indices.
 * 3. Bucket the links by target with a stable counting sort, so each
 *    node's inputs keep the link order.
 * 4. Emit the nodes in file order (or graph.order) with their fields.
 *
 * Time and memory O(nodes + links).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "remat/gen.h"
#include "remat/io.h"
#include "core/util.h"
#include "graph/graph_internal.h"
#include "graph/import_nx.h"

/* Open-addressing table of strings -> index into a caller's string array. */
struct strmap {
	int32_t *slot;
	uint32_t mask;
	const char *const *keys;
};

static int strmap_init(struct strmap *m, int32_t n, const char *const *keys)
{
	uint32_t size = 16;

	while (size < (uint32_t)n * 2u + 2u)
		size *= 2;
	m->slot = malloc(sizeof(int32_t) * size);
	if (!m->slot)
		return -1;
	memset(m->slot, 0xff, sizeof(int32_t) * size);
	m->mask = size - 1;
	m->keys = keys;
	return 0;
}

/* Slot holding key, or the empty slot where it would go. */
static uint32_t strmap_find(const struct strmap *m, const char *key)
{
	uint32_t i = (uint32_t)remat_i_hash_str(key) & m->mask;

	while (m->slot[i] >= 0 && strcmp(m->keys[m->slot[i]], key) != 0)
		i = (i + 1) & m->mask;
	return i;
}

static int32_t strmap_get(const struct strmap *m, const char *key)
{
	return m->slot[strmap_find(m, key)];
}

int remat_i_nx_detect(const cJSON *root)
{
	if (!cJSON_IsObject(root) || remat_i_json_member(root, "format", NULL))
		return 0;
	return remat_i_json_member(root, "nodes", NULL) &&
	       (remat_i_json_member(root, "links", NULL) ||
		remat_i_json_member(root, "edges", NULL));
}

/*
 * A node key as a tagged string: "#" + number or "$" + string, so that the
 * number 7 and the string "7" stay apart.  NULL for other JSON types.
 */
/*
 * The tagged key of a node id v ("$name" or "#number") into *out.
 * Returns 0, 1 when v is neither a string nor a finite number, or -1 when
 * out of memory (*out NULL in both failures).
 */
static int key_string(const cJSON *v, char **out)
{
	char num[64];
	const char *text;
	size_t len;

	*out = NULL;
	if (cJSON_IsString(v)) {
		text = v->valuestring;
	} else if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
		remat_i_json_fmt_num(v->valuedouble, num, sizeof(num));
		text = num;
	} else {
		return 1;
	}
	len = strlen(text);
	if (!(*out = malloc(len + 2)))
		return -1;
	(*out)[0] = cJSON_IsString(v) ? '$' : '#';
	memcpy(*out + 1, text, len + 1);
	return 0;
}

struct nx {
	const char *src;
	int32_t n, m;
	char **keys;       /* [n] tagged keys */
	char **ids;        /* [n] remat ids */
	const cJSON **jn;  /* [n] node objects */
	int32_t *in_off;   /* [n+1] links bucketed by target */
	int32_t *in_src;   /* [m] */
	int32_t *order;    /* [n] emission order */
	const char **ins;  /* scratch for one node's input ids */
	struct strmap keymap, idmap;
};

static void nx_free(struct nx *x)
{
	int32_t i;

	for (i = 0; i < x->n; i++) {
		if (x->keys)
			free(x->keys[i]);
		if (x->ids)
			free(x->ids[i]);
	}
	free(x->keys);
	free(x->ids);
	free(x->jn);
	free(x->in_off);
	free(x->in_src);
	free(x->order);
	free(x->ins);
	free(x->keymap.slot);
	free(x->idmap.slot);
}

static int oom(const struct nx *x, struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_ENOMEM, "%s: out of memory", x->src);
}

static int node_err(const struct nx *x, int32_t i, struct remat_error *err,
		    const char *field, const char *what, const cJSON *got)
{
	char g[64] = "";

	if (got)
		remat_i_json_show(got, g, sizeof(g));
	if (x->ids && x->ids[i])
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: node '%s': '%s' %s%s%s%s",
				  x->src, x->ids[i], field, what, got ? " (got " : "",
				  g, got ? ")" : "");
	return REMAT_FAIL(err, REMAT_EINPUT, "%s: nodes[%d]: '%s' %s%s%s%s", x->src, i,
			  field, what, got ? " (got " : "", g, got ? ")" : "");
}

/* Steps 1-2: node keys and remat ids. */
static int read_nodes(struct nx *x, const cJSON *nodes, struct remat_error *err)
{
	const char *keyfield = "id";
	const cJSON *jn;
	int32_t i = 0;

	cJSON_ArrayForEach(jn, nodes) {
		if (!cJSON_IsObject(jn))
			return REMAT_FAIL(err, REMAT_EINPUT, "%s: nodes[%d]: must be an object",
					  x->src, i);
		if (!remat_i_json_member(jn, "id", NULL))
			keyfield = "name";
		x->jn[i++] = jn;
	}
	for (i = 0; i < x->n; i++) {
		const cJSON *k = remat_i_json_member(x->jn[i], keyfield, NULL);
		const cJSON *name = remat_i_json_member(x->jn[i], "name", NULL);
		const cJSON *idv = name ? name : k;
		char num[64];

		if (!k)
			return node_err(x, i, err, "id", "or 'name' is required", NULL);
		switch (key_string(k, &x->keys[i])) {
		case 1:
			return node_err(x, i, err, keyfield, "must be a number or a string", k);
		case -1:
			return oom(x, err);
		}
		if (cJSON_IsString(idv)) {
			x->ids[i] = strdup(idv->valuestring);
		} else if (cJSON_IsNumber(idv) && isfinite(idv->valuedouble)) {
			remat_i_json_fmt_num(idv->valuedouble, num, sizeof(num));
			x->ids[i] = strdup(num);
		} else {
			return node_err(x, i, err, "name", "must be a number or a string", idv);
		}
		if (!x->ids[i])
			return oom(x, err);
	}
	if (strmap_init(&x->keymap, x->n, (const char *const *)x->keys) ||
	    strmap_init(&x->idmap, x->n, (const char *const *)x->ids))
		return oom(x, err);
	for (i = 0; i < x->n; i++) {
		uint32_t s = strmap_find(&x->keymap, x->keys[i]);

		if (x->keymap.slot[s] >= 0)
			return node_err(x, i, err, keyfield, "is not unique",
					remat_i_json_member(x->jn[i], keyfield, NULL));
		x->keymap.slot[s] = i;
		s = strmap_find(&x->idmap, x->ids[i]);
		if (x->idmap.slot[s] < 0) /* duplicates: the builder reports them */
			x->idmap.slot[s] = i;
	}
	return REMAT_OK;
}

/* One end of links[j]: its node index. */
static int link_end(const struct nx *x, const cJSON *jl, int32_t j,
		    const char *name, const char *alt, int32_t *out,
		    struct remat_error *err)
{
	const cJSON *v = remat_i_json_member(jl, name, NULL);
	const char *field = name;
	char *k, g[64];

	if (!v) {
		v = remat_i_json_member(jl, alt, NULL);
		field = alt;
	}
	if (!v)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: links[%d]: '%s' is required",
				  x->src, j, name);
	if (key_string(v, &k) < 0)
		return oom(x, err);
	*out = k ? strmap_get(&x->keymap, k) : -1;
	free(k);
	if (*out < 0) {
		remat_i_json_show(v, g, sizeof(g));
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: links[%d]: '%s': unknown node %s",
				  x->src, j, field, g);
	}
	return REMAT_OK;
}

/* Step 3: links bucketed by target, stable. */
static int read_links(struct nx *x, const cJSON *links, struct remat_error *err)
{
	int32_t *tgt = NULL, *srcs = NULL, j = 0, v;
	const cJSON *jl;
	int rc = REMAT_OK;

	tgt = malloc(sizeof(int32_t) * ((size_t)x->m + 1));
	srcs = malloc(sizeof(int32_t) * ((size_t)x->m + 1));
	x->in_off = calloc((size_t)x->n + 2, sizeof(int32_t));
	x->in_src = malloc(sizeof(int32_t) * ((size_t)x->m + 1));
	if (!tgt || !srcs || !x->in_off || !x->in_src) {
		rc = oom(x, err);
		goto out;
	}
	cJSON_ArrayForEach(jl, links) {
		if (!cJSON_IsObject(jl)) {
			rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: links[%d]: must be an object",
					x->src, j);
			goto out;
		}
		rc = link_end(x, jl, j, "source", "0", &srcs[j], err);
		if (rc == REMAT_OK)
			rc = link_end(x, jl, j, "target", "1", &tgt[j], err);
		if (rc)
			goto out;
		x->in_off[tgt[j] + 2]++;
		j++;
	}
	for (v = 0; v < x->n; v++)
		x->in_off[v + 2] += x->in_off[v + 1];
	for (j = 0; j < x->m; j++)
		x->in_src[x->in_off[tgt[j] + 1]++] = srcs[j];
out:
	free(tgt);
	free(srcs);
	return rc;
}

static int read_order(struct nx *x, const cJSON *root, unsigned flags,
		      struct remat_error *err)
{
	const cJSON *graph = remat_i_json_member(root, "graph", NULL);
	const cJSON *order = graph ? remat_i_json_member(graph, "order", NULL) : NULL;
	const cJSON *it;
	uint8_t *seen;
	int32_t i = 0;

	x->order = malloc(sizeof(int32_t) * ((size_t)x->n + 1));
	if (!x->order)
		return oom(x, err);
	if (!(flags & REMAT_NX_GRAPH_ORDER)) {
		for (i = 0; i < x->n; i++)
			x->order[i] = i;
		return REMAT_OK;
	}
	if (!order || !cJSON_IsArray(order))
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: 'graph': 'order' must be an array of node keys", x->src);
	if (cJSON_GetArraySize(order) != x->n)
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: 'graph': 'order' must list each of the %d nodes once (it has %d entries)",
				  x->src, x->n, cJSON_GetArraySize(order));
	seen = calloc((size_t)x->n + 1, 1);
	if (!seen)
		return oom(x, err);
	cJSON_ArrayForEach(it, order) {
		char *k, g[64];
		int32_t v;

		if (key_string(it, &k) < 0) {
			free(seen);
			return oom(x, err);
		}
		v = k ? strmap_get(&x->keymap, k) : -1;
		free(k);
		if (v < 0 || seen[v]) {
			remat_i_json_show(it, g, sizeof(g));
			free(seen);
			return REMAT_FAIL(err, REMAT_EINPUT, "%s: 'graph': 'order'[%d]: %s node %s",
					  x->src, i, v < 0 ? "unknown" : "repeated", g);
		}
		seen[v] = 1;
		x->order[i++] = v;
	}
	free(seen);
	return REMAT_OK;
}

/* The first of several alternative fields that is present. */
static const cJSON *first_of(const cJSON *jn, const char *const *names,
			     const char **which)
{
	for (; *names; names++) {
		const cJSON *v = remat_i_json_member(jn, *names, NULL);

		if (v) {
			*which = *names;
			return v;
		}
	}
	return NULL;
}

static const char *const mem_fields[] = { "cost_ram", "out_cost", "mem", NULL };
static const char *const cost_fields[] = { "cost_cpu", "duration", "cost", NULL };

/* Step 4: one node into the builder. */
static int emit_node(struct nx *x, int32_t i, struct remat_graph_builder *b,
		     struct remat_error *err)
{
	const cJSON *jn = x->jn[i], *v;
	struct remat_node_spec s;
	const char *which = NULL;
	size_t idlen;
	int32_t k;

	memset(&s, 0, sizeof(s));
	s.id = x->ids[i];
	s.recompute = 1;
	v = first_of(jn, mem_fields, &which);
	if (!v)
		return node_err(x, i, err, "cost_ram", "is required (or 'out_cost', 'mem')",
				NULL);
	if (!remat_i_json_uint(v, REMAT_MAX_BYTES, &s.mem))
		return node_err(x, i, err, which,
				"must be an integer number of bytes from 0 to 2^53", v);
	s.cost = -1;
	v = first_of(jn, cost_fields, &which);
	if (v) {
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
			return node_err(x, i, err, which, "must be a finite number >= 0", v);
		s.cost = v->valuedouble;
	}
	s.kind = REMAT_KIND_OP;
	v = remat_i_json_member(jn, "backward", NULL);
	if (v) {
		if (!cJSON_IsBool(v))
			return node_err(x, i, err, "backward", "must be true or false", v);
		if (strcmp(s.id, "Loss") == 0)
			s.kind = REMAT_KIND_LOSS;
		else
			s.kind = cJSON_IsTrue(v) ? REMAT_KIND_BACKWARD : REMAT_KIND_FORWARD;
	}
	idlen = strlen(s.id);
	if (s.kind == REMAT_KIND_BACKWARD && idlen > 9 &&
	    strcmp(s.id + idlen - 9, "_backward") == 0) {
		char *fw = strdup(s.id);

		if (!fw)
			return oom(x, err);
		fw[idlen - 9] = '\0';
		k = strmap_get(&x->idmap, fw);
		free(fw);
		if (k >= 0)
			s.grad_of = x->ids[k];
	}
	s.n_inputs = x->in_off[i + 1] - x->in_off[i];
	for (k = 0; k < s.n_inputs; k++)
		x->ins[k] = x->ids[x->in_src[x->in_off[i] + k]];
	s.inputs = x->ins;
	if (s.n_inputs > 0 && s.kind == REMAT_KIND_INPUT)
		return node_err(x, i, err, "links", "must not enter an input node", NULL);
	return remat_builder_add(b, &s, err);
}

int remat_i_nx_build(const cJSON *root, const char *src, unsigned flags,
		     struct remat_graph_builder *b, struct remat_error *err)
{
	const cJSON *nodes, *links, *v, *graph;
	struct nx x;
	int32_t i;
	int rc;

	memset(&x, 0, sizeof(x));
	x.src = src;
	v = remat_i_json_member(root, "directed", NULL);
	if (v && !cJSON_IsTrue(v))
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: 'directed' must be true: a computation graph is directed",
				  src);
	nodes = remat_i_json_member(root, "nodes", NULL);
	links = remat_i_json_member(root, "links", NULL);
	if (!links)
		links = remat_i_json_member(root, "edges", NULL);
	if (!cJSON_IsArray(nodes))
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: 'nodes' must be an array", src);
	if (!cJSON_IsArray(links))
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: 'links' must be an array", src);
	x.n = cJSON_GetArraySize(nodes);
	x.m = cJSON_GetArraySize(links);
	x.keys = calloc((size_t)x.n + 1, sizeof(char *));
	x.ids = calloc((size_t)x.n + 1, sizeof(char *));
	x.jn = calloc((size_t)x.n + 1, sizeof(cJSON *));
	x.ins = malloc(sizeof(char *) * ((size_t)x.m + 1));
	if (!x.keys || !x.ids || !x.jn || !x.ins) {
		rc = oom(&x, err);
		goto out;
	}
	graph = remat_i_json_member(root, "graph", NULL);
	v = graph ? remat_i_json_member(graph, "name", NULL) : NULL;
	if (v && cJSON_IsString(v) && v->valuestring[0]) {
		rc = remat_builder_set_name(b, v->valuestring, err);
		if (rc)
			goto out;
	}
	rc = read_nodes(&x, nodes, err);
	if (rc == REMAT_OK)
		rc = read_links(&x, links, err);
	if (rc == REMAT_OK)
		rc = read_order(&x, root, flags, err);
	for (i = 0; rc == REMAT_OK && i < x.n; i++)
		rc = emit_node(&x, x.order[i], b, err);
out:
	nx_free(&x);
	return rc;
}

int remat_nx_load_buffer(const char *buf, size_t len, const char *source,
			 unsigned flags, struct remat_graph **out,
			 struct remat_error *err)
{
	struct remat_graph_builder *b = NULL;
	cJSON *root = NULL;
	int rc;

	*out = NULL;
	if (!source)
		source = "<graph>";
	REMAT_TRY(remat_i_json_parse(buf, len, source, &root, err));
	if (!remat_i_nx_detect(root)) {
		cJSON_Delete(root);
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: not networkx node-link JSON (needs 'nodes' and 'links', and no 'format')",
				  source);
	}
	rc = remat_builder_new(source, &b, err);
	if (rc == REMAT_OK)
		rc = remat_i_nx_build(root, source, flags, b, err);
	cJSON_Delete(root);
	if (rc) {
		remat_builder_free(b);
		return rc;
	}
	return remat_builder_finish(b, out, err);
}

int remat_nx_load_file(const char *path, unsigned flags,
		       struct remat_graph **out, struct remat_error *err)
{
	char *buf;
	size_t len;
	int rc;

	*out = NULL;
	REMAT_TRY(remat_i_read_file(path, &buf, &len, err));
	rc = remat_nx_load_buffer(buf, len, remat_i_input_name(path), flags, out, err);
	free(buf);
	return rc;
}
