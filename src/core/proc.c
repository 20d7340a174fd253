/* proc.c - children that die with their parent; see proc.h. */
#include <signal.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "core/proc.h"

void remat_i_die_with_parent(pid_t parent)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died between fork() and prctl(). */
	if (getppid() != parent)
		_exit(1);
#else
	(void)parent;
#endif
}
