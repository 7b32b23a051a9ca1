/* cli.h - what the djc command's files share (main.c). */
#ifndef DJC_CLI_H
#define DJC_CLI_H
#include "djc.h"

/* One line "djc: ..." on stderr, exit 2. */
void cli_die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* The message of rc on stderr (nothing for DJC_OK); the exit status for it. */
int cli_exit_for(int rc, djc_conn *c);
/* Connect as --db/--schema say, or exit. */
djc_conn *cli_connect(void);
/* Print text and return 1 when argv asks for --help. */
int cli_want_help(int argc, char **argv, const char *text);
/* Exit 2 unless v is JSON. */
void cli_check_json(const char *opt, const char *v);

int cmd_drop(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_alter(int argc, char **argv);
#endif
