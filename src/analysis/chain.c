/*
 * chain.c - the chain view of a graph (see include/remat/chain.h for the
 * rules): 1-separators of the forward part, stage assignment of every
 * needed node, merging of stages without backward nodes, and the per-stage
 * figures measured by replaying each stage under the simulator's rules.
 *
 * Why a sweep and not igraph_articulation_points(): on a training graph
 * the backward edges make the whole graph biconnected, so the cut must be
 * taken on the forward part alone, and only the cuts between the start
 * and the loss count (one that cuts off a dangling branch does not).  On
 * a DAG those are the nodes that no edge jumps over in a topological
 * order of the chain nodes: one O(n + e) sweep, with no copy of the
 * graph.  Issue 12 widened the rule to memory objects (an owner and the
 * size-0 nodes aliasing it) and to values resident the whole step (see
 * remat/chain.h, rules 1, 1b and 3).  tests/unit/test_chain.c checks the
 * sweep against igraph's articulation points and a brute-force path
 * search on random graphs, and the widened rule on hand-made graphs.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "remat/chain.h"
#include "analysis/needed.h"

void remat_chain_free(struct remat_chain *c)
{
	if (!c)
		return;
	free(c->stages);
	free(c->fwd);
	free(c->fwd_ng);
	free(c->fwd_h);
	free(c->bwd);
	free(c->stage_of);
	free(c->alias_of);
	free(c->exit_stage);
	free(c->exit_mem);
	free(c->passing);
	free(c->is_static);
	free(c->is_bwd);
	free(c->bwd_reader_min);
	free(c->grad_at);
	free(c);
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

int remat_chain_in_exit(const struct remat_chain *c, int32_t v, int32_t s)
{
	return s >= 0 && c->exit_stage[c->alias_of[v]] == s;
}

/*
 * Bytes of v as the stage replays count them: none for a passing object
 * (REMAT_CHAIN_CUTS), which input_mem counts as resident the whole step.
 */
static int64_t vmem(const struct remat_graph *g, const struct remat_chain *c, int32_t v)
{
	return c->passing && c->passing[c->alias_of[v]] ? 0 : g->mem[v];
}

/* Is u part of the entry of stage a (the exit of stage a - 1)? */
static int in_entry(const struct remat_chain *c, int32_t u, int32_t a)
{
	return remat_chain_in_exit(c, u, a - 1);
}

/* Is u in the forward part of stages a..b? */
static int in_fwd_range(const struct remat_chain *c, int32_t u, int32_t a, int32_t b)
{
	int32_t s = c->stage_of[u];

	return s >= a && s <= b && !c->is_bwd[u];
}

/*
 * Does a forward node of stages a..b stay resident after a forward that
 * keeps everything needed later: an output, or a node read by anything
 * outside the forward part of a..b.
 */
static int kept_after_forward(const struct remat_graph *g, const struct remat_chain *c,
			      int32_t v, int32_t a, int32_t b)
{
	int32_t k;

	if (g->is_output[v])
		return 1;
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
		int32_t w = g->use_idx[k];

		if (c->stage_of[w] >= 0 && !in_fwd_range(c, w, a, b))
			return 1;
	}
	return 0;
}

/*
 * Replay a forward list: nodes[0..cnt) in order, skipping those with
 * only_ng set and ng[i] == 0.  keep(v) values stay; the others are freed
 * after their last reader in the list.  The stage input (the entry's
 * objects) is held outside unless entry_inside, in which case each object
 * the list reads is resident at the start and freed after its last
 * reader.  Returns the peak; *end gets the bytes resident at the end.
 * last[] (n entries of -1) is used and restored; an entry object's last
 * reader is kept at its owner's index (owners of entry objects lie
 * outside a..b).
 */
enum replay_mode {
	REPLAY_ALL,     /* every node, everything read outside the range kept */
	REPLAY_NG,      /* chain nodes only, only the exit kept */
	REPLAY_HELD     /* as REPLAY_ALL with the exit resident and not recomputed */
};

/* Is position p of a stage list skipped in this mode? */
static int replay_skip(const struct remat_chain *c, enum replay_mode mode, int32_t p0,
		       int32_t p, int32_t v, int32_t b)
{
	if (mode == REPLAY_NG)
		return !c->fwd_ng[p0 + p];
	if (mode == REPLAY_HELD)
		return c->stage_of[v] == b && !c->fwd_h[p0 + p];
	return 0;
}

static int64_t replay_forward(const struct remat_graph *g, const struct remat_chain *c,
			      int32_t p0, int32_t cnt, enum replay_mode mode,
			      int32_t a, int32_t b, int entry_inside, const uint8_t *drop,
			      int32_t *last, int64_t *end)
{
	const int32_t *nodes = c->fwd + p0;
	int64_t cur = 0, peak = 0;
	int32_t p, k;
	int keep_ng_exit = mode == REPLAY_NG;

	for (p = 0; p < cnt; p++) {
		int32_t v = nodes[p];

		if (replay_skip(c, mode, p0, p, v, b))
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k], o = c->alias_of[u];

			if (in_fwd_range(c, u, a, b)) {
				last[u] = p;
			} else if (entry_inside && in_entry(c, u, a)) {
				if (last[o] < 0)
					cur += vmem(g, c, o);    /* resident at the start */
				last[o] = p;
			}
		}
	}
	if (mode == REPLAY_HELD && c->stages[b].exit >= 0)
		cur += c->exit_mem[b];
	peak = cur;
	for (p = 0; p < cnt; p++) {
		int32_t v = nodes[p];
		int keep;

		if (replay_skip(c, mode, p0, p, v, b))
			continue;
		if (cur + vmem(g, c, v) + g->workspace[v] > peak)
			peak = cur + vmem(g, c, v) + g->workspace[v];
		cur += vmem(g, c, v);
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (in_fwd_range(c, u, a, b) && last[u] == p) {
				keep = keep_ng_exit ? remat_chain_in_exit(c, u, b)
					: kept_after_forward(g, c, u, a, b) && !(drop && drop[u]);
				if (!keep)
					cur -= vmem(g, c, u);
			} else if (entry_inside && in_entry(c, u, a) &&
				   last[c->alias_of[u]] == p) {
				cur -= vmem(g, c, c->alias_of[u]);
				last[c->alias_of[u]] = -2;    /* freed once */
			}
		}
		if (last[v] < 0) {
			keep = keep_ng_exit ? remat_chain_in_exit(c, v, b)
				: kept_after_forward(g, c, v, a, b) && !(drop && drop[v]);
			if (!keep)
				cur -= vmem(g, c, v);
		}
	}
	for (p = 0; p < cnt && entry_inside; p++)
		for (k = g->in_off[nodes[p]]; k < g->in_off[nodes[p] + 1]; k++)
			if (!in_fwd_range(c, g->in_idx[k], a, b))
				last[c->alias_of[g->in_idx[k]]] = -1;
	for (p = 0; p < cnt; p++)
		last[nodes[p]] = -1;
	*end = cur;
	return peak;
}

