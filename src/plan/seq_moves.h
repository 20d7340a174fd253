/*
 * seq_moves.h - a topological sequence of nodes and the moves the order
 * search by replay makes on it (internal; see replay_search.c).
 */
#ifndef REMAT_PLAN_SEQ_MOVES_H
#define REMAT_PLAN_SEQ_MOVES_H

#include "remat/graph.h"

struct remat_i_seq {
	const struct remat_graph *g;
	int32_t *seq, m;        /* the nodes in order */
	int32_t *pos;           /* [n] place of each node in seq, -1 when absent */
	int32_t *save;          /* [n] the stretch the last move rewrote */
	int32_t *blk, *mark, stamp; /* a block move's scratch */
};

/* 0, or -1 when out of memory (s is then released). */
int remat_i_seq_init(struct remat_i_seq *s, const struct remat_graph *g);
void remat_i_seq_release(struct remat_i_seq *s);
/* s holds the nodes of order (g->n entries) with keep[v] set, in that order. */
void remat_i_seq_load(struct remat_i_seq *s, const uint8_t *keep, const int32_t *order);
/* A copy of from's sequence in s (initialised for the same graph). */
void remat_i_seq_copy(struct remat_i_seq *s, const struct remat_i_seq *from);

/*
 * Place seq[i] at j (0 <= i, j < m), shifting what lies between.  Only
 * seq[i] moves: the caller picks j so that the order stays topological.
 * The stretch is saved for remat_i_seq_undo(s, min(i, j), max(i, j)).
 */
void remat_i_seq_move(struct remat_i_seq *s, int32_t i, int32_t j);

/*
 * Block move: seq[i] to place j with what must go with it so that a
 * topological sequence stays one.  When j < i, the ancestors of seq[i]
 * placed in j..i-1 come along: they and seq[i] (in their order) go to
 * j, the rest of the stretch after them.  When j > i, the descendants
 * placed in i+1..j come along and go last.  Saved like
 * remat_i_seq_move.  O((|i - j| + 1) * degree).
 */
void remat_i_seq_block_move(struct remat_i_seq *s, int32_t i, int32_t j);

/* Undo the last move, which rewrote seq[a..b]. */
void remat_i_seq_undo(struct remat_i_seq *s, int32_t a, int32_t b);

#endif
