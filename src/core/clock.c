/* clock.c - the one clock every deadline is measured on. */
#include <time.h>

#include "remat/planner.h"

double remat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
