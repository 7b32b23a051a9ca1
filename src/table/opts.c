/* opts.c - the one check of a public options struct's version field
 * (every djc_*_options has one: djc.h), with one message format. */
#include "table/opts.h"
#include "table/table.h"

int opts_version(djc_conn *c, const char *what, int version, int oldest, int current, const char *init)
{
	if (version >= oldest && version <= current) return DJC_OK;
	if (oldest == current)
		return conn_fail(c, DJC_EINVAL, "%s options version %d is not %d (use %s)", what, version, current, init);
	return conn_fail(c, DJC_EINVAL, "%s options version %d is not %d to %d (use %s)", what, version, oldest, current,
			 init);
}