/*
 * Is u resident (counted) when the backward of stages a..b runs: a
 * backward node of the range, a forward node of the range that some
 * backward node of stage <= b reads (or an output), or a value from a
 * later stage that a backward node of stage <= b reads.
 */
static int counted_in_backward(const struct remat_graph *g, const struct remat_chain *c,
			       int32_t u, int32_t a, int32_t b)
{
	int32_t s = c->stage_of[u];

	if (s < a)
		return 0;
	if (s <= b)
		return c->is_bwd[u] || c->bwd_reader_min[u] <= b || g->is_output[u];
	return c->bwd_reader_min[u] <= b && !g->is_output[u];
}

/*
 * Is the input of stages a..b (the entry's objects) still needed once
 * their forward has run: read by the backward of a stage >= a or the
 * forward of a stage > b, or an output?  An object's members are the
 * forward nodes of stage a - 1 in it, and its owner (an alias's readers
 * read the owner too).
 */
static int input_live(const struct remat_graph *g, const struct remat_chain *c, int32_t a,
		      int32_t b)
{
	const struct remat_stage *sp;
	int32_t i, t, k;

	if (a == 0 || c->stages[a].entry < 0)
		return 1;
	sp = &c->stages[a - 1];
	for (i = 0; i < sp->n_fwd; i++) {
		int32_t e[2];

		e[0] = c->fwd[sp->fwd_off + i];
		e[1] = c->alias_of[e[0]];
		if (!in_entry(c, e[0], a))
			continue;
		for (t = 0; t < 2; t++) {
			if (g->is_output[e[t]])
				return 1;
			for (k = g->use_off[e[t]]; k < g->use_off[e[t] + 1]; k++) {
				int32_t u = g->use_idx[k], s = c->stage_of[u];

				if (s >= 0 && ((c->is_bwd[u] && s >= a) ||
					       (!c->is_bwd[u] && s > b)))
					return 1;
			}
		}
	}
	return 0;
}

/*
 * Node q of a backward list: seq[q], or (seq NULL) the next node of the
 * stages' lists from stage *s down, *s and *i its cursor (start: b, 0).
 */
static int32_t list_node(const struct remat_chain *c, const int32_t *seq, int32_t *s,
			 int32_t *i, int32_t q)
{
	if (seq)
		return seq[q];
	while (*i >= c->stages[*s].n_bwd) {
		(*s)--;
		*i = 0;
	}
	return c->bwd[c->stages[*s].bwd_off + (*i)++];
}

/*
 * remat_chain_measure() and remat_chain_measure_option(): drop (may be
 * NULL) marks forward nodes not kept after the forward; seq (nseq nodes,
 * NULL: the stages' backward lists b down to a) is the backward's compute
 * sequence, recomputations included.
 */
