/* tx.c - transactions retried on the database's transient failures
 * (table.h, conn_tx). */
#include "table.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* A random factor in [0.5, 1.5): concurrent retriers do not collide again. */
static double jitter(void)
{
	unsigned short r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r) r = (unsigned short)clock();
	return 0.5 + (double)r / 65536.0;
}

static void nap(double secs)
{
	struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
	while (nanosleep(&ts, &ts) && ts.tv_nsec) {}
}

int conn_retry(djc_conn *c, int rc, int in_commit, int flags, int *attempt)
{
	/* a deadlock or the like rolled the whole transaction back; so did a
	 * connection lost before COMMIT. A lost COMMIT may have taken effect:
	 * only an idempotent transaction may run again. */
	int retry = rc == DJC_EBUSY || (rc == DJC_ECONN && (!in_commit || (flags & TX_IDEMPOTENT)));
	if (!retry) return 0;
	if (++*attempt >= TX_TRIES) {
		char msg[sizeof c->err];
		snprintf(msg, sizeof msg, "%s", c->err);
		conn_fail(c, rc, "%s (gave up after %d tries)", msg, *attempt);
		return 0;
	}
	double delay = 0.01 * (double)(1 << (*attempt - 1 < 7 ? *attempt - 1 : 7));
	nap((delay > 1.0 ? 1.0 : delay) * jitter());
	return 1;
}

int conn_tx(djc_conn *c, const char *what, int flags, tx_body body, void *arg)
{
	int attempt = 0;
	for (;;) {
		int in_commit = 0;
		int rc = db_begin(c->db);
		if (rc) rc = conn_dbfail(c, rc, what);
		else if ((rc = body(c, arg)) == DJC_OK) {
			in_commit = 1;
			if ((rc = db_commit(c->db))) rc = conn_dbfail(c, rc, what);
		}
		if (rc == DJC_OK) return DJC_OK;
		db_rollback(c->db);
		if (!conn_retry(c, rc, in_commit, flags, &attempt)) return rc;
	}
}
