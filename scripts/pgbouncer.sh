#!/bin/sh
# pgbouncer.sh - a throwaway pgbouncer in transaction pooling mode in front of
# a PostgreSQL server (scripts/pg-server.sh), for tests and stress runs.
#
#   scripts/pgbouncer.sh start DIR PG_URL   start; prints the URL (also in DIR/url)
#   scripts/pgbouncer.sh stop DIR           stop and remove DIR
#   scripts/pgbouncer.sh admin DIR CMD      run CMD on the admin console (SHOW CLIENTS, ...)
#
# PG_URL is the server's, postgresql://user@host:port/db as pg-server.sh
# prints it. The pooler listens on 127.0.0.1 (and on DJC_LISTEN_EXTRA's
# addresses, trusting their /24, as pg-server.sh does), serves every
# database of that server (pool_mode = transaction: a server connection is
# lent for one transaction at a time), and authenticates as the server
# does: djc by trust, djc_scram with SCRAM-SHA-256 and its password.
# PGB_POOL_SIZE (default 20) server connections at most per database and
# user, PGB_MAX_CLIENTS (default 2000) client connections. Its log is
# DIR/log. Run as root, it runs as the system user djcdb (pgbouncer refuses
# to run as root), created when missing.
set -eu

OWNER=djcdb
POOL=${PGB_POOL_SIZE:-20}
MAXC=${PGB_MAX_CLIENTS:-2000}
LISTEN_EXTRA=$(printf '%s' "${DJC_LISTEN_EXTRA:-}" | tr ',' ' ')

die() { echo "pgbouncer.sh: $*" >&2; exit 1; }
usage() { die "usage: $0 start DIR PG_URL | stop DIR | admin DIR COMMAND"; }

find_prog() {
	for d in /usr/sbin /usr/bin /sbin /bin /usr/local/sbin /usr/local/bin; do
		[ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	command -v "$1" 2>/dev/null || return 1
}

as_owner() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u "$OWNER" -- "$@"; else "$@"; fi
}

port_busy() { ss -ltnH 2>/dev/null | awk '{print $4}' | grep -Eq "[:.]$1\$"; }

pick_port() {
	i=0
	while [ $i -lt 200 ]; do
		r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
		p=$(( r % 12768 + 20000 ))   # below the ephemeral ports (32768-60999)
		if ! port_busy "$p"; then echo "$p"; return 0; fi
		i=$((i + 1))
	done
	die "no free TCP port found on 127.0.0.1"
}

abs_dir() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$(pwd)" "$1" ;; esac; }

cmd_start() {
	PGURL=$1
	BIN=$(find_prog pgbouncer) || die "no pgbouncer program (install the pgbouncer package; scripts/deps.txt)"
	rest=${PGURL#postgresql://}
	rest=${rest#*@}
	hostport=${rest%%/*}
	PGHOST=${hostport%:*}
	PGPORT=${hostport##*:}
	DB=${rest#*/}
	[ -n "$PGHOST" ] && [ -n "$PGPORT" ] && [ "$PGPORT" != "$hostport" ] || die "cannot read host and port from '$PGURL'"
	[ -e "$DIR/url" ] && { cat "$DIR/url"; return 0; }
	mkdir -p "$DIR" || die "cannot create $DIR"
	DIR=$(cd "$DIR" && pwd -P)
	if [ "$(id -u)" -eq 0 ]; then
		if ! id "$OWNER" >/dev/null 2>&1; then
			useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$OWNER" 2>/dev/null ||
				id "$OWNER" >/dev/null 2>&1 || die "cannot create system user $OWNER"
		fi
		chown "$OWNER" "$DIR"
		as_owner test -w "$DIR" || die "user $OWNER cannot write $DIR (use e.g. /tmp/...)"
	fi
	chmod 700 "$DIR"
	# the same logins as the server: djc by trust, djc_scram by SCRAM (the
	# pooler logs in to the server with the password it holds here)
	printf '"djc" ""\n"djc_scram" "djc-scram-pw"\n' > "$DIR/users.txt"
	{
		# md5 on the client hop: a wrong password is then "password authentication
		# failed", as the server says it (pgbouncer words a failed SCRAM exchange
		# "SASL authentication failed"); the pooler logs in to the server with
		# SCRAM-SHA-256, using the password it holds
		echo "host all djc_scram 127.0.0.1/32 md5"
		echo "host all all 127.0.0.1/32 trust"
		for a in $LISTEN_EXTRA; do echo "host all all ${a%.*}.0/24 trust"; done
	} > "$DIR/hba.conf"
	PORT=$(pick_port)
	cat > "$DIR/pgbouncer.ini" <<EOF
[databases]
* = host=$PGHOST port=$PGPORT

[pgbouncer]
listen_addr = 127.0.0.1$(for a in $LISTEN_EXTRA; do printf ',%s' "$a"; done)
listen_port = $PORT
unix_socket_dir =
auth_type = hba
auth_hba_file = $DIR/hba.conf
auth_file = $DIR/users.txt
pool_mode = transaction
max_client_conn = $MAXC
default_pool_size = $POOL
max_db_connections = $POOL
reserve_pool_size = 0
admin_users = djc
stats_users = djc
logfile = $DIR/log
pidfile = $DIR/pid
log_connections = 0
log_disconnections = 0
EOF
	if [ "$(id -u)" -eq 0 ]; then chown "$OWNER" "$DIR"/*; fi
	# a file descriptor per client: raise the limit for big runs (in the
	# pooler's own shell: runuser may reset limits)
	ulimit -n $((MAXC + 200)) 2>/dev/null || true
	(cd "$DIR" && as_owner sh -c 'ulimit -n "$1" 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$2" -d -q "$3"' \
		sh $((MAXC + 200)) "$BIN" "$DIR/pgbouncer.ini") >>"$DIR/start.log" 2>&1 ||
		{ tail -n 15 "$DIR/log" "$DIR/start.log" >&2 2>/dev/null; die "pgbouncer did not start"; }
	i=0
	while ! port_busy "$PORT"; do
		i=$((i + 1))
		[ $i -lt 200 ] || { tail -n 15 "$DIR/log" >&2 2>/dev/null; die "pgbouncer does not listen on port $PORT"; }
		sleep 0.05
	done
	URL="postgresql://djc@127.0.0.1:$PORT/$DB"
	echo "$PORT" > "$DIR/port"
	echo "$URL" > "$DIR/url"
	echo "$URL"
}

cmd_stop() {
	[ -d "$DIR" ] || return 0
	[ -e "$DIR/pgbouncer.ini" ] || [ -z "$(ls -A "$DIR" 2>/dev/null)" ] || die "$DIR does not look like a pgbouncer.sh directory; not removing it"
	if [ -f "$DIR/pid" ]; then
		pid=$(cat "$DIR/pid" 2>/dev/null || true)
		if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
			i=0
			while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	cd /
	rm -rf "$DIR"
}

cmd_admin() {
	[ -f "$DIR/port" ] || die "$DIR has no pgbouncer (no $DIR/port)"
	exec psql -X -qAt -h 127.0.0.1 -p "$(cat "$DIR/port")" -U djc -d pgbouncer -c "$1"
}

[ $# -ge 2 ] || usage
CMD=$1
DIR=$(abs_dir "$2")
shift 2
case "$CMD" in
start) [ $# = 1 ] || usage; cmd_start "$1" ;;
stop) cmd_stop ;;
admin) [ $# = 1 ] || usage; cmd_admin "$1" ;;
*) usage ;;
esac