static void measure_impl(const struct remat_graph *g, const struct remat_chain *c,
			int32_t a, int32_t b, const uint8_t *drop, const int32_t *seq,
			int32_t nseq, int32_t *scratch, struct remat_stage *st)
{
	int32_t cs, ci;
	const struct remat_stage *sa = &c->stages[a], *sb = &c->stages[b];
	int32_t f0 = sa->fwd_off, fcnt = sb->fwd_off + sb->n_fwd - sa->fwd_off;
	int32_t *last = scratch, *pos = scratch + g->n;
	int64_t end, start = 0, cur, peak;
	int32_t i, p, k, n_list, q, nb;

	memset(st, 0, sizeof(*st));
	st->entry = sa->entry;
	st->exit = sb->exit;
	st->x = a > 0 ? c->exit_mem[a - 1] : 0;
	st->y = c->exit_mem[b];

	for (i = 0; i < fcnt; i++) {
		int32_t v = c->fwd[f0 + i];

		st->fwd_cost += g->cost[v];
		if (c->fwd_ng[f0 + i]) {
			st->fwd_cost_ng += g->cost[v];
			if (!g->recompute[v] || g->is_output[v])
				st->norecompute = 1;
		}
		if (g->is_output[v])
			st->out_mem += g->mem[v];
	}

	/* Forward keeping everything the rest of the graph reads. */
	peak = replay_forward(g, c, f0, fcnt, REPLAY_ALL, a, b, 0, drop, last, &end);
	st->xbar = end;
	st->fwd_tmp = peak - end;
	/* The same with the exit already resident (a checkpoint kept). */
	st->fwd_cost_h = st->fwd_cost;
	st->fwd_tmp_h = st->fwd_tmp;
	if (st->exit >= 0) {
		peak = replay_forward(g, c, f0, fcnt, REPLAY_HELD, a, b, 0, drop, last, &end);
		st->fwd_tmp_h = max64(peak - st->xbar, 0);
		for (i = 0; i < fcnt; i++)
			if (replay_skip(c, REPLAY_HELD, f0, i, c->fwd[f0 + i], b))
				st->fwd_cost_h -= g->cost[c->fwd[f0 + i]];
	}
	/* Forward without grad: only the chain nodes, only the exit kept. */
	peak = replay_forward(g, c, f0, fcnt, REPLAY_NG, a, b, 0, NULL, last, &end);
	st->fwd_tmp_ng = max64(peak - st->y, 0);
	st->fwd_peak_ng_in = replay_forward(g, c, f0, fcnt, REPLAY_NG, a, b, 1, NULL, last,
					    &end);
	st->input_live = input_live(g, c, a, b);

	/* Backward: stages b down to a, each in topological order (or seq). */
	st->grad_in = c->grad_at[b + 1];
	st->grad = c->grad_at[a];
	for (i = 0; i < fcnt; i++) {
		int32_t v = c->fwd[f0 + i];

		if (counted_in_backward(g, c, v, a, b) && !(drop && drop[v]))
			start += vmem(g, c, v);
	}
	start += st->grad_in;
	st->bwd_start = start;
	nb = seq ? nseq : sb->bwd_off + sb->n_bwd - sa->bwd_off;
	n_list = 0;
	for (q = 0, cs = b, ci = 0; q < nb; q++) {
		int32_t w = list_node(c, seq, &cs, &ci, q);

		st->bwd_cost += g->cost[w];
		if (g->is_output[w])
			st->out_mem += g->mem[w];
		pos[w] = n_list++;
	}
	/* Last reader of each value, counting only readers that come after it. */
	for (p = 0, cs = b, ci = 0; p < nb; p++) {
		int32_t w = list_node(c, seq, &cs, &ci, p);

		for (k = g->in_off[w]; k < g->in_off[w + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (pos[u] < 0 || pos[u] < p)
				last[u] = p;
		}
	}
	cur = start;
	peak = start;
	for (p = 0, cs = b, ci = 0; p < nb; p++) {
		int32_t w = list_node(c, seq, &cs, &ci, p);

		if (cur + vmem(g, c, w) + g->workspace[w] > peak)
			peak = cur + vmem(g, c, w) + g->workspace[w];
		cur += vmem(g, c, w);
		for (k = g->in_off[w]; k < g->in_off[w + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (last[u] != p || !(pos[u] < 0 || pos[u] < p) || g->is_output[u])
				continue;
			/* A value the backward recomputed goes after its last reader. */
			if ((pos[u] >= 0 && !c->is_bwd[u]) ||
			    (g->kind[u] != REMAT_KIND_INPUT && counted_in_backward(g, c, u, a, b) &&
			     c->bwd_reader_min[u] >= a))
				cur -= vmem(g, c, u);
		}
		if (last[w] < 0 && !g->is_output[w] && c->bwd_reader_min[w] >= a)
			cur -= vmem(g, c, w);
	}
	st->bwd_tmp = peak - start;
	for (q = 0, cs = b, ci = 0; q < nb; q++) {
		int32_t w = list_node(c, seq, &cs, &ci, q);

		pos[w] = -1;
		for (k = g->in_off[w]; k < g->in_off[w + 1]; k++)
			last[g->in_idx[k]] = -1;
	}
}

int remat_chain_measure(const struct remat_graph *g, const struct remat_chain *c,
			int32_t a, int32_t b, int32_t *scratch,
			struct remat_stage *st)
{
	measure_impl(g, c, a, b, NULL, NULL, 0, scratch, st);
	return REMAT_OK;
}

/* Is v, a forward node of stage s, resident after F_all with drop[]? */
static int resident_after(const struct remat_graph *g, const struct remat_chain *c,
			  int32_t v, int32_t s, const uint8_t *drop)
{
	return kept_after_forward(g, c, v, s, s) && !(drop && drop[v]);
}

int32_t remat_chain_option_seq(const struct remat_graph *g, const struct remat_chain *c,
			       int32_t s, const uint8_t *drop, uint8_t *mark, int32_t *stack,
			       int32_t *seq)
{
	const struct remat_stage *st = &c->stages[s];
	int32_t n = 0, i, k, j, t;

	for (i = 0; i < st->n_bwd; i++) {
		int32_t w = c->bwd[st->bwd_off + i], n0 = n, top = 0;

		/* Every forward node of s that w needs and that is not resident. */
		for (k = g->in_off[w]; k < g->in_off[w + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (c->stage_of[u] == s && !c->is_bwd[u] && !mark[u] &&
			    !resident_after(g, c, u, s, drop)) {
				mark[u] = 1;
				stack[top++] = u;
			}
		}
		while (top > 0) {
			int32_t u = stack[--top];

			seq[n++] = u;
			for (k = g->in_off[u]; k < g->in_off[u + 1]; k++) {
				int32_t x = g->in_idx[k];

				if (c->stage_of[x] == s && !c->is_bwd[x] && !mark[x] &&
				    !resident_after(g, c, x, s, drop)) {
					mark[x] = 1;
					stack[top++] = x;
				}
			}
		}
		/* Topological order among them (insertion sort: short runs). */
		for (j = n0 + 1; j < n; j++) {
			int32_t x = seq[j];

			for (t = j; t > n0 && g->topo_pos[seq[t - 1]] > g->topo_pos[x]; t--)
				seq[t] = seq[t - 1];
			seq[t] = x;
		}
		seq[n++] = w;
	}
	for (i = 0; i < n; i++)
		mark[seq[i]] = 0;
	return n;
}

int remat_chain_measure_option(const struct remat_graph *g, const struct remat_chain *c,
			       int32_t s, const uint8_t *drop, const int32_t *seq,
			       int32_t nseq, int32_t *scratch, struct remat_stage *st)
{
	measure_impl(g, c, s, s, drop, seq, nseq, scratch, st);
	return REMAT_OK;
}

/*
 * fwd_h of stage s: with its exit still resident, a forward that keeps
 * everything runs only the nodes read outside the stage's forward (its
 * backward, mostly) and their in-stage ancestors, the exit excepted.
 */
static void held_flags(const struct remat_graph *g, struct remat_chain *c, int32_t s,
		       int32_t *pos)
{
	const struct remat_stage *st = &c->stages[s];
	int32_t i, k;

	for (i = 0; i < st->n_fwd; i++)
		pos[c->fwd[st->fwd_off + i]] = i;
	for (i = st->n_fwd - 1; i >= 0; i--) {
		int32_t v = c->fwd[st->fwd_off + i];
		uint8_t need = 0;

		if (st->exit < 0) {
			need = 1;
		} else if (!remat_chain_in_exit(c, v, s)) {
			need = (uint8_t)kept_after_forward(g, c, v, s, s);
			for (k = g->use_off[v]; k < g->use_off[v + 1] && !need; k++) {
				int32_t w = g->use_idx[k];

				if (pos[w] >= 0 && c->fwd_h[st->fwd_off + pos[w]])
					need = 1;
			}
		}
		c->fwd_h[st->fwd_off + i] = need;
	}
	for (i = 0; i < st->n_fwd; i++)
		pos[c->fwd[st->fwd_off + i]] = -1;
}

/* Per-build working arrays. */
struct work {
	uint8_t *needed, *fwdpart, *relevant, *target, *reach_in;
	int32_t *rank, *seg, *seg_map, *cnt, *lastm;
	uint8_t *seg_has_bwd;
	int32_t *sep_nodes;
	uint8_t *wide;        /* cuts view: gathers (NULL in the other views) */
};

static void work_free(struct work *w)
{
	free(w->needed);
	free(w->fwdpart);
	free(w->relevant);
	free(w->target);
	free(w->reach_in);
	free(w->lastm);
	free(w->rank);
	free(w->seg);
	free(w->seg_map);
	free(w->cnt);
	free(w->seg_has_bwd);
	free(w->sep_nodes);
	free(w->wide);
}

/* Is forward node v a target of rule 2 (sinks excepted)? */
static int is_target(const struct remat_graph *g, int32_t v, int have_loss, int have_out)
{
	if (have_loss)
		return g->kind[v] == REMAT_KIND_LOSS;
	return have_out && g->is_output[v];
}

/*
 * Rule 1b: the owner of every node's memory object, in topological order
 * (an alias's input is resolved before it).
 */
static void find_aliases(const struct remat_graph *g, struct remat_chain *c)
{
	int32_t i, k, j, q, v;

	for (v = 0; v < g->n; v++)
		c->alias_of[v] = v;
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		if (g->mem[v] != 0 || g->kind[v] == REMAT_KIND_INPUT ||
		    g->use_off[v] == g->use_off[v + 1])
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t r = c->alias_of[g->in_idx[k]], ok = 1;

			for (j = g->use_off[v]; j < g->use_off[v + 1] && ok; j++) {
				int32_t w = g->use_idx[j];

				ok = 0;
				for (q = g->in_off[w]; q < g->in_off[w + 1] && !ok; q++)
					ok = g->in_idx[q] == r;
			}
			if (ok) {
				c->alias_of[v] = r;
				c->n_aliases++;
				break;
			}
		}
	}
}

/* Steps 1 and 2: needed nodes, backward part, forward part, targets. */
static void classify(const struct remat_graph *g, struct remat_chain *c, struct work *w,
		     int statics)
{
	int32_t n = g->n, i, k, v;
	int have_loss = 0, have_out = 0;

	remat_i_needed(g, w->needed);
	for (i = 0; i < n; i++) {
		v = g->topo[i];
		if (g->kind[v] == REMAT_KIND_INPUT || !w->needed[v])
			continue;
		if (g->kind[v] == REMAT_KIND_BACKWARD) {
			c->is_bwd[v] = 1;
			continue;
		}
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (c->is_bwd[g->in_idx[k]])
				c->is_bwd[v] = 1;
		if (c->is_bwd[v])
			continue;
		w->fwdpart[v] = 1;
		if (g->kind[v] == REMAT_KIND_LOSS)
			have_loss = 1;
		if (g->is_output[v])
			have_out = 1;
	}
	/* Rule 1's static values: forward nodes no input reaches. */
	for (i = 0; i < n; i++) {
		v = g->topo[i];
		w->reach_in[v] = g->kind[v] == REMAT_KIND_INPUT;
		for (k = g->in_off[v]; k < g->in_off[v + 1] && !w->reach_in[v]; k++)
			w->reach_in[v] = w->reach_in[g->in_idx[k]];
	}
	for (v = 0; v < n && !(w->fwdpart[v] && w->reach_in[v] && is_target(g, v, have_loss,
									    have_out)); v++)
		;
	if (v < n && statics) {
		for (v = 0; v < n; v++) {
			if (!w->fwdpart[v] || w->reach_in[v])
				continue;
			c->is_static[v] = 1;
			c->n_static++;
			c->input_mem += g->mem[v];
			w->fwdpart[v] = 0;
		}
	}
	for (v = 0; v < n; v++) {
		if (!w->fwdpart[v])
			continue;
		if (have_loss)
			w->target[v] = g->kind[v] == REMAT_KIND_LOSS;
		else if (have_out)
			w->target[v] = g->is_output[v];
		else {
			w->target[v] = 1;
			for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
				if (w->fwdpart[g->use_idx[k]])
					w->target[v] = 0;
		}
	}
}

/*
 * The two largest reaches of edges from distinct memory objects (the
 * virtual source and sink are objects -2 and -3), so that the largest
 * reach of edges leaving any object but one is read in O(1).
 */
struct top2 {
	int32_t v1, g1, v2, g2;
};

static void top2_add(struct top2 *t, int32_t val, int32_t grp)
{
	if (grp == t->g1) {
		if (val > t->v1)
			t->v1 = val;
	} else if (val > t->v1) {
		t->v2 = t->v1;
		t->g2 = t->g1;
		t->v1 = val;
		t->g1 = grp;
	} else if (val > t->v2) {
		t->v2 = val;
		t->g2 = grp;
	}
}

/* The largest reach of edges that leave objects other than grp. */
static int32_t top2_other(const struct top2 *t, int32_t grp)
{
	return t->g1 != grp ? t->v1 : t->v2;
}

/*
 * Step 3's start: the chain nodes (relevant), their ranks in topological
 * order, and the rank of each object's last chain member.  Returns the
 * number of chain nodes.
 */
static int32_t rank_chain(const struct remat_graph *g, const struct remat_chain *c,
			  struct work *w)
{
	int32_t n = g->n, i, k, v, r = 0;

	for (i = n - 1; i >= 0; i--) {
		v = g->topo[i];
		if (!w->fwdpart[v])
			continue;
		if (w->target[v]) {
			w->relevant[v] = 1;
			continue;
		}
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			if (w->relevant[g->use_idx[k]])
				w->relevant[v] = 1;
	}
	for (i = 0; i < n; i++) {
		v = g->topo[i];
		w->rank[v] = w->relevant[v] ? r++ : -1;
		if (w->relevant[v])
			w->lastm[c->alias_of[v]] = w->rank[v];
	}
	return r;
}

/*
 * Step 3: the separator sweep over the r chain nodes; sep_nodes[]
 * receives the separators in order.  A chain node is a separator when it
 * is the last chain node of its memory object and no edge from another
 * object jumps over it.
 */
static void find_separators(const struct remat_graph *g, const struct remat_chain *c,
			    struct work *w, int32_t r, int32_t *n_sep)
{
	int32_t n = g->n, i, k, v, inf = r;
	struct top2 t = { -1, -4, -1, -4 };

	*n_sep = 0;
	for (i = 0; i < n; i++) {
		int32_t grp;

		v = g->topo[i];
		if (!w->relevant[v])
			continue;
		grp = c->alias_of[v];
		/* No edge from an earlier chain node of another object lands beyond this one. */
		if (top2_other(&t, grp) <= w->rank[v] && w->lastm[grp] == w->rank[v])
			w->sep_nodes[(*n_sep)++] = v;
		if (w->target[v])
			top2_add(&t, inf, -3);    /* the virtual sink's edge */
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (w->relevant[u])
				top2_add(&t, w->rank[u], grp);
		}
	}
}

