/* test_fuzz_regress.c - replays every input the fuzzers ever crashed on
 * (tests/fuzz/regress/<target>-<name>) and the seed corpora
 * (tests/fuzz/corpus/<target>/) through the same entry points as the
 * libFuzzer targets (tests/fuzz/fuzz_common.h). Under the sanitizer build a
 * regression aborts the test; in the plain build it must at least not crash.
 * Needs no database. */
#include "../fuzz/fuzz_common.h"
#include "t.h"
#include <dirent.h>
#include <stdio.h>

static int (*entry(const char *target))(const uint8_t *, size_t)
{
	if (!strcmp(target, "definition")) return djcfz_definition;
	if (!strcmp(target, "pipeline")) return djcfz_pipeline;
	if (!strcmp(target, "row")) return djcfz_row;
	return NULL;
}

static int replay(const char *path, int (*fn)(const uint8_t *, size_t))
{
	FILE *f = fopen(path, "rb");
	if (!f) return -1;
	size_t cap = 4096, n = 0, r;
	uint8_t *d = malloc(cap);
	while ((r = fread(d + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) d = realloc(d, cap *= 2);
	}
	fclose(f);
	int rc = fn(d, n);
	free(d);
	return rc;
}

static size_t replay_dir(const char *dir, const char *only_target)
{
	DIR *dp = opendir(dir);
	if (!dp) return 0;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.') continue;
		char target[32] = "";
		if (only_target) snprintf(target, sizeof target, "%s", only_target);
		else {
			const char *dash = strchr(e->d_name, '-');
			if (!dash || (size_t)(dash - e->d_name) >= sizeof target) continue;
			memcpy(target, e->d_name, (size_t)(dash - e->d_name));
			target[dash - e->d_name] = 0;
		}
		int (*fn)(const uint8_t *, size_t) = entry(target);
		CHECK_MSG(fn != NULL, "%s/%s: no fuzz target '%s'", dir, e->d_name, target);
		if (!fn) continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		CHECK_MSG(replay(path, fn) == 0, "%s", path);
		n++;
	}
	closedir(dp);
	return n;
}

/* root: the repository root (DJC_ROOT, else the working directory) */
static const char *root(void)
{
	const char *r = getenv("DJC_ROOT");
	return r && *r ? r : ".";
}

/* the saved inputs that once crashed a fuzz target */
static void test_regress(void)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/tests/fuzz/regress", root());
	size_t n = replay_dir(dir, NULL);
	CHECK_MSG(n >= 2, "found only %zu regression inputs in %s (run from the repository root)", n, dir);
}

/* every target's seed corpus */
static void test_corpus(void)
{
	char dir[4096];
	static const char *targets[] = {"definition", "pipeline", "row"};
	for (int i = 0; i < 3; i++) {
		snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", root(), targets[i]);
		size_t k = replay_dir(dir, targets[i]);
		CHECK_MSG(k >= 1, "no seed inputs in %s", dir);
	}
}

/* hand-made cases the fuzzers reach slowly */
static void test_hand_made(void)
{
	static const char *defs[] = {
		"A (computed)\n  -> B\n  ---\n",
		"A (manual)\n  a : int32\n  ---\nB (computed)\n  -> A\n  ---\n  key_source = {\"zz\": 1}\n",
		"A (manual)\n  a : int32\n  ---\nB (computed)\n  -> A\n  ---\n  key_source = [{\"a\": 1}, 3]\n",
		"A (manual)\n  a : enum('x', 'x')\n  ---\n",
		"A (manual)\n  a : enum(\n  ---\n",
		"A (manual)\n  a = 'unterminated : varchar(3)\n  ---\n",
		"A.B (part)\n  a : int8\n  ---\n",
		"\xff\xfe (manual)\n",
		"",
	};
	for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) {
		CHECK(djcfz_definition((const uint8_t *)defs[i], strlen(defs[i])) == 0);
		CHECK(djcfz_pipeline((const uint8_t *)defs[i], strlen(defs[i])) == 0);
	}
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_fuzz_regress", "regress corpus hand_made");
	if (t_want("regress")) test_regress();
	if (t_want("corpus")) test_corpus();
	if (t_want("hand_made")) test_hand_made();
	return T_DONE("test_fuzz_regress");
}
