/* atomic.c - whole-file atomic writes; see atomic.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/atomic.h"

/* Links followed before giving up, as the kernel's own limit (ELOOP). */
#define MAX_LINKS 40

/*
 * The temporary file being written, for remat_i_atomic_abandon() to
 * remove from a signal handler.  One at a time: libremat writes files
 * from one thread.
 */
static char *volatile live_tmp;

void remat_i_atomic_abandon(void)
{
	char *t = live_tmp;

	if (t)
		unlink(t); /* async-signal-safe */
}

/*
 * The path a write to path lands on: path itself, or the file its chain
 * of symbolic links ends at (which need not exist yet: a dangling link
 * creates its target).  Relative link targets are relative to the link's
 * directory.  malloc'd; NULL with errno set on failure.
 */
static char *resolve_links(const char *path)
{
	char *p = strdup(path);
	int hops;

	for (hops = 0; p; hops++) {
		struct stat st;
		char target[PATH_MAX];
		ssize_t n;
		char *np, *slash;
		size_t dlen;

		if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
			return p; /* not there yet, or not a link: the end */
		if (hops == MAX_LINKS) {
			free(p);
			errno = ELOOP;
			return NULL;
		}
		n = readlink(p, target, sizeof(target) - 1);
		if (n < 0) {
			free(p);
			return NULL;
		}
		target[n] = '\0';
		slash = strrchr(p, '/');
		dlen = target[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
		np = malloc(dlen + (size_t)n + 1);
		if (np) {
			memcpy(np, p, dlen);
			memcpy(np + dlen, target, (size_t)n + 1);
		}
		free(p);
		p = np;
	}
	errno = ENOMEM; /* strdup or malloc failed */
	return NULL;
}

static int write_fail(const char *path, int e, struct remat_error *err)
{
	return REMAT_FAIL(err, e == ENOMEM ? REMAT_ENOMEM : REMAT_EIO, "%s: cannot write: %s",
			  path, strerror(e ? e : EIO));
}

/* Write body to an open stream that is not ours to replace; flushed. */
static int write_stream(FILE *f, const char *path,
			void (*body)(FILE *f, const void *ctx), const void *ctx,
			struct remat_error *err)
{
	errno = 0;
	body(f, ctx);
	if (fflush(f) != 0 || ferror(f))
		return write_fail(path, errno, err);
	return REMAT_OK;
}

/* A FIFO or a character device (a terminal, /dev/null): written in place. */
static int write_in_place(const char *path, const char *target,
			  void (*body)(FILE *f, const void *ctx), const void *ctx,
			  struct remat_error *err)
{
	int fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	FILE *f;
	int rc, e;

	if (fd < 0)
		return write_fail(path, errno, err);
	f = fdopen(fd, "w");
	if (!f) {
		e = errno;
		close(fd);
		return write_fail(path, e, err);
	}
	rc = write_stream(f, path, body, ctx, err);
	e = errno;
	if (fclose(f) != 0 && rc == REMAT_OK)
		rc = write_fail(path, e, err);
	return rc;
}

static int write_atomic_raw(const char *path, void (*body)(FILE *f, const void *ctx),
			    const void *ctx, struct remat_error *err)
{
	char *target, *tmp;
	struct stat st;
	FILE *f = NULL;
	mode_t mode;
	size_t tlen;
	int fd, e, rc;

	if (strcmp(path, "-") == 0)
		return write_stream(stdout, "standard output", body, ctx, err);
	target = resolve_links(path);
	if (!target)
		return write_fail(path, errno, err);
	if (stat(target, &st) == 0) {
		if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
			rc = write_in_place(path, target, body, ctx, err);
			free(target);
			return rc;
		}
		if (!S_ISREG(st.st_mode)) {
			free(target);
			return REMAT_FAIL(err, REMAT_EIO, "%s: cannot write: %s", path,
					  S_ISDIR(st.st_mode) ? "is a directory" :
					  "not a regular file (refusing to replace it)");
		}
		mode = st.st_mode & 07777; /* the file keeps its mode */
	} else {
		mode_t mask = umask(0);

		umask(mask);
		mode = 0666 & ~mask; /* the mode a plain fopen would give */
	}
	tlen = strlen(target);
	tmp = malloc(tlen + 16);
	if (!tmp) {
		free(target);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	memcpy(tmp, target, tlen);
	memcpy(tmp + tlen, ".tmp.XXXXXX", 12);
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		free(tmp);
		free(target);
		return write_fail(path, e, err);
	}
	live_tmp = tmp;
	errno = 0;
	if (fchmod(fd, mode) != 0 || !(f = fdopen(fd, "w")))
		goto fail;
	fd = -1; /* owned by f now */
	body(f, ctx);
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)
		goto fail;
	if (fclose(f) != 0) {
		f = NULL;
		goto fail;
	}
	f = NULL;
	if (rename(tmp, target) != 0)
		goto fail;
	live_tmp = NULL;
	free(tmp);
	free(target);
	return REMAT_OK;