/* Is o (an owner) an input or a static value, resident the whole step? */
static int resident_obj(const struct remat_graph *g, const struct remat_chain *c, int32_t o)
{
	return g->kind[o] == REMAT_KIND_INPUT || c->is_static[o];
}

/*
 * Readers of this many chain values or more are gathers (REMAT_CHAIN_CUTS),
 * unless they make up more than a quarter of the chain nodes.
 */
#define REMAT_CHAIN_WIDE 8

/*
 * Step 3 with cuts of several values (REMAT_CHAIN_CUTS, see remat/chain.h):
 * a boundary after rank p keeps every memory object whole, and the next
 * one lies at or after R(p), the latest rank read from ranks <= p.
 * Arrays over ranks: the node, the prefix maximum of reaches, the bytes
 * crossing each boundary and how many objects it would split (difference
 * arrays).  -1: out of memory.
 */
static int find_cuts(const struct remat_graph *g, const struct remat_chain *c,
		     struct work *w, int32_t r, int32_t *n_sep)
{
	int32_t n = g->n, i, k, v, b, inf = r, n_wide;
	int32_t *at = malloc(sizeof(int32_t) * ((size_t)r + 1));
	int32_t *reach = malloc(sizeof(int32_t) * ((size_t)r + 1));
	int32_t *split = calloc((size_t)r + 2, sizeof(int32_t));
	int32_t *first = malloc(sizeof(int32_t) * ((size_t)n + 1));
	int32_t *oreach = malloc(sizeof(int32_t) * ((size_t)n + 1));
	int64_t *cross = calloc((size_t)r + 2, sizeof(int64_t));
	uint8_t *wide = w->wide = calloc((size_t)n + 1, 1);
	int rc = -1;

