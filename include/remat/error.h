/*
 * remat/error.h - status codes and the caller-owned error record.
 *
 * Every fallible function in libremat returns an int status (REMAT_OK on
 * success) and, on failure, fills a caller-passed struct remat_error with
 * the same code and a one-line message.  There is no global error state.
 *
 * Messages follow git's conventions: lower case, no final full stop, the
 * subject in single quotes, and they name the file, node and field when
 * the error is about input: "g.json: node 'conv3': 'mem' must be ...".
 * The library never prints; the CLI adds the "remat: " prefix.  Messages
 * are safe to print as they are: remat_error_set_at() and
 * remat_error_prefix() escape control characters, DEL and bytes that are
 * not UTF-8 as \xNN (the C1 controls as \u0080-\u009f), so ids quoted
 * from a file cannot drive the terminal and callers need not escape.
 *
 * Typedef rule for the whole project: no typedefs for structs or enums
 * (write "struct remat_graph"); typedefs only for function pointer types.
 */
#ifndef REMAT_ERROR_H
#define REMAT_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum remat_status {
	REMAT_OK = 0,
	REMAT_EINPUT = 1,     /* bad input: unreadable or invalid graph/schedule */
	REMAT_EUSAGE = 2,     /* bad request: unknown option, unreadable budget */
	REMAT_ENOFIT = 3,     /* no schedule within the budget was found */
	REMAT_ENOMEM = 4,     /* out of memory */
	REMAT_EIO = 5,        /* cannot write an output file */
	REMAT_EINTERNAL = 6,  /* a bug: a planner broke its contract, etc. */
	REMAT_ECANCELED = 7   /* stopped by the caller or a time limit */
};

struct remat_error {
	int code;
	char msg[512];
	const char *src_file; /* where in libremat the error was raised */
	int src_line;
};

/* Reset err to REMAT_OK with an empty message.  err may be NULL. */
void remat_error_clear(struct remat_error *err);

/*
 * Record code and a printf-style message in err (which may be NULL) and
 * return code, so that "return remat_error_set(err, ...);" reads naturally.
 * Use through REMAT_FAIL to capture the source location.
 */
int remat_error_set_at(struct remat_error *err, const char *file, int line,
		       int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Prefix the message already in err with "prefix: " (for adding context). */
void remat_error_prefix(struct remat_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Name of a status code ("bad input", "no schedule within budget", ...). */
const char *remat_status_name(int code);

/* Record a failure with its source location: return REMAT_FAIL(err, ...); */
#define REMAT_FAIL(err, code, ...) \
	remat_error_set_at((err), __FILE__, __LINE__, (code), __VA_ARGS__)

/* Forward a failure: evaluate expr and return its status if not REMAT_OK. */
#define REMAT_TRY(expr) \
	do { \
		int remat_try_rc_ = (expr); \
		if (remat_try_rc_ != REMAT_OK) \
			return remat_try_rc_; \
	} while (0)

#ifdef __cplusplus
}
#endif
#endif
