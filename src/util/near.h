/* near.h - "did you mean": the name of a list closest to a mistyped one. */
#ifndef DJC_NEAR_H
#define DJC_NEAR_H
#include <stddef.h>

/* The candidate (of cand[0..n), NULL entries skipped) word was most likely
 * meant as: at most one edit away from a name of up to 4 characters, two
 * from a longer one (insertions, deletions, substitutions, swaps of two
 * neighbours; a difference of case counts as an edit), or the one name
 * word is a prefix of; NULL when none is close. */
const char *near_name(const char *word, const char *const *cand, size_t n);
/* Optimal string alignment distance of s and t: insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1. Names are short
 * (< 64); longer ones are never near ((size_t)-1). */
size_t near_distance(const char *s, const char *t);

#endif