	*n_sep = 0;
	if (!at || !reach || !split || !first || !oreach || !cross || !wide)
		goto out;
	for (v = 0, n_wide = 0; v < n; v++) {
		int32_t cnt = 0;

		first[v] = oreach[v] = -1;
		for (k = g->in_off[v]; k < g->in_off[v + 1] && w->relevant[v]; k++)
			cnt += w->relevant[g->in_idx[k]];
		wide[v] = cnt >= REMAT_CHAIN_WIDE;
		n_wide += wide[v];
	}
	/* Where most nodes read that many (a dense random DAG), none is a gather. */
	if (n_wide > r / 4)
		memset(wide, 0, (size_t)n + 1);
	for (i = 0; i < n; i++) {
		int32_t grp, far = -1;

		v = g->topo[i];
		if (!w->relevant[v])
			continue;
		grp = c->alias_of[v];
		at[w->rank[v]] = v;
		if (first[grp] < 0)
			first[grp] = w->rank[v];
		if (w->target[v])
			far = inf;    /* the virtual sink's edge */
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			if (w->relevant[g->use_idx[k]] && !wide[g->use_idx[k]] &&
			    w->rank[g->use_idx[k]] > far)
				far = w->rank[g->use_idx[k]];
		reach[w->rank[v]] = far;
		if (far > oreach[grp])
			oreach[grp] = far;
	}
	for (i = 0; i < r; i++) {
		int32_t grp = c->alias_of[at[i]], end;

		/* An input's or static value's views are resident the whole step. */
		if (w->lastm[grp] != i || resident_obj(g, c, grp))
			continue;
		split[first[grp]]++;
		split[i]--;
		end = oreach[grp] < r ? oreach[grp] : r;
		if (end > i) {
			cross[i] += g->mem[grp];
			cross[end] -= g->mem[grp];
		}
	}
	for (i = 1; i <= r; i++) {
		split[i] += split[i - 1];
		cross[i] += cross[i - 1];
		if (i < r && reach[i - 1] > reach[i])
			reach[i] = reach[i - 1];
	}
	for (b = -1;;) {
		int32_t lo = b < 0 ? 0 : (reach[b] > b + 1 ? reach[b] : b + 1), hi, best = -1;

		if (lo >= r)
			break;
		hi = lo + (lo - b > 1 ? lo - b : 1);
		if (hi > r)
			hi = r;
		for (i = lo; i < hi; i++)
			if (!split[i] && (best < 0 || cross[i] < cross[best]))
				best = i;
		for (i = hi; i < r && best < 0; i++)
			if (!split[i])
				best = i;
		if (best < 0)
			break;
		w->sep_nodes[(*n_sep)++] = at[best];
		b = best;
	}
	rc = 0;
out:
	free(at);
	free(reach);
	free(split);
	free(first);
	free(oreach);
	free(cross);
	return rc;
}

