/* jobs_state.h - what the jobs layer remembers per connection and table
 * (internal to src/jobs). */
#ifndef DJC_JOBS_STATE_H
#define DJC_JOBS_STATE_H
#include "table/table.h"

typedef struct jobs_tab {
	const table *t;
	int ready;             /* jobs table known to exist on this connection */
	double lapsed_check;   /* when this connection last looked for lapsed leases (monotonic s) */
} jobs_tab;

typedef struct jobs_state {
	jobs_tab *tabs;
	size_t n;
} jobs_state;

/* The entry for t on c (created on first use; owned by c). */
jobs_tab *jobs_tab_of(djc_conn *c, const table *t);
#endif
