/*
 * write_shim.c - an LD_PRELOAD library for tests/cli/test_files.py: it
 * makes writing remat's temporary output files (PATH.tmp.XXXXXX) fail as
 * a full disk does, or kills remat in the middle of such a write.
 *
 * REMAT_SHIM=enospc  fflush on a temporary file fails with ENOSPC
 * REMAT_SHIM=term    fflush on a temporary file sends remat SIGTERM
 * REMAT_SHIM=int     ... SIGINT
 *
 * It interposes fflush, which atomic.c calls on the temporary before
 * syncing and renaming it (glibc's own stdio writes do not go through
 * interposable symbols; fflush called by remat does).  Other files and
 * streams are left alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_temporary(FILE *f)
{
	char link[64], path[PATH_MAX];
	ssize_t n;
	int fd;

	if (!f || (fd = fileno(f)) < 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return 0;
	path[n] = '\0';
	return strstr(path, ".tmp.") != NULL;
}

int fflush(FILE *f)
{
	static int (*real)(FILE *);
	const char *mode = getenv("REMAT_SHIM");

	if (!real)
		real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fflush");
	if (mode && is_temporary(f)) {
		if (strcmp(mode, "enospc") == 0) {
			errno = ENOSPC;
			return EOF;
		}
		if (real(f) != 0)
			return EOF;
		if (strcmp(mode, "term") == 0)
			raise(SIGTERM);
		else if (strcmp(mode, "int") == 0)
			raise(SIGINT);
		return 0;
	}
	return real(f);
}
