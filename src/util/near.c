/* near.c - "did you mean" for names: the library's messages about unknown
 * tables and attributes, the configuration's about unknown settings (with
 * its own bounds) and the CLI's about commands and options (cli/args.c;
 * the Makefile links this file into djc). */
#include "near.h"
#include <string.h>

size_t near_distance(const char *s, const char *t)
{
	size_t n = strlen(s), m = strlen(t);
	if (n > 63 || m > 63) return (size_t)-1;
	size_t d[64][64];
	for (size_t i = 0; i <= n; i++) d[i][0] = i;
	for (size_t j = 0; j <= m; j++) d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + (s[i - 1] != t[j - 1]) < best) best = d[i - 1][j - 1] + (s[i - 1] != t[j - 1]);
			if (i > 1 && j > 1 && s[i - 1] == t[j - 2] && s[i - 2] == t[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

const char *near_name(const char *word, const char *const *cand, size_t n)
{
	const char *best = NULL, *prefix_of = NULL;
	size_t bestd = (size_t)-1, nprefix = 0, wl = strlen(word);
	for (size_t i = 0; i < n; i++) {
		if (!cand[i]) continue;
		size_t d = near_distance(word, cand[i]);
		size_t limit = strlen(cand[i]) <= 4 ? 1 : 2;
		if (d && d <= limit && d < wl && d < bestd) { best = cand[i]; bestd = d; }
		if (wl >= 2 && !strncmp(cand[i], word, wl) && strlen(cand[i]) > wl) { prefix_of = cand[i]; nprefix++; }
	}
	if (best) return best;
	return nprefix == 1 ? prefix_of : NULL;
}