/* The forward node v reads that is latest in topological order, or -1. */
static int32_t nearest_forward_input(const struct remat_graph *g, const struct work *w,
				     int32_t v)
{
	int32_t k, best = -1;

	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
		int32_t u = g->in_idx[k];

		if (w->fwdpart[u] && (best < 0 || g->topo_pos[u] > g->topo_pos[best]))
			best = u;
	}
	return best;
}

/*
 * Cuts view: a chain node read only by gathers, and larger than what it
 * reads (an LSTM step's output projection, read by the final stack), is
 * computed in the segment of its first gather instead of its own: its
 * inputs pass through the stages in between rather than it.
 */
static void defer_to_gathers(const struct remat_graph *g, const struct remat_chain *c,
			     struct work *w)
{
	int32_t i, k, v;

	for (i = g->n - 1; i >= 0; i--) {
		int32_t to = -1;
		int64_t in = 0;

		v = g->topo[i];
		if (!w->relevant[v] || w->target[v] || c->alias_of[v] != v)
			continue;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (!w->relevant[u])
				continue;
			if (!w->wide[u]) {
				to = -2;
				break;
			}
			if (to == -1 || w->seg[u] < to)
				to = w->seg[u];
		}
		for (k = g->in_off[v]; k < g->in_off[v + 1] && to >= 0; k++)
			if (g->kind[g->in_idx[k]] != REMAT_KIND_INPUT)
				in += g->mem[c->alias_of[g->in_idx[k]]];
		if (to > w->seg[v] && g->mem[v] > in)
			w->seg[v] = to;
	}
}

/* Steps 3-5: the segment of every needed non-input node. */
static int32_t assign_segments(const struct remat_graph *g, struct remat_chain *c,
			       struct work *w, int32_t n_sep)
{
	int32_t n = g->n, i, k, v, s, n_seg, next_sep = 0, cur = 0, any_after = 0;

	/* Chain nodes: segment = number of separators strictly before them. */
	for (i = 0; i < n; i++) {
		v = g->topo[i];
		w->seg[v] = -1;
		if (!w->relevant[v])
			continue;
		w->seg[v] = cur;
		if (next_sep < n_sep && w->sep_nodes[next_sep] == v) {
			next_sep++;
			cur++;
		} else if (next_sep == n_sep) {
			any_after = 1;
		}
	}
	n_seg = n_sep + any_after;
	if (n_seg == 0)
		n_seg = 1;    /* no chain node: one (possibly empty) segment */
	if (w->wide)
		defer_to_gathers(g, c, w);
	/* Forward nodes off the chain: no earlier than their inputs. */
	for (i = 0; i < n; i++) {
		v = g->topo[i];
		if (!w->fwdpart[v] || w->relevant[v])
			continue;
		s = 0;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (w->fwdpart[g->in_idx[k]] && w->seg[g->in_idx[k]] > s)
				s = w->seg[g->in_idx[k]];
		w->seg[v] = s;
	}
	/* Backward part: grad_of, else nearest forward input, else backward inputs. */
	for (i = 0; i < n; i++) {
		int32_t u;

		v = g->topo[i];
		if (!c->is_bwd[v])
			continue;
		u = g->grad_of[v];
		if (u >= 0 && w->fwdpart[u]) {
			w->seg[v] = w->seg[u];
			continue;
		}
		u = nearest_forward_input(g, w, v);
		if (u >= 0) {
			w->seg[v] = w->seg[u];
			continue;
		}
		s = -1;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			u = g->in_idx[k];
			if (c->is_bwd[u] && (s < 0 || w->seg[u] < s))
				s = w->seg[u];
		}
		w->seg[v] = s >= 0 ? s : n_seg - 1;
	}
	/*
	 * Forward nodes off the chain must be computed before the backward
	 * nodes that read them: no earlier than those nodes' segments (a
	 * segment's full forward runs before its own and every earlier
	 * segment's backward).  Then again no earlier than their inputs.
	 */
	for (i = n - 1; i >= 0; i--) {
		v = g->topo[i];
		if (!w->fwdpart[v] || w->relevant[v])
			continue;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if ((c->is_bwd[u] || (w->fwdpart[u] && !w->relevant[u])) &&
			    w->seg[u] > w->seg[v])
				w->seg[v] = w->seg[u];
		}
	}
	for (i = 0; i < n; i++) {
		v = g->topo[i];
		if (!w->fwdpart[v] || w->relevant[v])
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (w->fwdpart[g->in_idx[k]] && w->seg[g->in_idx[k]] > w->seg[v])
				w->seg[v] = w->seg[g->in_idx[k]];
	}
	return n_seg;
}

/* Step 6: segment -> stage, merging segments without backward nodes. */
static int32_t merge_segments(const struct remat_graph *g, struct remat_chain *c,
			      struct work *w, int32_t n_seg)
{
	int32_t v, s, stage = 0, last_with = -1;

	for (v = 0; v < g->n; v++)
		if (c->is_bwd[v])
			w->seg_has_bwd[w->seg[v]] = 1;
	for (s = 0; s < n_seg; s++)
		if (w->seg_has_bwd[s])
			last_with = s;
	if (last_with < 0) {
		/* Inference graph: every segment is a stage. */
		for (s = 0; s < n_seg; s++)
			w->seg_map[s] = s;
		return n_seg;
	}
	for (s = 0; s < n_seg; s++) {
		w->seg_map[s] = stage;
		if (w->seg_has_bwd[s] && s < last_with)
			stage++;
	}
	return stage + 1;
}

