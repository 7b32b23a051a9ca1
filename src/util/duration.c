/* duration.c - parsing and printing durations (duration.h). */
#include "duration.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int duration_parse(const char *s, double *out)
{
	*out = 0;
	if (!s || !*s) return -1;
	double total = 0;
	int parts = 0, plain = 0;
	const char *p = s;
	while (*p) {
		/* a number: decimal digits and one point, no sign, no exponent */
		const char *q = p;
		int dot = 0, digits = 0;
		while (isdigit((unsigned char)*q) || (*q == '.' && !dot)) {
			if (*q == '.') dot = 1; else digits++;
			q++;
		}
		if (!digits) return -1;
		char num[64];
		if ((size_t)(q - p) >= sizeof num) return -1;
		memcpy(num, p, (size_t)(q - p));
		num[q - p] = 0;
		errno = 0;
		double v = strtod(num, NULL);
		if (errno || !(v >= 0) || v > 1e12) return -1;
		double unit;
		switch (*q) {
		case 0: unit = 1; plain = 1; break;
		case 's': unit = 1; q++; break;
		case 'm': unit = 60; q++; break;
		case 'h': unit = 3600; q++; break;
		case 'd': unit = 86400; q++; break;
		default: return -1;
		}
		/* "90" alone is seconds; a bare number after a unit ("1h30") is not */
		if (plain && parts) return -1;
		total += v * unit;
		parts++;
		p = q;
	}
	if (!(total >= 0) || total > 1e9) return -1;
	*out = total;
	return 0;
}

const char *duration_text(double secs, char *buf, size_t n)
{
	if (!(secs >= 0)) secs = 0;
	if (secs > 1e12) secs = 1e12;
	if (secs < 60 && secs != (double)(long long)secs) {
		snprintf(buf, n, "%gs", secs);
		return buf;
	}
	long long s = (long long)(secs + 0.5);   /* no libm: callers link without -lm */
	long long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, r = s % 60;
	size_t k = 0;
	buf[0] = 0;
	if (d) k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%lldd", d);
	if (h && k < n) k += (size_t)snprintf(buf + k, n - k, "%lldh", h);
	if (m && k < n) k += (size_t)snprintf(buf + k, n - k, "%lldm", m);
	if ((r || !s) && k < n) snprintf(buf + k, n - k, "%llds", r);
	return buf;
}
