/* The atomic file writer (atomic.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "atomic.h"
#include "mem.h"

/* statfs(2)'s f_type of ext2/3/4 */
#define EXT4_MAGIC 0xEF53

e2s_err e2s_out_target(const char *path, char **target, bool *stream,
		       e2s_diag *d)
{
	struct stat ls, st;
	*target = NULL;
	*stream = false;
	if (!*path)
		return e2s_fail(d, E2S_ERR_USAGE, NULL, 0, "empty output file name");
	if (lstat(path, &ls) != 0) {
		if (errno != ENOENT)
			return e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s: %s", path,
					strerror(errno));
		ls.st_mode = S_IFREG; /* new: created by the rename */
	} else if (stat(path, &st) != 0) {
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s: %s", path,
				errno == ENOENT ? "a symbolic link to nothing"
						: strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s: %s", path,
				strerror(EISDIR));
	} else if (!S_ISREG(st.st_mode)) {
		*stream = true;
	}
	*target = !*stream && S_ISLNK(ls.st_mode) ? realpath(path, NULL)
						   : strdup(path);
	if (!*target)
		return e2s_fail(d, errno == ENOMEM ? E2S_ERR_NOMEM : E2S_ERR_IO,
				NULL, 0, "%s: %s", path, strerror(errno));
	return E2S_ERR_OK;
}

e2s_err e2s_write_stream(const char *path, const void *p, size_t n,
			 e2s_diag *d)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "cannot open %s: %s",
				path, strerror(errno));
	e2s_err e = e2s_write_all(fd, p, n, d);
	if (close(fd) != 0 && !e)
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s: %s", path,
			     strerror(errno));
	return e;
}

e2s_err e2s_atomic_begin(e2s_atomic *a, const char *path, e2s_diag *d)
{
	char *dcopy = strdup(path), *bcopy = strdup(path);
	e2s_err e = E2S_ERR_OK;

	a->fd = -1;
	a->tmp = NULL;
	a->direct = false;
	a->path = strdup(path);
	if (!dcopy || !bcopy || !a->path) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	const char *dir = dirname(dcopy), *base = basename(bcopy);
	size_t n = strlen(dir) + strlen(base) + 16;
	a->tmp = malloc(n);
	if (!a->tmp) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	snprintf(a->tmp, n, "%s/.%s.e2sXXXXXX", dir, base);
	a->fd = mkostemp(a->tmp, O_CLOEXEC);
	if (a->fd < 0)
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "cannot create a file in %s: %s",
			     dir, strerror(errno));
out:
	if (e) {
		free(a->tmp);
		free(a->path);
		a->tmp = a->path = NULL;
	}
	free(dcopy);
	free(bcopy);
	return e;
}

e2s_err e2s_atomic_begin_new(e2s_atomic *a, const char *path, e2s_diag *d)
{
	a->fd = -1;
	a->direct = true;
	a->tmp = strdup(path);
	a->path = strdup(path);
	if (!a->tmp || !a->path) {
		free(a->tmp);
		free(a->path);
		a->tmp = a->path = NULL;
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	}
	a->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (a->fd < 0) {
		int er = errno;
		free(a->tmp);
		free(a->path);
		a->tmp = a->path = NULL;
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "cannot create %s: %s",
				path, strerror(er));
	}
	return E2S_ERR_OK;
}

void e2s_atomic_reserve(e2s_atomic *a, uint64_t size)
{
	struct statfs sf;
	/* ext4 reserves delayed-allocation space block by block as the
	 * copy is written (about a tenth of copy_file_range's CPU on a
	 * 110 MB file); allocated at once, the copy fills blocks it has.
	 * Not elsewhere: a filesystem that shares extents makes the copy
	 * a reflink, which allocated blocks would only be in the way of.
	 * The output is written whole, so no block stays unused. */
	if (a->fd < 0 || size == 0 || size > INT64_MAX ||
	    fstatfs(a->fd, &sf) != 0 || sf.f_type != EXT4_MAGIC)
		return;
	(void)fallocate(a->fd, 0, 0, (off_t)size);
}