/* The chain's per-node arrays and the work arrays.  -1: out of memory. */
static int work_alloc(int32_t n, struct remat_chain *c, struct work *w)
{
	w->needed = calloc((size_t)n + 1, 1);
	w->fwdpart = calloc((size_t)n + 1, 1);
	w->relevant = calloc((size_t)n + 1, 1);
	w->target = calloc((size_t)n + 1, 1);
	w->reach_in = calloc((size_t)n + 1, 1);
	w->lastm = malloc(sizeof(int32_t) * ((size_t)n + 1));
	c->alias_of = malloc(sizeof(int32_t) * ((size_t)n + 1));
	c->exit_stage = malloc(sizeof(int32_t) * ((size_t)n + 1));
	c->is_static = calloc((size_t)n + 1, 1);
	w->rank = malloc(sizeof(int32_t) * ((size_t)n + 1));
	w->seg = malloc(sizeof(int32_t) * ((size_t)n + 1));
	w->seg_map = malloc(sizeof(int32_t) * ((size_t)n + 2));
	w->seg_has_bwd = calloc((size_t)n + 2, 1);
	w->sep_nodes = malloc(sizeof(int32_t) * ((size_t)n + 1));
	c->is_bwd = calloc((size_t)n + 1, 1);
	c->stage_of = malloc(sizeof(int32_t) * ((size_t)n + 1));
	c->bwd_reader_min = malloc(sizeof(int32_t) * ((size_t)n + 1));
	if (!w->needed || !w->fwdpart || !w->relevant || !w->target || !w->rank ||
	    !w->reach_in || !w->lastm || !c->alias_of || !c->exit_stage || !c->is_static ||
	    !w->seg || !w->seg_map || !w->seg_has_bwd || !w->sep_nodes || !c->is_bwd ||
	    !c->stage_of || !c->bwd_reader_min)
		return -1;
	return 0;
}

/*
 * Step 6's end: the stage of every node of either part (-1 for the
 * others).  Returns the number of stages: n_stages, or 0 when no node has
 * one (nothing to plan).
 */
static int32_t assign_stages(const struct remat_graph *g, struct remat_chain *c,
			     const struct work *w, int32_t n_stages)
{
	int32_t v;

	for (v = 0; v < g->n; v++)
		c->stage_of[v] = (w->fwdpart[v] || c->is_bwd[v]) ? w->seg_map[w->seg[v]] : -1;
	for (v = 0; v < g->n && c->stage_of[v] < 0; v++)
		;
	return v == g->n ? 0 : n_stages;
}

/*
 * Each stage's forward and backward lists: a counting sort by stage,
 * stable in topological order.  -1: out of memory.
 */
static int stage_lists(const struct remat_graph *g, struct remat_chain *c,
		       struct work *w)
{
	int32_t n = g->n, L = c->n_stages, i, v, s, fo = 0, bo = 0;

	w->cnt = calloc(2 * ((size_t)L + 1), sizeof(int32_t));
	if (!w->cnt)
		return -1;
	for (v = 0; v < n; v++) {
		if (c->stage_of[v] < 0)
			continue;
		if (c->is_bwd[v]) {
			c->n_bwd++;
			w->cnt[2 * c->stage_of[v] + 1]++;
		} else {
			c->n_fwd++;
			w->cnt[2 * c->stage_of[v]]++;
		}
	}
	c->fwd = malloc(sizeof(int32_t) * ((size_t)c->n_fwd + 1));
	c->fwd_ng = calloc((size_t)c->n_fwd + 1, 1);
	c->fwd_h = calloc((size_t)c->n_fwd + 1, 1);
	c->bwd = malloc(sizeof(int32_t) * ((size_t)c->n_bwd + 1));
	if (!c->fwd || !c->fwd_ng || !c->fwd_h || !c->bwd)
		return -1;
	for (s = 0; s < L; s++) {
		c->stages[s].fwd_off = fo;
		c->stages[s].bwd_off = bo;
		fo += w->cnt[2 * s];
		bo += w->cnt[2 * s + 1];
		c->stages[s].entry = -1;
		c->stages[s].exit = -1;
	}
	for (i = 0; i < n; i++) {
		struct remat_stage *st;

		v = g->topo[i];
		if (c->stage_of[v] < 0)
			continue;
		st = &c->stages[c->stage_of[v]];
		if (c->is_bwd[v]) {
			c->bwd[st->bwd_off + st->n_bwd++] = v;
		} else {
			c->fwd_ng[st->fwd_off + st->n_fwd] = w->relevant[v];
			c->fwd[st->fwd_off + st->n_fwd++] = v;
		}
	}
	return 0;
}

/*
 * Entry and exit: the separator closing the last segment of a stage is
 * its exit and the next stage's entry.
 */
static void entries_and_exits(const struct remat_graph *g, struct remat_chain *c,
			      const struct work *w, int32_t n_sep, int32_t n_seg)
{
	int32_t i, v, s;

	for (i = 0; i < n_sep; i++) {
		v = w->sep_nodes[i];
		s = c->stage_of[v];
		if (i + 1 < n_sep && c->stage_of[w->sep_nodes[i + 1]] == s)
			continue;     /* merged: not the stage's last separator */
		c->stages[s].exit = v;
		if (s + 1 < c->n_stages)
			c->stages[s + 1].entry = v;
	}
	/* Chain nodes after the last separator: the stage holding them has no exit. */
	if (n_seg > n_sep && n_sep > 0)
		c->stages[w->seg_map[n_sep]].exit = -1;
	for (s = 0; s < c->n_stages; s++) {
		v = c->stages[s].exit;
		if (v < 0)
			continue;
		c->exit_stage[c->alias_of[v]] = s;
		c->exit_mem[s] = g->mem[c->alias_of[v]];
		c->widest_cut = 1;
	}
}

/*
 * Exits with cuts of several values.  Passing objects first: those a
 * chain node more than one stage later reads (a gather's inputs); they
 * are counted as resident the whole step (input_mem) and in no exit.
 * Then a stage's exit: the other objects of its chain nodes that the next
 * stage's chain nodes read.  The latest such node stands for the exit
 * (and the next stage's entry).  -1: out of memory.
 */
