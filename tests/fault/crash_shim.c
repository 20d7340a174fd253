/*
 * crash_shim.c - an LD_PRELOAD library for tests/cli/test_solver_crash.py
 * (issue 36): CBC's Cbc_solve dies by SIGSEGV, as CBC 2.10.8 does in
 * CglPreProcess::postProcess, so that the tests can check what remat
 * makes of a solver child that crashes.
 *
 * REMAT_SHIM_CRASH=all   every Cbc_solve on a model with integer columns
 *                        crashes (LP relaxations solve as before)
 *
 * MILP solves run in a child process (src/solver/isolate.c): the crash
 * kills the child, never remat.  The default SIGSEGV action is restored
 * first, so that a sanitizer's handler does not report the planted crash.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

typedef int (*solve_fn)(void *);
typedef int (*nint_fn)(void *);

int Cbc_solve(void *model)
{
	static solve_fn real;
	nint_fn nint = (nint_fn)dlsym(RTLD_DEFAULT, "Cbc_getNumIntegers");
	const char *mode = getenv("REMAT_SHIM_CRASH");

	if (mode && strcmp(mode, "all") == 0 && nint && nint(model) > 0) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (!real)
		real = (solve_fn)dlsym(RTLD_NEXT, "Cbc_solve");
	return real(model);
}
