/* test_netfs.c - SQLite on a network file system is refused: the statfs
 * f_type table (db_netfs_name), and an open through the public API on a
 * file system the test acts out as NFS, Lustre or GPFS (db_fs_type, the
 * tests-only hook) fails with one line pointing to PostgreSQL and creates
 * nothing. Runs alone (SQLite files in /tmp), on every backend's turn. */
#include "djc.h"
#include "db/db.h"
#include "t.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The acted file systems: the database file's (statfs fails, -1, while it
 * does not exist, as the real one does) and its directory's. */
static char path[128];
static long file_type, dir_type;
static long act(const char *p)
{
	struct stat st;
	if (!strcmp(p, path)) return stat(p, &st) ? -1 : file_type;
	return dir_type;
}

/* the f_type table: network and cluster file systems by name, local ones not */
static void test_names(void)
{
	static const struct { unsigned long t; const char *name; } table[] = {
		{0x6969, "NFS"}, {0xFF534D42, "CIFS"}, {0xFE534D42, "SMB2"}, {0x517B, "SMB"},
		{0x0BD00BD0, "Lustre"}, {0x47504653, "GPFS"}, {0x00C36400, "CephFS"}, {0x19830326, "BeeGFS"},
		{0xAAD7AAEA, "PanFS"}, {0x01161970, "GFS2"}, {0x6B414653, "AFS"}, {0x01021997, "9P"},
		{0xEF53, NULL} /* ext2/3/4 */, {0x58465342, NULL} /* xfs */, {0x9123683E, NULL} /* btrfs */,
		{0x01021994, NULL} /* tmpfs */, {0x65735546, NULL} /* fuse: cannot tell */, {0, NULL},
	};
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		const char *got = db_netfs_name(table[i].t);
		if (table[i].name) CHECK_STR(got, table[i].name);
		else CHECK_MSG(got == NULL, "f_type %#lx is local, got %s", table[i].t, got);
	}
	/* f_type is a signed long on some ABIs: CIFS's magic arrives sign-extended */
	CHECK_STR(db_netfs_name((unsigned long)(long)(int)0xFF534D42), "CIFS");

}

/* opening a SQLite file on a network file system is refused, naming it */
static void test_open_refused(void)
{
	char url[160];
	snprintf(path, sizeof path, "/tmp/djc-netfs-%d.db", (int)getpid());
	snprintf(url, sizeof url, "sqlite:%s", path);
	unlink(path);
	static const struct { long t; const char *name; } acted[] = {{0x6969, "NFS"}, {0x0BD00BD0, "Lustre"}, {0x47504653, "GPFS"}};
	db_fs_type = act;
	for (size_t i = 0; i < sizeof acted / sizeof *acted; i++) {
		dir_type = acted[i].t;
		djc_conn *c = NULL;
		int rc = djc_open(&c, url, NULL);
		CHECK_MSG(rc == DJC_EINVAL, "open on acted %s: %d", acted[i].name, rc);
		const char *m = djc_error_last(c);
		char want[64];
		snprintf(want, sizeof want, "is on a network file system (%s)", acted[i].name);
		CHECK_MSG(m && strstr(m, want) && strstr(m, "PostgreSQL") && strstr(m, path) && !strchr(m, '\n'), "message: %s", m);
		djc_close(c);
		struct stat st;
		CHECK_MSG(stat(path, &st) != 0, "the file was created on acted %s", acted[i].name);
	}
	/* a local file system: opens (and creates the file), as before */
	dir_type = file_type = 0xEF53;
	djc_conn *c = NULL;
	CHECK(djc_open(&c, url, NULL) == DJC_OK);
	djc_close(c);
	/* a file that exists is judged by its own file system (a link to a
	 * mount, say), not its directory's */
	file_type = 0x6969;
	c = NULL;
	CHECK(djc_open(&c, url, NULL) == DJC_EINVAL);
	CHECK(strstr(djc_error_last(c), "(NFS)") != NULL);
	djc_close(c);
	file_type = 0xEF53;
	dir_type = 0x6969;
	c = NULL;
	CHECK(djc_open(&c, url, NULL) == DJC_OK);
	djc_close(c);
	t_unlink_sqlite(path);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_netfs", "names open_refused");
	if (t_want("names")) test_names();
	if (t_want("open_refused")) test_open_refused();
	return T_DONE("test_netfs");
}