static int cut_exits(const struct remat_graph *g, struct remat_chain *c, const struct work *w)
{
	int32_t i, k, v, s, *count = calloc((size_t)c->n_stages + 1, sizeof(int32_t));

	c->passing = calloc((size_t)g->n + 1, 1);
	if (!count || !c->passing) {
		free(count);
		return -1;
	}
	for (v = 0; v < g->n; v++) {
		int32_t o = c->alias_of[v];

		if (!w->relevant[v] || c->passing[o] || resident_obj(g, c, o))
			continue;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (w->relevant[u] && c->stage_of[u] > c->stage_of[v] + 1) {
				c->passing[o] = 1;
				c->n_passing++;
				c->passing_mem += g->mem[o];
				c->input_mem += g->mem[o];
				break;
			}
		}
	}
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		s = c->stage_of[v];
		if (!w->relevant[v] || c->passing[c->alias_of[v]] ||
		    resident_obj(g, c, c->alias_of[v]))
			continue;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (w->relevant[u] && c->stage_of[u] > s)
				break;
		}
		if (k == g->use_off[v + 1])
			continue;
		if (c->exit_stage[c->alias_of[v]] < 0) {
			c->exit_stage[c->alias_of[v]] = s;
			c->exit_mem[s] += g->mem[c->alias_of[v]];
			if (++count[s] > c->widest_cut)
				c->widest_cut = count[s];
		}
		c->stages[s].exit = v;
		if (s + 1 < c->n_stages)
			c->stages[s + 1].entry = v;
	}
	free(count);
	return 0;
}

/*
 * Earliest backward reader of each node, and the gradients (values read
 * by an earlier stage's backward) crossing each boundary.  -1: out of
 * memory.
 */
static int backward_readers(const struct remat_graph *g, struct remat_chain *c)
{
	int32_t L = c->n_stages, v, s;
	int64_t *diff = calloc((size_t)L + 2, sizeof(int64_t)), run = 0;

	if (!diff)
		return -1;
	for (v = 0; v < g->n; v++) {
		int32_t k, m = L;

		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (c->is_bwd[u] && c->stage_of[u] >= 0 && c->stage_of[u] < m)
				m = c->stage_of[u];
		}
		c->bwd_reader_min[v] = m;
		s = c->stage_of[v];
		if (s >= 0 && m < s && !g->is_output[v]) {
			diff[m + 1] += g->mem[v];
			diff[s + 1] -= g->mem[v];
		}
	}
	for (s = 0; s <= L; s++) {
		run += diff[s];
		c->grad_at[s] = run;
	}
	free(diff);
	return 0;
}

/* The per-stage figures, each stage replayed alone.  -1: out of memory. */
static int measure_stages(const struct remat_graph *g, struct remat_chain *c)
{
	int32_t n = g->n, i, s, *scratch;

	scratch = malloc(sizeof(int32_t) * (2 * (size_t)n + 1));
	if (!scratch)
		return -1;
	for (i = 0; i < 2 * n; i++)
		scratch[i] = -1;
	for (s = 0; s < c->n_stages; s++)
		held_flags(g, c, s, scratch);
	for (s = 0; s < c->n_stages; s++) {
		struct remat_stage *st = &c->stages[s], m;
		int32_t nodes = st->n_fwd + st->n_bwd;

		remat_chain_measure(g, c, s, s, scratch, &m);
		m.fwd_off = st->fwd_off;
		m.n_fwd = st->n_fwd;
		m.bwd_off = st->bwd_off;
		m.n_bwd = st->n_bwd;
		*st = m;
		if (nodes > c->largest_nodes) {
			c->largest_nodes = nodes;
			c->largest = s;
		}
	}
	free(scratch);
	return 0;
}

int remat_chain_build(const struct remat_graph *g, struct remat_chain **out,
		      struct remat_error *err)
{
	return remat_chain_build_ex(g, REMAT_CHAIN_OBJECTS, out, err);
}

int remat_chain_build_ex(const struct remat_graph *g, enum remat_chain_view view,
			 struct remat_chain **out, struct remat_error *err)
{
	struct remat_chain *c = calloc(1, sizeof(*c));
	struct work w;
	int32_t v, n_sep = 0, n_seg, L, r;
	int rc = REMAT_ENOMEM;

	memset(&w, 0, sizeof(w));
	*out = NULL;
	if (!c || work_alloc(g->n, c, &w))
		goto done;
	c->training = g->n_backward > 0;
	for (v = 0; v < g->n; v++)
		if (g->kind[v] == REMAT_KIND_INPUT)
			c->input_mem += g->mem[v];
	/* Steps 1 to 6. */
	if (view == REMAT_CHAIN_PLAIN) {
		for (v = 0; v < g->n; v++)
			c->alias_of[v] = v;
	} else {
		find_aliases(g, c);
	}
	classify(g, c, &w, view != REMAT_CHAIN_PLAIN);
	for (v = 0; v < g->n; v++)
		c->exit_stage[v] = -1;
	r = rank_chain(g, c, &w);
	if (view == REMAT_CHAIN_CUTS) {
		if (find_cuts(g, c, &w, r, &n_sep))
			goto done;
	} else {
		find_separators(g, c, &w, r, &n_sep);
	}
	c->n_separators = n_sep;
	n_seg = assign_segments(g, c, &w, n_sep);
	c->n_segments = n_seg;
	L = merge_segments(g, c, &w, n_seg);
	L = assign_stages(g, c, &w, L);
	/* The stages, their lists and their figures. */
	c->n_stages = L;
	c->stages = calloc((size_t)L + 1, sizeof(*c->stages));
	c->grad_at = calloc((size_t)L + 2, sizeof(int64_t));
	c->exit_mem = calloc((size_t)L + 1, sizeof(int64_t));
	if (!c->stages || !c->grad_at || !c->exit_mem)
		goto done;
	c->largest = -1;
	if (L > 0) {
		if (stage_lists(g, c, &w))
			goto done;
		if (view == REMAT_CHAIN_CUTS) {
			if (cut_exits(g, c, &w))
				goto done;
		} else {
			entries_and_exits(g, c, &w, n_sep, n_seg);
		}
		if (backward_readers(g, c) || measure_stages(g, c))
			goto done;
	}
	rc = REMAT_OK;
done:
	work_free(&w);
	if (rc) {
		remat_chain_free(c);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory building the chain view");
	}
	*out = c;
	return REMAT_OK;
}
