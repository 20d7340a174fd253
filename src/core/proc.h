/*
 * proc.h - child processes that do not outlive remat.  libremat forks
 * CBC's solves (src/solver/milp_cbc.c) and the program forks benchmark
 * runs (src/tool/bench.c); when remat is killed (SIGTERM from a job
 * scheduler, a Python subprocess timeout, SIGKILL), those children must
 * die too instead of solving on for an hour.  Internal to libremat.
 */
#ifndef REMAT_PROC_H
#define REMAT_PROC_H

#include <sys/types.h>

/*
 * Called first thing in a freshly forked child, with the pid the parent
 * had before fork(): on Linux the kernel sends the child SIGKILL when the
 * parent dies (PR_SET_PDEATHSIG); a parent that died before that call
 * already is detected and the child exits at once.  Elsewhere a no-op.
 */
void remat_i_die_with_parent(pid_t parent);

#endif