/* May a failure to give the copy what the original had be passed over?
 * Only where an unprivileged user cannot do it anyway (another owner,
 * security.* and trusted.* attributes), or the filesystem cannot. */
static bool may_pass(int er)
{
	return er == ENOTSUP || ((er == EPERM || er == EACCES) && geteuid() != 0);
}

/* The extended attributes of from onto fd: a rename drops them with the
 * old inode, and some change what a program can do (file capabilities,
 * SELinux labels, ACLs). */
static e2s_err copy_xattrs(int fd, const char *from, e2s_diag *d)
{
	e2s_err e = E2S_ERR_OK;
	char *names = NULL, *val = NULL;
	ssize_t n;
	for (;;) {
		n = llistxattr(from, NULL, 0);
		if (n <= 0)
			break;
		char *p = realloc(names, (size_t)n);
		if (!p) {
			free(names);
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		}
		names = p;
		ssize_t got = llistxattr(from, names, (size_t)n);
		if (got >= 0 || errno != ERANGE) {
			n = got;
			break;
		}
	}
	if (n < 0) {
		int er = errno;
		free(names);
		if (er == ENOTSUP)
			return E2S_ERR_OK;
		return e2s_fail(d, E2S_ERR_IO, NULL, 0,
				"listing extended attributes: %s", strerror(er));
	}
	for (ssize_t k = 0; !e && k < n; k += (ssize_t)strlen(names + k) + 1) {
		const char *name = names + k;
		/* Signatures of the old bytes (IMA/EVM) would be false of
		 * the new ones: an appraising kernel is to measure them anew. */
		if (strcmp(name, "security.ima") == 0 ||
		    strcmp(name, "security.evm") == 0)
			continue;
		ssize_t len = lgetxattr(from, name, NULL, 0);
		char *v = len > 0 ? realloc(val, (size_t)len) : val;
		if (len > 0 && !v) {
			e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
			break;
		}
		val = v;
		if (len > 0)
			len = lgetxattr(from, name, val, (size_t)len);
		if (len < 0) {
			if (errno == ENODATA)
				continue; /* removed meanwhile */
			e = e2s_fail(d, E2S_ERR_IO, NULL, 0,
				     "reading extended attribute %s: %s", name,
				     strerror(errno));
		} else if (fsetxattr(fd, name, val, (size_t)len, 0) != 0 &&
			   !may_pass(errno)) {
			e = e2s_fail(d, E2S_ERR_IO, NULL, 0,
				     "keeping extended attribute %s: %s", name,
				     strerror(errno));
		}
	}
	free(val);
	free(names);
	return e;
}

e2s_err e2s_atomic_commit(e2s_atomic *a, mode_t mode, const struct stat *owner,
			  const char *attrs_from, bool sync, e2s_diag *d)
{
	e2s_err e = E2S_ERR_OK;
	/* The owner first: a chown clears set-user-ID and set-group-ID
	 * bits and file capabilities, even root's. */
	if (owner && fchown(a->fd, owner->st_uid, owner->st_gid) != 0 &&
	    !may_pass(errno))
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "fchown: %s", strerror(errno));
	if (!e && attrs_from)
		e = copy_xattrs(a->fd, attrs_from, d);
	if (!e && fchmod(a->fd, mode & 07777) != 0)
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "fchmod: %s", strerror(errno));
	if (!e && sync && fsync(a->fd) != 0)
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "fsync: %s", strerror(errno));
	int rc = close(a->fd);
	a->fd = -1;
	if (!e && rc != 0)
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "close: %s", strerror(errno));
	if (!e && !a->direct && rename(a->tmp, a->path) != 0)
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "rename: %s", strerror(errno));
	if (!e) {
		free(a->tmp);
		a->tmp = NULL;
	}
	e2s_atomic_abort(a);
	return e;
}

void e2s_atomic_abort(e2s_atomic *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	a->tmp = a->path = NULL;
}
