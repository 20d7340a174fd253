/*
 * svg.c - charts as SVG text: the overhead-versus-budget figure of a
 * benchmark and the memory timeline of a schedule.  See svg.h.
 *
 * Legibility rules kept here: every axis says what it measures and in
 * which unit; ticks fall on round values (1, 2, 5 x 10^k); curves that
 * coincide stay visible (hollow markers of decreasing size, in a
 * colour-blind-safe palette); reference values (budget, no-remat peak,
 * lower bound) are labelled with their size in bytes.  Long schedules are
 * reduced to one column per pixel (the maximum of each column), so a
 * million-step timeline is still a small file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool/svg.h"
#include "core/atomic.h"

#define W 960
#define H 540
#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"

/* Okabe-Ito colours first (safe for colour-blind readers), then more. */
static const char *const palette[] = {
	"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
	"#000000", "#8C564B", "#7F7F7F", "#BCBD22"
};
#define NPAL ((int)(sizeof(palette) / sizeof(palette[0])))

struct frame {
	double left, top, width, height;   /* the plot area in pixels */
	double x0, x1, y0, y1;             /* the data range shown */
};

static double sx(const struct frame *fr, double x)
{
	return fr->left + (x - fr->x0) / (fr->x1 - fr->x0) * fr->width;
}

static double sy(const struct frame *fr, double y)
{
	return fr->top + fr->height - (y - fr->y0) / (fr->y1 - fr->y0) * fr->height;
}

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* XML 1.0 forbids most control characters. */
			if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
				fputc(*s, f);
		}
	}
}

/* <text> with escaped content. */
static void text(FILE *f, double x, double y, const char *anchor, int size,
		 const char *extra, const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\"%s%s>",
		x, y, anchor, size, extra ? " " : "", extra ? extra : "");
	esc(f, s);
	fputs("</text>\n", f);
}

int remat_i_nice_ticks(double lo, double hi, int target, double *first,
		       double *step)
{
	double range = hi - lo, rough, mag, norm, st;
	int n;

	if (!(range > 0) || !isfinite(range))
		range = fabs(lo) > 0 ? fabs(lo) : 1;
	if (target < 2)
		target = 2;
	rough = range / target;
	mag = pow(10, floor(log10(rough)));
	norm = rough / mag;
	st = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
	*step = st;
	*first = ceil(lo / st - 1e-9) * st;
	n = (int)floor((hi - *first) / st + 1e-9) + 1;
	return n < 1 ? 1 : n;
}

/* Print v with as many decimals as the tick step needs. */
static void fmt_tick(char *buf, size_t size, double v, double step, const char *suffix)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

	if (fabs(v) < step * 1e-6)
		v = 0;
	snprintf(buf, size, "%.*f%s", dec > 6 ? 6 : dec, v, suffix);
}

/* Extend [lo, hi] to whole ticks; returns the step. */
static double round_range(double *lo, double *hi, int target)
{
	double first, step;

	remat_i_nice_ticks(*lo, *hi, target, &first, &step);
	*lo = floor(*lo / step + 1e-9) * step;
	*hi = ceil(*hi / step - 1e-9) * step;
	if (*hi <= *lo)
		*hi = *lo + step;
	return step;
}

static void svg_open(FILE *f, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"%s\">\n<title>", W, H, W, H, FONT);
	esc(f, title);
	fprintf(f, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
}

static void heading(FILE *f, const char *title, const char *subtitle)
{
	text(f, 24, 30, "start", 19, "font-weight=\"bold\"", title);
	text(f, 24, 52, "start", 13, "fill=\"#444\"", subtitle);
}

/*
 * Grid, ticks, tick labels and axis titles.  xsuf/ysuf follow each tick
 * label ("%", "").
 */
