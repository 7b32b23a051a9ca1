# throwaway-servers.sh - sourced by the scripts that start database servers
# of their own (scripts/check-datajoint*.sh, bench/dj-populate.sh,
# bench/query-dj.sh, bench/py-*.sh, bench/serve.sh). ROOT must be set.
#   tw_init TAG      WORK: a new directory /tmp/djc-TAG.XXXXXX the servers can
#                    use; on exit, every server started in it is stopped and it
#                    is removed
#   tw_start BACKEND start mysql (MariaDB) or postgresql in WORK, print its URL;
#                    fails with a message naming the server when it did not start
#   tw_stop BACKEND  stop it (before the next backend's, to keep memory down)
tw_init() {
	WORK=$(mktemp -d "/tmp/djc-$1.XXXXXX")
	chmod 755 "$WORK"   # the servers run as their own users
	trap tw_cleanup EXIT
	trap 'exit 130' INT TERM
}
tw_dir() {  # BACKEND: its server's directory in WORK and its script
	case $1 in
	mysql) echo "$WORK/my mariadb-server.sh MariaDB" ;;
	postgresql) echo "$WORK/pg pg-server.sh PostgreSQL" ;;
	*) echo "unknown backend $1" >&2; return 2 ;;
	esac
}
tw_start() {
	local d s name
	read -r d s name < <(tw_dir "$1") || return 2
	[ -n "$d" ] || return 2
	"$ROOT/scripts/$s" start "$d" || { echo "$name did not start (its log: $d/log)" >&2; return 1; }
}
tw_stop() {
	local d s name
	read -r d s name < <(tw_dir "$1")
	[ -d "$d" ] && "$ROOT/scripts/$s" stop "$d" >/dev/null 2>&1
	return 0
}
tw_cleanup() {
	tw_stop postgresql
	tw_stop mysql
	rm -rf "$WORK"
}
