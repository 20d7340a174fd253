/* atomic.c - whole-file atomic writes; see atomic.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t got = write(fd, buf, len);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += got;
		len -= (size_t)got;
	}
	return 0;
}

int remat_i_write_atomic(const char *path, const char *buf, size_t len,
			 struct remat_error *err)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
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
	if (fchmod(fd, 0666 & ~mask) != 0 || write_all(fd, buf, len) != 0 ||
	    fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	return REMAT_OK;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return REMAT_FAIL(err, REMAT_EIO, "%s: cannot write: %s", path,
			  strerror(e ? e : EIO));
}