static void axes(FILE *f, const struct frame *fr, double xstep, double ystep,
		 const char *xsuf, const char *ysuf, const char *xlabel,
		 const char *ylabel)
{
	char buf[48];
	double v;
	int i;

	fputs("<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n", f);
	for (i = 0, v = fr->y0; v <= fr->y1 + ystep * 1e-6; v = fr->y0 + ystep * ++i)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			fr->left, sy(fr, v), fr->left + fr->width, sy(fr, v));
	for (i = 0, v = fr->x0; v <= fr->x1 + xstep * 1e-6; v = fr->x0 + xstep * ++i)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			sx(fr, v), fr->top, sx(fr, v), fr->top + fr->height);
	fputs("</g>\n", f);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#333\" stroke-width=\"1\"/>\n", fr->left, fr->top, fr->width,
		fr->height);
	fputs("<g fill=\"#222\">\n", f);
	for (i = 0, v = fr->y0; v <= fr->y1 + ystep * 1e-6; v = fr->y0 + ystep * ++i) {
		fmt_tick(buf, sizeof(buf), v, ystep, ysuf);
		text(f, fr->left - 8, sy(fr, v) + 4.5, "end", 13, NULL, buf);
	}
	for (i = 0, v = fr->x0; v <= fr->x1 + xstep * 1e-6; v = fr->x0 + xstep * ++i) {
		fmt_tick(buf, sizeof(buf), v, xstep, xsuf);
		text(f, sx(fr, v), fr->top + fr->height + 20, "middle", 13, NULL, buf);
	}
	fputs("</g>\n", f);
	text(f, fr->left + fr->width / 2, fr->top + fr->height + 46, "middle", 14,
	     "fill=\"#222\"", xlabel);
	fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" "
		"font-size=\"14\" fill=\"#222\">", fr->left - 62, fr->top + fr->height / 2);
	esc(f, ylabel);
	fputs("</text>\n", f);
}

/* A hollow marker of shape k centred at (x, y). */
static void marker(FILE *f, int k, double x, double y, double r, const char *col)
{
	const char *style = "fill=\"white\" stroke-width=\"1.8\"";

	switch (k % 6) {
	case 0:
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" stroke=\"%s\" %s/>\n",
			x, y, r, col, style);
		break;
	case 1:
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"stroke=\"%s\" %s/>\n", x - r * 0.9, y - r * 0.9, r * 1.8, r * 1.8,
			col, style);
		break;
	case 2:
		fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" stroke=\"%s\" %s/>\n",
			x, y - r * 1.15, x + r, y + r * 0.8, x - r, y + r * 0.8, col, style);
		break;
	case 3:
		fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" stroke=\"%s\" %s/>\n",
			x, y - r * 1.2, x + r * 1.2, y, x, y + r * 1.2, x - r * 1.2, y, col, style);
		break;
	case 4:
		fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" stroke=\"%s\" %s/>\n",
			x, y + r * 1.15, x + r, y - r * 0.8, x - r, y - r * 0.8, col, style);
		break;
	default:
		fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" "
			"stroke-width=\"2.2\"/>\n", x - r, y - r, x + r, y + r, x - r, y + r,
			x + r, y - r, col);
	}
}

static const char *dash_of(int k)
{
	/* After the palette runs out, lines differ by their dashes too. */
	switch ((k / NPAL) % 3) {
	case 1: return " stroke-dasharray=\"7 4\"";
	case 2: return " stroke-dasharray=\"2 3\"";
	}
	return "";
}

/*
 * A dashed vertical reference line at data x, labelled above the plot on
 * row 0 (just above it) or row 1 (above that), left of the line when it
 * is in the right half.
 */
static void vref(FILE *f, const struct frame *fr, double x, const char *label, int row)
{
	double px = sx(fr, x);
	int right = px > fr->left + fr->width / 2;

	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
		"stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n", px, fr->top - 6 - 16.0 * row,
		px, fr->top + fr->height);
	text(f, right ? px - 4 : px + 4, fr->top - 8 - 16.0 * row, right ? "end" : "start", 12,
	     "fill=\"#333\"", label);
}

/* ---- overhead versus budget ---- */

struct series {
	const char *planner;
	int64_t first, count;   /* its rows: rows[first .. first+count) */
	double lowest;          /* lowest feasible budget, % of the peak; NAN */
};

