/*
 * bench_rotor.c - time Rotor's dynamic program (src/planners/rotor.c) on
 * random heterogeneous chains, as Rotor's own benchmark does: L stages
 * with random forward/backward costs, activation sizes and overheads, and
 * a budget cut into M slots.
 *
 *   bench_rotor [--plain] L M [REPEATS] [SEED]
 *
 * Prints one line of KEY=VALUE: L, M, the best and median wall seconds
 * and the best CPU seconds over REPEATS runs of the table fill, the
 * tables' MiB, the peak RSS, and the optimum at M slots.  By
 * default both tables are filled, as the planner does (Rotor's recurrence
 * and the held-checkpoint variant, see rotor.c); --plain fills Rotor's
 * recurrence alone, the same work as Rotor's own implementation.
 */
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "planners/rotor.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Uniform integer in [lo, hi]. */
static int32_t uni(int32_t lo, int32_t hi)
{
	return lo + (int32_t)(next() % (uint64_t)(hi - lo + 1));
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct remat_i_rotor_chain ch;
	struct remat_i_rotor_table tab;
	struct remat_error err;
	int32_t L, M, i;
	int reps = 3, r, plain = 0;
	double *times, best_cpu = 1e30;
	struct rusage ru;

	if (argc > 1 && strcmp(argv[1], "--plain") == 0) {
		plain = 1;
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: bench_rotor [--plain] L M [REPEATS] [SEED]\n");
		return 2;
	}
	L = atoi(argv[1]);
	M = atoi(argv[2]);
	if (argc > 3)
		reps = atoi(argv[3]);
	if (argc > 4)
		rng_state = strtoull(argv[4], NULL, 10) * 2654435761u + 1;
	if (L < 1 || M < 1 || reps < 1) {
		fprintf(stderr, "bench_rotor: L, M and REPEATS must be positive\n");
		return 2;
	}
	remat_error_clear(&err);
	if (remat_i_rotor_chain_alloc(&ch, L, &err)) {
		fprintf(stderr, "bench_rotor: %s\n", err.msg);
		return 1;
	}
	/*
	 * Sizes are drawn so that the whole chain kept at once needs about
	 * twice the budget: activations of M/(L) slots on average.
	 */
	for (i = 0; i < L; i++) {
		int32_t act = uni(1, 2 * M / L + 1);

		ch.x[i] = i == 0 ? 0 : ch.y[i - 1];
		ch.y[i] = act;
		ch.xb[i] = act + uni(0, act);
		ch.fa[i] = ch.xb[i] + uni(0, act / 2 + 1);
		ch.fah[i] = ch.fa[i];
		ch.fo[i] = act + uni(0, act / 2 + 1);
		ch.fi[i] = ch.x[i] + ch.fo[i];
		ch.fw[i] = 1 + (double)uni(0, 999) / 100;
		ch.fwh[i] = ch.fw[i] * 0.9;
		ch.fwng[i] = ch.fw[i];
		ch.bw[i] = 2 * ch.fw[i];
		ch.xl[i] = 1;   /* Rotor's model: a backward reads its stage input */
	}
	for (i = 0; i < L; i++) {
		ch.d[i] = ch.x[i];
		ch.bp[i] = ch.xb[i] + ch.d[i + 1 < L ? i + 1 : i] + ch.x[i] + uni(0, 2);
	}
	ch.d[L] = 0;
	ch.plain = plain;
	times = malloc(sizeof(double) * (size_t)reps);
	if (!times)
		return 1;
	for (r = 0; r < reps; r++) {
		double t0 = remat_now(), c0 = cpu_now();

		if (remat_i_rotor_solve(&ch, M, &tab, NULL, &err)) {
			fprintf(stderr, "bench_rotor: %s\n", err.msg);
			return 1;
		}
		times[r] = remat_now() - t0;
		if (cpu_now() - c0 < best_cpu)
			best_cpu = cpu_now() - c0;
		if (r + 1 < reps)
			remat_i_rotor_table_release(&tab);
	}
	qsort(times, (size_t)reps, sizeof(double), cmp_double);
	getrusage(RUSAGE_SELF, &ru);
	printf("table=%s L=%d M=%d wall_best=%.4f wall_median=%.4f cpu_best=%.4f "
	       "tables_mib=%.1f maxrss_mib=%.1f opt=%g\n", plain ? "plain" : "full",
	       (int)L, (int)M, times[0], times[reps / 2], best_cpu,
	       remat_i_rotor_table_bytes(L, M) / 1048576.0, (double)ru.ru_maxrss / 1024,
	       remat_i_rotor_cost(&tab, M));
	remat_i_rotor_table_release(&tab);
	remat_i_rotor_chain_release(&ch);
	free(times);
	return 0;
}
