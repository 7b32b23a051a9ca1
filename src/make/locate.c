/* locate.c - where djc's own files are, for the make programs it runs: a
 * djc command ($DJC) and the directory of the Python make module
 * djc_make.py (put first on PYTHONPATH). Looked for once per process,
 * relative to the object that holds this code (the djc command, which
 * links libdjc.a; libdjc.so; or a program linked with libdjc.a), then where
 * `make install` puts them for the PREFIX this library was built with.
 * (populate.h: make_env_base) */
#include "make.h"
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by the Makefile from BINDIR and PYDIR */
#ifndef DJC_INSTALL_BINDIR
#define DJC_INSTALL_BINDIR "/usr/local/bin"
#endif
#ifndef DJC_INSTALL_PYDIR
#define DJC_INSTALL_PYDIR "/usr/local/share/djc/python"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *djc_env;   /* "DJC=/path/to/djc", or NULL when none was found */
static char *py_dir;    /* the directory of djc_make.py, or NULL */

/* The directory of the file this code was loaded from: libdjc.so (the
 * loader's link map names it), else the program (/proc/self/exe). NULL
 * when it cannot be told. Caller frees. */
static char *code_dir(void)
{
	Dl_info info;
	struct link_map *lm = NULL;
	char *path = NULL;
	if (dladdr1((void *)code_dir, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm && lm->l_name && lm->l_name[0])
		path = realpath(lm->l_name, NULL);
	if (!path) path = realpath("/proc/self/exe", NULL);
	if (!path) return NULL;
	char *slash = strrchr(path, '/');
	if (slash) slash[slash == path] = 0;
	return path;
}

/* The first of dirs[0..n) (NULL entries skipped) holding a regular file
 * `name` that can be accessed with `mode`, as "DIR/name" resolved
 * (realpath), or NULL. Caller frees. */
static char *first_file(char *const *dirs, size_t n, const char *name, int mode)
{
	for (size_t i = 0; i < n; i++) {
		if (!dirs[i]) continue;
		char *f = xasprintf("%s/%s", dirs[i], name);
		struct stat st;
		char *real = !stat(f, &st) && S_ISREG(st.st_mode) && !access(f, mode) ? realpath(f, NULL) : NULL;
		free(f);
		if (real) return real;
	}
	return NULL;
}

/* djc beside this code (the djc command itself, or PREFIX/bin/djc from
 * PREFIX/lib), then BINDIR; djc_make.py in an installed tree (PREFIX/bin or
 * PREFIX/lib -> PREFIX/share/djc/python), a build tree (build/ ->
 * python/), then PYDIR. */
static void locate(void)
{
	char *d = code_dir();
	char *bins[3] = {d ? xstrdup(d) : NULL, d ? xasprintf("%s/../bin", d) : NULL, xstrdup(DJC_INSTALL_BINDIR)};
	char *pys[3] = {d ? xasprintf("%s/../share/djc/python", d) : NULL, d ? xasprintf("%s/../python", d) : NULL,
			xstrdup(DJC_INSTALL_PYDIR)};
	char *djc = first_file(bins, 3, "djc", X_OK);
	char *py = first_file(pys, 3, "djc_make.py", R_OK);
	if (djc) djc_env = xasprintf("DJC=%s", djc);
	if (py) {
		char *slash = strrchr(py, '/');
		*slash = 0;
		py_dir = xstrdup(py);
	}
	free(djc);
	free(py);
	for (int i = 0; i < 3; i++) { free(bins[i]); free(pys[i]); }
	free(d);
}

const char *make_djc_env(void)
{
	pthread_once(&once, locate);
	return djc_env;
}

const char *make_py_dir(void)
{
	pthread_once(&once, locate);
	return py_dir;
}