void remat_i_svg_overhead(FILE *f, const struct remat_i_row *rows, int64_t n)
{
	struct series *ser = calloc((size_t)n + 1, sizeof(*ser));
	struct frame fr = { 90, 104, 640, 356, 0, 0, 0, 0 };
	const struct remat_i_row *r0 = n > 0 ? &rows[0] : NULL;
	double peak = r0 ? (double)r0->no_remat_peak : 0, lbp, xstep, ystep;
	double xmin, xmax, ymin = 0, ymax = 0;
	int64_t i, nser = 0, nfeas = 0;
	char title[256], sub[320], b1[32], b2[32], l2[96], xl[160];
	int k;

	if (!ser || !r0 || peak <= 0) {
		svg_open(f, "no results");
		text(f, W / 2.0, H / 2.0, "middle", 16, NULL, "no results to plot");
		fputs("</svg>\n", f);
		free(ser);
		return;
	}
	/* Rows are sorted by planner, then budget: one series per run of names. */
	for (i = 0; i < n; i++) {
		if (nser == 0 || strcmp(ser[nser - 1].planner, rows[i].planner) != 0) {
			ser[nser].planner = rows[i].planner;
			ser[nser].first = i;
			ser[nser].lowest = NAN;
			nser++;
		}
		ser[nser - 1].count++;
	}
	lbp = 100.0 * (double)r0->lower_bound / peak;
	xmin = lbp;
	xmax = 100;
	for (i = 0; i < n; i++) {
		double x = 100.0 * (double)rows[i].budget / peak;

		xmin = fmin(xmin, x);
		xmax = fmax(xmax, x);
		if (remat_i_row_fits(&rows[i])) {
			ymin = fmin(ymin, 100 * rows[i].overhead);
			ymax = fmax(ymax, 100 * rows[i].overhead);
			nfeas++;
		}
	}
	for (k = 0; k < nser; k++)
		for (i = ser[k].first; i < ser[k].first + ser[k].count; i++)
			if (remat_i_row_fits(&rows[i]) &&
			    !(100.0 * (double)rows[i].budget / peak >= ser[k].lowest))
				ser[k].lowest = 100.0 * (double)rows[i].budget / peak;
	xmin = fmax(0, xmin - 2);
	xmax += 2;
	ymax = fmax(ymax * 1.08, ymin + 5);
	xstep = round_range(&xmin, &xmax, 10);
	ystep = round_range(&ymin, &ymax, 6);
	fr.x0 = xmin;
	fr.x1 = xmax;
	fr.y0 = ymin;
	fr.y1 = ymax;

	remat_format_bytes(r0->no_remat_peak, b1, sizeof(b1));
	remat_format_bytes(r0->lower_bound, b2, sizeof(b2));
	snprintf(title, sizeof(title), "%s: compute overhead vs memory budget", r0->graph);
	snprintf(sub, sizeof(sub), "%d nodes  \xc2\xb7  no-remat peak %s  \xc2\xb7  lower bound %s"
		 "  \xc2\xb7  %lld runs, %lld within budget", r0->nodes, b1, b2,
		 (long long)n, (long long)nfeas);
	svg_open(f, title);
	heading(f, title, sub);

	/* No schedule can peak below the lower bound: shade that region. */
	if (lbp > fr.x0)
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"#ececec\"/>\n", fr.left, fr.top, sx(&fr, lbp) - fr.left,
			fr.height);
	snprintf(xl, sizeof(xl), "memory budget (%% of the no-remat peak; 100%% = %s)", b1);
	axes(f, &fr, xstep, ystep, "%", "%", xl, "compute overhead (% extra over no-remat cost)");
	if (r0->lower_bound == r0->no_remat_peak) {
		snprintf(l2, sizeof(l2), "lower bound = no-remat peak = %s", b1);
		vref(f, &fr, 100, l2, 0);
	} else {
		/* Two rows when the labels would run into each other. */
		snprintf(l2, sizeof(l2), "lower bound %s (%.1f%%)", b2, lbp);
		vref(f, &fr, lbp, l2, 0);
		snprintf(l2, sizeof(l2), "no-remat peak %s", b1);
		vref(f, &fr, 100, l2, sx(&fr, 100) - sx(&fr, lbp) < 400 ? 1 : 0);
	}

	/* Curves: drawn first to last, markers shrinking so that coinciding
	 * curves stay visible as nested shapes. */
	for (k = 0; k < nser; k++) {
		const char *col = palette[k % NPAL];
		double rad = fmax(3.0, 7.0 - 0.7 * k);
		int open = 0;

		fprintf(f, "<g><title>");
		esc(f, ser[k].planner);
		fprintf(f, "</title>\n<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s d=\"",
			col, dash_of(k));
		for (i = ser[k].first; i < ser[k].first + ser[k].count; i++) {
			const struct remat_i_row *r = &rows[i];

			if (!remat_i_row_fits(r)) {
				open = 0;
				continue;
			}
			fprintf(f, "%s%.1f %.1f", open ? "L" : "M",
				sx(&fr, 100.0 * (double)r->budget / peak), sy(&fr, 100 * r->overhead));
			open = 1;
		}
		fputs("\"/>\n", f);
		for (i = ser[k].first; i < ser[k].first + ser[k].count; i++)
			if (remat_i_row_fits(&rows[i]))
				marker(f, k, sx(&fr, 100.0 * (double)rows[i].budget / peak),
				       sy(&fr, 100 * rows[i].overhead), rad, col);
		fputs("</g>\n", f);
	}

	/* Legend, right of the plot. */
	{
		double lx = fr.left + fr.width + 24, ly = fr.top + 8;

		text(f, lx, ly, "start", 14, "font-weight=\"bold\" fill=\"#222\"", "planner");
		ly += 24;
		for (k = 0; k < nser && ly < H - 20; k++, ly += 38) {
			const char *col = palette[k % NPAL];
			char low[64];

			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				"stroke-width=\"2\"%s/>\n", lx, ly - 4, lx + 30, ly - 4, col, dash_of(k));
			marker(f, k, lx + 15, ly - 4, fmax(3.0, 7.0 - 0.7 * k), col);
			text(f, lx + 40, ly, "start", 14, "fill=\"#222\"", ser[k].planner);
			if (isnan(ser[k].lowest))
				snprintf(low, sizeof(low), "no run within budget");
			else
				snprintf(low, sizeof(low), "fits down to %.4g%%", ser[k].lowest);
			text(f, lx + 40, ly + 16, "start", 12, "fill=\"#666\"", low);
		}
	}
	if (nfeas == 0)
		text(f, fr.left + fr.width / 2, fr.top + fr.height / 2, "middle", 16,
		     "fill=\"#999\"", "no run found a schedule within its budget");
	/*
	 * The graph's file name in small print: its folder is the machine's
	 * business, not the chart's (a chart may be committed and moved).
	 */
	{
		const char *base = strrchr(r0->file, '/');
		size_t len;

		base = base ? base + 1 : r0->file;
		len = strlen(base);
		snprintf(l2, sizeof(l2), "%s%s", len > 60 ? "..." : "",
			 base + (len > 60 ? len - 57 : 0));
		text(f, W - 12, H - 10, "end", 11, "fill=\"#888\"", l2);
	}
	fputs("</svg>\n", f);
	free(ser);
}

