/* dl.c - lazy loading of client libraries. */
#include "dl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t dl_mu = PTHREAD_MUTEX_INITIALIZER;

void *dl_optional(const char *const *sonames, const char *name)
{
	for (size_t i = 0; sonames[i]; i++) {
		void *h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
		if (h) {
			void *f = dlsym(h, name);
			dlclose(h);   /* dl_load's reference keeps it loaded */
			return f;
		}
	}
	return NULL;
}

/* Open lib and resolve its functions (dl_load, with dl_mu held); the
 * failure's message into last. RTLD_LAZY: the library's own calls into
 * its dependencies (libpq: 23 libraries, GnuTLS, Kerberos, LDAP) are bound
 * when first made, not all at load; every function djc calls is looked up
 * here and checked, so a missing one is still reported at once. Binding
 * all of libpq's at load cost a third of a short djc command's CPU (perf
 * stat of dlopen: 18.8 ms RTLD_NOW, 12.9 ms RTLD_LAZY, /bin/true 2.5 ms). */
static void load(dl_lib *lib, char *last, size_t n)
{
	void *h = NULL;
	const char *tried = lib->sonames[0];
	for (size_t i = 0; lib->sonames[i] && !h; i++) h = dlopen(tried = lib->sonames[i], RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(last, n, "%s support needs %s, which cannot be loaded: %s", lib->what, tried, e ? e : "not found");
		lib->state = -1;
		return;
	}
	lib->state = 1;
	for (size_t i = 0; i < lib->n; i++) {
		lib->slots[i] = dlsym(h, lib->names[i]);
		if (!lib->slots[i]) {
			snprintf(last, n, "%s: %s lacks the function %s", lib->what, tried, lib->names[i]);
			lib->state = -1;
			return;
		}
	}
}

int dl_load(dl_lib *lib, char *err, size_t errlen)
{
	static char last[512];
	pthread_mutex_lock(&dl_mu);
	if (lib->state == 0) load(lib, last, sizeof last);
	int ok = lib->state == 1;
	pthread_mutex_unlock(&dl_mu);
	if (!ok) snprintf(err, errlen, "%s", last);
	return ok ? 0 : -1;
}
