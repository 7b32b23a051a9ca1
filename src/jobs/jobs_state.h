/* jobs_state.h - what the jobs layer remembers per connection and table
 * (internal to src/jobs). */
#ifndef DJC_JOBS_STATE_H
#define DJC_JOBS_STATE_H
#include "table/table.h"

/* The text of one table's claims on one connection (claim.c), kept from
 * one claim to the next: it depends only on the restriction, the priority
 * bound and the batch size, which a steady worker keeps, so its claims
 * (each commit's, on the hot path) expand no template. */
typedef struct claim_text {
	char *where;           /* the restriction it was made for (NULL: none) */
	long max_priority, n;
	sb_t due, set, order, keys, info, rest, index;   /* info: claim.made + rest (claim.info) */
	pvec dp;               /* the restriction's parameters, in due */
	coldef *types;         /* of keys, then of order's columns (db_claim.types) */
	size_t ntypes;
} claim_text;

typedef struct jobs_tab {
	const table *t;
	claim_text *claims;    /* the last claim's text (owned; NULL until the first) */
	int ready;             /* jobs table known to exist on this connection */
	double lapsed_check;   /* when this connection last looked for lapsed leases (monotonic s) */
	double lapsed_due;     /* when the last job it sent back to pending from a lapse is due (monotonic s) */
	int idle;              /* its last claim found nothing: the next one peeks first (claim.peek) */
} jobs_tab;

typedef struct jobs_state {
	jobs_tab *tabs;
	size_t n;
} jobs_state;

/* The entry for t on c (created on first use; owned by c). */
jobs_tab *jobs_tab_of(djc_conn *c, const table *t);

/* A claim, built (claim.c); its text is the connection's claim_text
 * (valid until the next claim_build_init). */
typedef struct claim_build {
	table *t;
	long n;                /* how many jobs it claims at most */
	int64_t token;
	val_t sargs[7];        /* claim.set's arguments */
	db_claim due_claim;
} claim_build;
void claim_text_free(claim_text *ct);
int claim_build_init(djc_conn *c, table *t, const char *where, long max_priority, double lease, long n, claim_build *b);
void claim_build_free(claim_build *b);
/* Whether this connection should look for lapsed leases now (and note that it did). */
int claim_lapsed_due(djc_conn *c, const table *t, double lease);
/* The claimed jobs of a claim's result (caller frees). */
void claim_parse(const claim_build *b, const db_res *r, djc_job ***out, size_t *nout);
/* End the attempts of t's reserved jobs whose lease lapsed (matching where
 * and max_priority; lapsed.c): back to pending, or an error once they
 * killed jobs.max_lost workers. An error only when the look itself
 * failed. */
int jobs_lapsed(djc_conn *c, table *t, const char *where, long max_priority);
#endif
