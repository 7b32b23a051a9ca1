/* commands.h - the table of djc's commands, one row each, in the order
 * `djc --help` lists them: CLI_COMMAND(name, function, synopsis, summary).
 * A subcommand's name is "group sub" (e.g. "jobs refresh"); `djc group X`
 * runs the group's own row when X is not one of its subcommands. Included
 * by cli.h (declarations) and main.c (the table); no include guard. */
CLI_COMMAND("declare", cmd_declare, "declare PIPELINE_FILE", "declare the tables of a pipeline (idempotent)")
CLI_COMMAND("tables", cmd_tables, "tables", "list declared tables (--json: with tiers, keys, parents)")
CLI_COMMAND("insert", cmd_insert, "insert TABLE [FILE]", "insert rows: JSON Lines, a JSON array or CSV (stdin by default)")
CLI_COMMAND("fetch", cmd_fetch, "fetch TABLE", "print rows (--where JSON, --format table|json|csv)")
CLI_COMMAND("delete", cmd_delete, "delete TABLE", "delete rows and what depends on them (--where JSON)")
CLI_COMMAND("drop", cmd_drop, "drop TABLE", "drop a table with what depends on it")
CLI_COMMAND("alter", cmd_alter, "alter PIPELINE_FILE", "change secondary attributes of declared tables")
CLI_COMMAND("populate", cmd_populate, "populate TABLE", "call make for every missing key")
CLI_COMMAND("worker", cmd_worker, "worker [TABLE...]", "serve the computed tables for as long as work may appear")
CLI_COMMAND("progress", cmd_progress, "progress [TABLE]", "remaining and total keys (every table without TABLE; --watch)")
CLI_COMMAND("diagram", cmd_diagram, "diagram", "the pipeline as a graph (--format dot|svg)")
CLI_COMMAND("jobs", cmd_jobs, "jobs TABLE", "the jobs table: counts, rows (--status, --where), one job (--key)")
CLI_COMMAND("jobs refresh", cmd_jobs_refresh, "jobs refresh TABLE", "add new keys as pending, remove stale jobs")
CLI_COMMAND("jobs clear", cmd_jobs_clear, "jobs clear TABLE", "delete jobs (--status S, --where JSON): errors to retry")
CLI_COMMAND("jobs ignore", cmd_jobs_ignore, "jobs ignore TABLE KEY_JSON", "never make this key (or --where JSON)")
CLI_COMMAND("jobs cancel", cmd_jobs_cancel, "jobs cancel TABLE", "stop pending and running jobs (--where JSON): ignore")
CLI_COMMAND("jobs set", cmd_jobs_set, "jobs set TABLE", "re-prioritise or reschedule pending jobs (--where JSON)")
CLI_COMMAND("config", cmd_config, "config", "effective settings and where each came from")
CLI_COMMAND("help", cmd_help, "help [COMMAND]", "this list, or a command's options")
CLI_COMMAND("adopt", cmd_adopt, "adopt SCHEMA...", "adopt DataJoint schemas (--overlay FILE: their makes; --dry-run; --accept-changes)")
CLI_COMMAND("unadopt", cmd_unadopt, "unadopt SCHEMA", "forget an adopted DataJoint schema and drop djc's tables of it")