/* Close the memory stream f (its buffer and size are known only then). */
static int write_mem(const char *path, char **buf, size_t *len, FILE *f,
		     struct remat_error *err)
{
	int rc;

	if (fclose(f) != 0) {
		free(*buf);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	rc = remat_i_write_atomic(path, *buf, *len, err);
	free(*buf);
	return rc;
}

int remat_i_svg_overhead_write(const char *path, const struct remat_i_row *rows,
			       int64_t n, struct remat_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	remat_i_svg_overhead(f, rows, n);
	return write_mem(path, &buf, &len, f, err);
}

/* ---- memory timeline ---- */

/* Pick the binary unit that keeps v below 1024 of it. */
static void byte_unit(double v, double *div, const char **name)
{
	static const char *const names[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;

	*div = 1;
	while (v / *div >= 1024 && u < 5) {
		*div *= 1024;
		u++;
	}
	*name = names[u];
}

int remat_i_svg_timeline(FILE *f, const struct remat_graph *g,
			 const struct remat_schedule *s, int64_t budget,
			 const char *label, struct remat_error *err)
{
	struct frame fr = { 100, 76, 800, 380, 0, 0, 0, 0 };
	struct remat_sim_result res;
	int64_t *tl = NULL, i, nrec = 0;
	uint8_t *seen = NULL;
	double *colmax = NULL, div, ymax, xstep, ystep;
	int ncol, c, rc;
	const char *uname;
	char title[256], sub[400], yl[64], b1[32], b2[32], b3[32], lab[96];
	int *reccol = NULL;

	tl = malloc(sizeof(*tl) * (size_t)(s->n + 1));
	seen = calloc((size_t)g->n + 1, 1);
	if (!tl || !seen) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	rc = remat_simulate(g, s, budget, tl, &res, err);
	if (rc)
		goto done;
	if (!res.valid) {
		rc = REMAT_FAIL(err, REMAT_EINPUT, "cannot draw an invalid schedule: %s",
				res.error);
		goto done;
	}
	/* One column per pixel at most: the largest memory in each. */
	ncol = s->n < (int64_t)fr.width ? (int)(s->n > 0 ? s->n : 1) : (int)fr.width;
	colmax = calloc((size_t)ncol, sizeof(double));
	reccol = calloc((size_t)ncol, sizeof(int));
	if (!colmax || !reccol) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (c = 0; c < ncol; c++)
		colmax[c] = -1;
	for (i = 0; i < s->n; i++) {
		int col = (int)((double)i * ncol / (double)s->n);
		const struct remat_step *st = &s->steps[i];

		if (col >= ncol)
			col = ncol - 1;
		if (st->op == REMAT_OP_COMPUTE && seen[st->node]) {
			reccol[col]++;
			nrec++;
		}
		if (st->op == REMAT_OP_COMPUTE)
			seen[st->node] = 1;
		/* Compute-only schedules report computes only; frees are implicit. */
		if (!res.compute_only || st->op == REMAT_OP_COMPUTE)
			colmax[col] = fmax(colmax[col], (double)tl[i]);
	}
	for (c = 1; c < ncol; c++)
		if (colmax[c] < 0)
			colmax[c] = colmax[c - 1];
	if (ncol > 0 && colmax[0] < 0)
		colmax[0] = 0;

	ymax = fmax((double)res.peak_mem, (double)g->no_remat_peak);
	if (budget >= 0)
		ymax = fmax(ymax, (double)budget);
	byte_unit(ymax, &div, &uname);
	fr.x0 = 0;
	fr.x1 = (double)(s->n > 0 ? s->n : 1);
	fr.y0 = 0;
	fr.y1 = ymax / div * 1.1;
	if (fr.y1 <= 0)
		fr.y1 = 1;
	ystep = round_range(&fr.y0, &fr.y1, 6);
	{
		double first;

		remat_i_nice_ticks(fr.x0, fr.x1, 10, &first, &xstep);
		if (xstep < 1)
			xstep = 1;
	}

	remat_format_bytes(res.peak_mem, b1, sizeof(b1));
	remat_format_bytes(budget, b2, sizeof(b2));
	remat_format_bytes(g->no_remat_peak, b3, sizeof(b3));
	snprintf(title, sizeof(title), "%s: memory at every step", g->name);
	snprintf(sub, sizeof(sub), "%s%s%lld steps  \xc2\xb7  peak %s%s%s%s  \xc2\xb7  "
		 "%lld recomputation%s  \xc2\xb7  overhead %+.2f%%",
		 label ? label : "", label ? "  \xc2\xb7  " : "", (long long)s->n, b1,
		 budget >= 0 ? "  \xc2\xb7  budget " : "", budget >= 0 ? b2 : "",
		 budget < 0 ? "" : res.feasible ? " (fits)" : " (over budget)",
		 (long long)res.recomputes, res.recomputes == 1 ? "" : "s", 100 * res.overhead);
	svg_open(f, title);
	heading(f, title, sub);
	snprintf(yl, sizeof(yl), "memory (%s)", uname);
	axes(f, &fr, xstep, ystep, "", "", "schedule step", yl);

	/* The memory as a step function: column c spans [c, c+1) * n/ncol. */
	{
		double per = fr.x1 / ncol, base = sy(&fr, 0);

		fprintf(f, "<path id=\"mem\" fill=\"#0072B2\" fill-opacity=\"0.22\" stroke=\"#0072B2\" "
			"stroke-width=\"1.4\" stroke-linejoin=\"round\" d=\"M%.1f %.1f", sx(&fr, 0), base);
		for (c = 0; c < ncol; c++) {
			double y = sy(&fr, colmax[c] / div);

			fprintf(f, "L%.1f %.1fL%.1f %.1f", sx(&fr, c * per), y, sx(&fr, (c + 1) * per), y);
		}
		fprintf(f, "L%.1f %.1fZ\"/>\n", sx(&fr, fr.x1), base);
		/* What exceeds the budget, again in red, clipped to above the line. */
		if (budget >= 0 && res.peak_mem > budget) {
			double by = sy(&fr, (double)budget / div);

			fprintf(f, "<clipPath id=\"over\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\"/></clipPath>\n", fr.left, fr.top, fr.width,
				by - fr.top);
			fprintf(f, "<path clip-path=\"url(#over)\" fill=\"#E00000\" fill-opacity=\"0.35\" "
				"stroke=\"#C00000\" stroke-width=\"1.4\" d=\"M%.1f %.1f", sx(&fr, 0), base);
			for (c = 0; c < ncol; c++) {
				double y = sy(&fr, colmax[c] / div);

				fprintf(f, "L%.1f %.1fL%.1f %.1f", sx(&fr, c * per), y,
					sx(&fr, (c + 1) * per), y);
			}
			fprintf(f, "L%.1f %.1fZ\"/>\n", sx(&fr, fr.x1), base);
		}
		/* Recomputations: a strip of ticks along the bottom of the plot. */
		if (nrec > 0) {
			double wpx = fmax(2.0, 0.6 * fr.width / ncol);

			fputs("<g fill=\"#E69F00\">\n", f);
			for (c = 0; c < ncol; c++)
				if (reccol[c])
					fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
						"height=\"14\"/>\n", sx(&fr, (c + 0.5) * per) - wpx / 2,
						base - 14.5, wpx);
			fputs("</g>\n", f);
		}
	}
	/* Reference lines: no-remat peak (grey) and budget (red). */
	{
		double y = sy(&fr, (double)g->no_remat_peak / div);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
			"stroke-width=\"1.5\" stroke-dasharray=\"2 4\"/>\n", fr.left, y,
			fr.left + fr.width, y);
		snprintf(lab, sizeof(lab), "no-remat peak %s", b3);
		text(f, fr.left + 6, y - 5, "start", 12, "fill=\"#333\"", lab);
	}
	if (budget >= 0) {
		double y = sy(&fr, (double)budget / div);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#C00000\" "
			"stroke-width=\"2\" stroke-dasharray=\"8 4\"/>\n", fr.left, y,
			fr.left + fr.width, y);
		snprintf(lab, sizeof(lab), "budget %s", b2);
		/* Keep the two labels apart when the lines are close. */
		text(f, fr.left + fr.width - 6,
		     fabs(y - sy(&fr, (double)g->no_remat_peak / div)) < 16 && y > fr.top + 30 ?
		     y + 15 : y - 5, "end", 12, "fill=\"#C00000\" font-weight=\"bold\"", lab);
	}
	/* The peak. */
	if (res.peak_step >= 0) {
		double px = sx(&fr, (double)res.peak_step + 0.5);
		double py = sy(&fr, (double)res.peak_mem / div);

		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#0072B2\" "
			"stroke=\"white\" stroke-width=\"1.5\"/>\n", px, py);
		snprintf(lab, sizeof(lab), "peak %s (step %lld)", b1, (long long)res.peak_step);
		text(f, px < fr.left + fr.width * 0.75 ? px + 8 : px - 8, py - 8,
		     px < fr.left + fr.width * 0.75 ? "start" : "end", 12,
		     "fill=\"#0072B2\" font-weight=\"bold\"", lab);
	}
	/* Legend along the bottom edge. */
	{
		double ly = H - 12, lx = fr.left;

		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" fill=\"#0072B2\" "
			"fill-opacity=\"0.22\" stroke=\"#0072B2\"/>\n", lx, ly - 9);
		text(f, lx + 24, ly, "start", 12, "fill=\"#333\"",
		     "memory in use (resident outputs + the running node's output and workspace)");
		lx += 500;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"12\" "
			"fill=\"#E69F00\"/>\n", lx, ly - 10);
		snprintf(lab, sizeof(lab), "recomputation (%lld)", (long long)nrec);
		text(f, lx + 12, ly, "start", 12, "fill=\"#333\"", lab);
		if (budget >= 0 && res.peak_mem > budget) {
			lx += 150;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" "
				"fill=\"#E00000\" fill-opacity=\"0.35\" stroke=\"#C00000\"/>\n",
				lx, ly - 9);
			text(f, lx + 24, ly, "start", 12, "fill=\"#333\"", "over budget");
		}
	}
	fputs("</svg>\n", f);
done:
	free(tl);
	free(seen);
	free(colmax);
	free(reccol);
	return rc;
}

int remat_i_svg_timeline_write(const char *path, const struct remat_graph *g,
			       const struct remat_schedule *s, int64_t budget,
			       const char *label, struct remat_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	rc = remat_i_svg_timeline(f, g, s, budget, label, err);
	if (rc) {
		fclose(f);
		free(buf);
		return rc;
	}
	return write_mem(path, &buf, &len, f, err);
}
