/* atomic.c - whole-file atomic writes; see atomic.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic.h"

int remat_i_write_atomic_stream(const char *path,
				void (*body)(FILE *f, const void *ctx),
				const void *ctx, struct remat_error *err)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	FILE *f = NULL;
	mode_t mask;
	int fd, e;

	if (!tmp)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	memcpy(tmp, path, plen);
	memcpy(tmp + plen, ".tmp.XXXXXX", 12);
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		free(tmp);
		return REMAT_FAIL(err, REMAT_EIO, "%s: cannot write: %s", path, strerror(e));
	}
	/* mkstemp creates 0600; give the file the mode a plain fopen would. */
	mask = umask(0);
	umask(mask);
	errno = 0;
	if (fchmod(fd, 0666 & ~mask) != 0 || !(f = fdopen(fd, "w")))
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
	if (rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	return REMAT_OK;
fail:
	e = errno;
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return REMAT_FAIL(err, REMAT_EIO, "%s: cannot write: %s", path,
			  strerror(e ? e : EIO));
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
