/* output.c - the result reports of plan and simulate, as JSON and as text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/util.h"

/*
 * Costs for people, never in exponent notation (3.41323e+11 breaks the
 * summary's columns): up to six significant digits as they are below a
 * million ("805", "1011", "2.5"), with an SI prefix from a million on
 * ("341.323 G" for 3.41323e+11, "1.5 M").
 */
void cli_format_cost(double v, char *buf, size_t size)
{
	static const char prefix[] = "kMGTPEZY";
	double a = fabs(v), x;
	int k;

	if (isfinite(v) && a >= 999999.5) {
		/* The first prefix that leaves under 1000 after rounding. */
		for (k = 1, x = a / 1000; x >= 999.9995 && k < 8; k++)
			x /= 1000;
		if (x < 999.9995) {
			snprintf(buf, size, "%.6g %c", v < 0 ? -x : x, prefix[k - 1]);
			return;
		}
	}
	if (isfinite(v) && a != 0 && a < 1e-4) {
		/* Small costs: fixed notation, six significant digits. */
		int decimals = 5 - (int)floor(log10(a));
		size_t len;

		snprintf(buf, size, "%.*f", decimals, v);
		len = strlen(buf);
		while (len > 0 && buf[len - 1] == '0')
			buf[--len] = '\0';
		return;
	}
	snprintf(buf, size, "%.6g", v);
}

void cli_print_result_json(FILE *f, const struct remat_sim_result *res,
			   int64_t budget, const char *planner,
			   const char *chosen, double time_s, const char *error,
			   const struct remat_plan_report *report)
{
	fputs("{\"valid\": ", f);
	fputs(res && res->valid ? "true" : "false", f);
	fputs(", \"feasible\": ", f);
	fputs(res && res->feasible ? "true" : "false", f);
	remat_i_json_write_figures(f, res, ", ");
	if (budget >= 0)
		fprintf(f, ", \"budget\": %lld", (long long)budget);
	else
		fputs(", \"budget\": null", f);
	if (planner) {
		fputs(", \"planner\": ", f);
		remat_i_json_write_str(f, planner);
		if (chosen && chosen[0]) {
			fputs(", \"chosen\": ", f);
			remat_i_json_write_str(f, chosen);
		}
		fputs(", \"time_s\": ", f);
		remat_i_json_write_num(f, floor(time_s * 1e6 + 0.5) / 1e6);
	}
	if (report && !isnan(report->lower_bound)) {
		fputs(", \"lower_bound\": ", f);
		remat_i_json_write_num(f, report->lower_bound);
	}
	if (report && !isnan(report->order_lower_bound)) {
		fputs(", \"order_lower_bound\": ", f);
		remat_i_json_write_num(f, report->order_lower_bound);
	}
	if (report && !isnan(report->gap)) {
		fputs(", \"gap\": ", f);
		remat_i_json_write_num(f, report->gap);
	}
	if (report && !isnan(report->first_s)) {
		fputs(", \"first_s\": ", f);
		remat_i_json_write_num(f, floor(report->first_s * 1e3 + 0.5) / 1e3);
	}
	if (report && !isnan(report->final_s)) {
		fputs(", \"final_s\": ", f);
		remat_i_json_write_num(f, floor(report->final_s * 1e3 + 0.5) / 1e3);
	}
	if (report && report->order[0]) {
		fputs(", \"order\": ", f);
		remat_i_json_write_str(f, report->order);
		fprintf(f, ", \"order_peak\": %lld", (long long)report->order_peak);
	}
	if (report)
		fprintf(f, ", \"solver_crashes\": %lld", (long long)report->solver_crashes);
	if (report && report->peak_bound >= 0)
		fprintf(f, ", \"peak_lower_bound\": %lld", (long long)report->peak_bound);
	if (report && report->note[0]) {
		fputs(", \"note\": ", f);
		remat_i_json_write_str(f, report->note);
	}
	if (report && report->optimal >= 0)
		fprintf(f, ", \"optimal\": %s", report->optimal ? "true" : "false");
	if (res && res->error[0]) {
		fputs(", \"error_step\": ", f);
		fprintf(f, "%lld", (long long)res->error_step);
	}
	fputs(", \"error\": ", f);
	if (error && error[0])
		remat_i_json_write_str(f, error);
	else
		fputs("null", f);
	fputs("}\n", f);
}

void cli_print_result_text(FILE *f, const struct remat_graph *g,
			   const struct remat_sim_result *res, int64_t budget)
{
	char a[32], b[32], c[32];

	remat_format_bytes(res->peak_mem, a, sizeof(a));
	remat_format_bytes(g->no_remat_peak, c, sizeof(c));
	if (budget >= 0) {
		remat_format_bytes(budget, b, sizeof(b));
		fprintf(f, "  peak        %-14s budget %s (%s)\n", a, b,
			res->feasible ? "fits" : "over budget");
	} else {
		fprintf(f, "  peak        %s\n", a);
	}
	if (g->no_remat_peak > 0)
		fprintf(f, "  no-remat    %-14s peak is %.1f%% of it\n", c,
			100.0 * (double)res->peak_mem / (double)g->no_remat_peak);
	cli_format_cost(res->cost, c, sizeof(c));
	snprintf(a, sizeof(a), "%s %s", c, g->cost_unit);
	cli_format_cost(res->baseline_cost, b, sizeof(b));
	fprintf(f, "  cost        %-14s baseline %s, overhead %+.2f%%\n", a, b,
		100.0 * res->overhead);
	fprintf(f, "  computes    %-14lld recomputes %lld\n", (long long)res->computes,
		(long long)res->recomputes);
}

const char *cli_safe(const char *s)
{
	static char buf[4][1024];
	static unsigned k;
	char *b = buf[k++ % 4];

	remat_i_text_safe(b, sizeof(buf[0]), s ? s : "");
	return b;
}
