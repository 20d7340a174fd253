/* use_remat.c - a consumer of the installed library (tests/install). */
#include <stdio.h>

#include <remat/remat.h>

int main(int argc, char **argv)
{
	struct remat_graph *g;
	struct remat_error err;

	if (argc < 2 || remat_graph_load_file(argv[1], &g, &err) != REMAT_OK)
		return 1;
	printf("%s %d %lld\n", g->name, g->n, (long long)g->no_remat_peak);
	remat_graph_free(g);
	return 0;
}
