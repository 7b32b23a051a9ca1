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

int dl_load(int *state, const char *what, const char *const *sonames, const char *const *names, void **slots,
	    size_t n, char *err, size_t errlen)
{
	static char last[512];
	pthread_mutex_lock(&dl_mu);
	if (*state == 0) {
		void *h = NULL;
		const char *tried = sonames[0];
		for (size_t i = 0; sonames[i] && !h; i++) h = dlopen(tried = sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *e = dlerror();
			snprintf(last, sizeof last, "%s support needs %s, which cannot be loaded: %s", what, tried, e ? e : "not found");
			*state = -1;
		} else {
			*state = 1;
			for (size_t i = 0; i < n; i++) {
				slots[i] = dlsym(h, names[i]);
				if (!slots[i]) {
					snprintf(last, sizeof last, "%s: %s lacks the function %s", what, tried, names[i]);
					*state = -1;
					break;
				}
			}
		}
	}
	int ok = *state == 1;
	pthread_mutex_unlock(&dl_mu);
	if (!ok) snprintf(err, errlen, "%s", last);
	return ok ? 0 : -1;
}
