/* pq_connect.c - the memory floor of a PostgreSQL client on this machine:
 * loads libpq the way djc does (dlopen, GnuTLS's implicit start skipped,
 * gssencmode=disable), connects to the URL in argv[1], runs SELECT 1 and
 * prints its own peak RSS in KiB. Whatever a djc worker peaks at above this
 * figure is djc's own. Built by bench/run.sh with -ldl only (no headers). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pq_connect URL\n");
		return 2;
	}
	setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 0);
	void *h = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "pq_connect: %s\n", dlerror());
		return 1;
	}
	typedef void *(*connect_fn)(const char *const *, const char *const *, int);
	typedef int (*status_fn)(const void *);
	typedef void *(*exec_fn)(void *, const char *);
	connect_fn connectdb_params = (connect_fn)dlsym(h, "PQconnectdbParams");
	status_fn status = (status_fn)dlsym(h, "PQstatus");
	exec_fn exec = (exec_fn)dlsym(h, "PQexec");
	status_fn result_status = (status_fn)dlsym(h, "PQresultStatus");
	if (!connectdb_params || !status || !exec || !result_status) {
		fprintf(stderr, "pq_connect: libpq lacks a function\n");
		return 1;
	}
	const char *k[] = {"dbname", "gssencmode", NULL}, *v[] = {argv[1], "disable", NULL};
	void *c = connectdb_params(k, v, 1);
	if (status(c) != 0) {
		fprintf(stderr, "pq_connect: cannot connect\n");
		return 1;
	}
	if (result_status(exec(c, "SELECT 1")) != 2) {   /* PGRES_TUPLES_OK */
		fprintf(stderr, "pq_connect: SELECT 1 failed\n");
		return 1;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%ld\n", ru.ru_maxrss);
	return 0;
}