fail:
	e = errno;
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	unlink(tmp);
	live_tmp = NULL;
	free(tmp);
	free(target);
	return write_fail(path, e, err);
}

struct bytes {
	const char *buf;
	size_t len;
};

static void write_bytes(FILE *f, const void *ctx)
{
	const struct bytes *b = ctx;

	if (b->len)
		fwrite(b->buf, 1, b->len, f);
}

int remat_i_write_atomic(const char *path, const char *buf, size_t len,
			 struct remat_error *err)
{
	struct bytes b = { buf, len };

	return remat_i_write_atomic_stream(path, write_bytes, &b, err);
}

/* Chunks handed to deflate (its counters are unsigned int). */
#define GZ_CHUNK ((size_t)1 << 28)

/*
 * len bytes of text gzip-compressed (RFC 1952, as gzip(1) writes) into a
 * malloc'd *out of *out_len bytes.
 */
static int gzip_bytes(const char *text, size_t len, char **out, size_t *out_len,
		      struct remat_error *err)
{
	z_stream z;
	size_t cap, done = 0;
	int zr;

	*out = NULL;
	*out_len = 0;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory compressing the output");
	cap = (size_t)deflateBound(&z, (uLong)len) + 64;
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&z);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory compressing the output");
	}
	do {
		size_t in = len - done < GZ_CHUNK ? len - done : GZ_CHUNK;
		int last = done + in == len;

		z.next_in = (Bytef *)(uintptr_t)(text + done);
		z.avail_in = (uInt)in;
		do {
			size_t room = cap - *out_len < GZ_CHUNK ? cap - *out_len : GZ_CHUNK;

			z.next_out = (Bytef *)*out + *out_len;
			z.avail_out = (uInt)room;
			zr = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
			*out_len += room - z.avail_out;
		} while (z.avail_in > 0 || (last && zr == Z_OK));
		done += in;
	} while (done < len);
	deflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return REMAT_FAIL(err, REMAT_EIO, "cannot compress the output (zlib error %d)", zr);
	}
	return REMAT_OK;
}

static int ends_gz(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

int remat_i_write_atomic_stream(const char *path,
				void (*body)(FILE *f, const void *ctx),
				const void *ctx, struct remat_error *err)
{
	char *text = NULL, *gz = NULL;
	size_t len = 0, gz_len = 0;
	struct bytes b;
	FILE *m;
	int rc;

	if (strcmp(path, "-") == 0 || !ends_gz(path))
		return write_atomic_raw(path, body, ctx, err);
	/* PATH.gz: the same content, compressed, written as atomically. */
	m = open_memstream(&text, &len);
	if (!m)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory writing %s", path);
	body(m, ctx);
	if (ferror(m) | fclose(m)) {
		free(text);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory writing %s", path);
	}
	rc = gzip_bytes(text, len, &gz, &gz_len, err);
	free(text);
	if (rc)
		return rc;
	b.buf = gz;
	b.len = gz_len;
	rc = write_atomic_raw(path, write_bytes, &b, err);
	free(gz);
	return rc;
}
