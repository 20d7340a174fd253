/*
 * test_heap.c - the binary heap of src/core/heap.h.
 *
 * Random sequences of push, pop and (on a position-tracking heap) key
 * changes are run against a plain array kept as the reference multiset:
 * every pop must return an element the reference holds with the least
 * key, positions must name each element's slot, and the heap property
 * must hold after every operation.  Keys are drawn from a small range so
 * that ties are common.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/heap.h"

/* ---- a plain heap of ints, no context ---- */

static int int_less(const void *ctx, int a, int b)
{
	(void)ctx;
	return a < b;
}

REMAT_HEAP_DEFINE(iheap, int, const void, int_less, REMAT_HEAP_UNTRACKED)

/* ---- a heap of structs compared by a macro ---- */

struct ent {
	int key;
	int id;
};

#define ENT_LESS(ctx, a, b) ((a).key < (b).key)

REMAT_HEAP_DEFINE(eheap, struct ent, void, ENT_LESS, REMAT_HEAP_UNTRACKED)

/* ---- an indexed heap of ids keyed by key[id], tracking positions ---- */

struct keyed {
	int64_t *key;
	int32_t *pos;
	int64_t moves;
};

static int keyed_less(const struct keyed *k, int32_t a, int32_t b)
{
	if (k->key[a] != k->key[b])
		return k->key[a] < k->key[b];
	return a < b;
}

static void keyed_moved(struct keyed *k, int32_t v, int64_t i)
{
	k->pos[v] = (int32_t)i;
	k->moves++;
}

REMAT_HEAP_DEFINE(kheap, int32_t, struct keyed, keyed_less, keyed_moved)

static void test_ints_against_reference(void **state)
{
	uint64_t rng = 12345;
	int round;

	(void)state;
	for (round = 0; round < 200; round++) {
		int cap = 1 + (int)(tu_rand(&rng) % 300), nref = 0, op;
		int *h = malloc(sizeof(int) * (size_t)cap), *ref = malloc(sizeof(int) * (size_t)cap);
		int64_t n = 0;

		for (op = 0; op < 2000; op++) {
			int push = n < cap && (n == 0 || tu_rand(&rng) % 3 != 0);

			if (push) {
				int v = (int)(tu_rand(&rng) % 50);

				iheap_push(h, &n, v, NULL);
				ref[nref++] = v;
			} else {
				int got = iheap_pop(h, &n, NULL), best = 0, i;

				for (i = 1; i < nref; i++)
					if (ref[i] < ref[best])
						best = i;
				assert_int_equal(got, ref[best]);
				ref[best] = ref[--nref];
			}
			assert_int_equal(n, nref);
			{
				int64_t i;

				for (i = 1; i < n; i++)
					assert_false(h[i] < h[(i - 1) / 2]);
			}
		}
		free(h);
		free(ref);
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void test_heapify_sorts(void **state)
{
	uint64_t rng = 99;
	int round;

	(void)state;
	for (round = 0; round < 100; round++) {
		int n0 = (int)(tu_rand(&rng) % 500), i;
		int *h = malloc(sizeof(int) * ((size_t)n0 + 1));
		int *ref = malloc(sizeof(int) * ((size_t)n0 + 1));
		int64_t n = n0;

		for (i = 0; i < n0; i++)
			h[i] = ref[i] = (int)(tu_rand(&rng) % 100) - 50;
		qsort(ref, (size_t)n0, sizeof(int), cmp_int);
		iheap_heapify(h, n, NULL);
		for (i = 0; i < n0; i++)
			assert_int_equal(iheap_pop(h, &n, NULL), ref[i]);
		assert_int_equal(n, 0);
		free(h);
		free(ref);
	}
}

/* Struct elements through a macro comparator; ties by key are common. */
static void test_structs_against_reference(void **state)
{
	struct ent h[256], ref[256];
	uint64_t rng = 7;
	int64_t n = 0;
	int nref = 0, op, next_id = 0;

	(void)state;
	for (op = 0; op < 20000; op++) {
		if (n < 256 && (n == 0 || tu_rand(&rng) % 2)) {
			struct ent e = { (int)(tu_rand(&rng) % 4), next_id++ };

			eheap_push(h, &n, e, NULL);
			ref[nref++] = e;
		} else {
			struct ent got = eheap_pop(h, &n, NULL);
			int i, at = -1, least = 1 << 30;

			for (i = 0; i < nref; i++)
				if (ref[i].key < least)
					least = ref[i].key;
			for (i = 0; i < nref; i++)
				if (ref[i].id == got.id)
					at = i;
			assert_true(at >= 0);
			assert_int_equal(got.key, least);
			ref[at] = ref[--nref];
		}
		assert_int_equal(n, nref);
	}
}

static void check_keyed(const struct keyed *k, const int32_t *h, int64_t n,
			const uint8_t *in, int32_t ids)
{
	int64_t i;
	int32_t v, count = 0;

	for (i = 0; i < n; i++) {
		assert_int_equal(k->pos[h[i]], i);
		if (i > 0)
			assert_false(keyed_less(k, h[i], h[(i - 1) / 2]));
	}
	for (v = 0; v < ids; v++)
		if (in[v]) {
			count++;
			assert_true(k->pos[v] >= 0 && k->pos[v] < n);
		}
	assert_int_equal(count, n);
}

static void test_indexed_update_against_reference(void **state)
{
	enum { IDS = 200 };
	uint64_t rng = 4242;
	int round;

	(void)state;
	for (round = 0; round < 100; round++) {
		int64_t key[IDS];
		int32_t pos[IDS], h[IDS];
		uint8_t in[IDS];
		struct keyed k = { key, pos, 0 };
		int64_t n = 0;
		int32_t v;
		int op;

		memset(in, 0, sizeof(in));
		for (v = 0; v < IDS; v++) {
			pos[v] = -1;
			key[v] = (int64_t)(tu_rand(&rng) % 30);
		}
		/* Start from a heapified half, as the min-fill loop does. */
		for (v = 0; v < IDS / 2; v++) {
			h[v] = v;
			pos[v] = v;
			in[v] = 1;
		}
		n = IDS / 2;
		kheap_heapify(h, n, &k);
		check_keyed(&k, h, n, in, IDS);
		for (op = 0; op < 3000; op++) {
			uint64_t what = tu_rand(&rng) % 4;

			v = (int32_t)(tu_rand(&rng) % IDS);
			if (what == 0 && !in[v]) {
				kheap_push(h, &n, v, &k);
				in[v] = 1;
			} else if (what == 1 && n > 0) {
				int32_t got = kheap_pop(h, &n, &k), best = -1, u;

				for (u = 0; u < IDS; u++)
					if (in[u] && (best < 0 || keyed_less(&k, u, best)))
						best = u;
				assert_int_equal(got, best);
				in[got] = 0;
				pos[got] = -1;
			} else if (in[v]) {
				/* Raise or lower the key, then restore the order. */
				int64_t delta = (int64_t)(tu_rand(&rng) % 21) - 10;

				key[v] += delta;
				kheap_update(h, n, pos[v], &k);
			}
			check_keyed(&k, h, n, in, IDS);
		}
		assert_true(k.moves > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ints_against_reference),
		cmocka_unit_test(test_heapify_sorts),
		cmocka_unit_test(test_structs_against_reference),
		cmocka_unit_test(test_indexed_update_against_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
