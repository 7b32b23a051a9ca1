#!/bin/sh
# pg-server.sh - a throwaway PostgreSQL server for tests and benchmarks.
#
#   scripts/pg-server.sh start DIR     initdb + start; prints the URL (also in DIR/url)
#   scripts/pg-server.sh stop DIR      stop and remove DIR
#   scripts/pg-server.sh restart DIR   restart on the same port (server-restart tests)
#   scripts/pg-server.sh psql DIR ...  run psql against it
#
# The cluster lives in DIR/data, its log in DIR/log, its unix socket in DIR.
# Trust authentication, 127.0.0.1 only, superuser djc, database djc; a
# second superuser djc_scram with password djc-scram-pw logs in with
# SCRAM-SHA-256 (postgresql://djc_scram:djc-scram-pw@...). Run as
# root, the server runs as the system user djcdb (created when missing).
# Durability is off for speed (fsync, synchronous_commit, full_page_writes);
# PG_DURABLE=1 turns it back on for benchmarks.
# DJC_LISTEN_EXTRA="10.77.1.1 10.77.2.1" (start and restart) also listens on
# those addresses and trusts clients of their /24 (tests/stress/run.sh).
set -eu

LISTEN_EXTRA=$(printf '%s' "${DJC_LISTEN_EXTRA:-}" | tr ',' ' ')

PGUSER_OS=djcdb

die() { echo "pg-server: $*" >&2; exit 1; }

usage() { die "usage: $0 start|stop|restart|psql DIR [psql args]"; }

# The newest installed server version's binaries (pg_config may be absent).
find_bin() {
	best=""
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/pg_ctl" ] || continue
		best="$best$(basename "$(dirname "$d")") $d
"
	done
	[ -n "$best" ] || die "no PostgreSQL server found in /usr/lib/postgresql/*/bin (install the postgresql package)"
	printf '%s' "$best" | sort -n -k1,1 | tail -n 1 | cut -d' ' -f2-
}

# Run a command as the cluster's owner: djcdb when we are root, else ourselves.
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		if command -v runuser >/dev/null 2>&1; then
			runuser -u "$PGUSER_OS" -- "$@"
		else
			q=""
			for a in "$@"; do
				q="$q '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
			done
			su -s /bin/sh "$PGUSER_OS" -c "$q"
		fi
	else
		"$@"
	fi
}

port_busy() {
	if command -v ss >/dev/null 2>&1; then
		ss -ltnH 2>/dev/null | awk '{print $4}' | grep -Eq "[:.]$1\$"
	else
		# no ss: try to connect (bash's /dev/tcp); a listener answers
		command -v bash >/dev/null 2>&1 && bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
	fi
}

pick_port() {
	i=0
	while [ $i -lt 200 ]; do
		# random in 20000..32767 so parallel starts rarely collide, and below
		# the kernel's ephemeral ports (32768-60999): a client connection
		# holding the port as its local end would make the bind fail
		r=$(od -An -N4 -tu4 /dev/urandom 2>/dev/null | tr -d ' ')
		[ -n "$r" ] || r=$(( $$ * 7919 + i * 104729 ))
		p=$(( r % 12768 + 20000 ))
		if ! port_busy "$p"; then echo "$p"; return 0; fi
		i=$((i + 1))
	done
	die "no free TCP port found on 127.0.0.1"
}

log_tail() {
	if [ -f "$DIR/log" ]; then
		echo "pg-server: last lines of $DIR/log:" >&2
		tail -n 15 "$DIR/log" >&2
	fi
}

abs_dir() {
	case "$1" in
	/*) printf '%s' "$1" ;;
	*) printf '%s/%s' "$(pwd)" "$1" ;;
	esac
}

port_of() {
	[ -f "$DIR/port" ] || die "$DIR has no server (no $DIR/port; was it started with pg-server.sh start?)"
	cat "$DIR/port"
}

# Write the settings that pg_ctl start/restart use (postgresql.auto.conf is
# left to ALTER SYSTEM; ours go in a file included from postgresql.conf).
write_conf() {
	if [ "${PG_DURABLE:-0}" = 1 ]; then dur=on; else dur=off; fi
	as_owner sh -c 'cat > "$1"' sh "$DIR/data/djc.conf" <<EOF
port = $1
listen_addresses = '127.0.0.1$(for a in $LISTEN_EXTRA; do printf ',%s' "$a"; done)'
unix_socket_directories = '$DIR'
max_connections = 300
shared_buffers = 128MB
fsync = $dur
synchronous_commit = $dur
full_page_writes = $dur
logging_collector = off
log_timezone = 'UTC'
timezone = 'UTC'
EOF
}

cmd_start() {
	BIN=$(find_bin)
	if [ -e "$DIR/data/PG_VERSION" ]; then
		# a cluster from an earlier run: reuse it (running or not)
		[ -f "$DIR/port" ] || die "$DIR holds a cluster without a port file; stop (remove) it first"
		if ! (cd "$DIR" && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1); then
			cmd_restart
		fi
		cat "$DIR/url"
		return 0
	fi
	mkdir -p "$DIR" || die "cannot create $DIR"
	DIR=$(cd "$DIR" && pwd -P)
	if [ "$(id -u)" -eq 0 ]; then
		if ! id "$PGUSER_OS" >/dev/null 2>&1; then
			useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$PGUSER_OS" 2>/dev/null ||
				id "$PGUSER_OS" >/dev/null 2>&1 || die "cannot create system user $PGUSER_OS"
		fi
		chown "$PGUSER_OS" "$DIR"
		as_owner test -w "$DIR" ||
			die "user $PGUSER_OS cannot write $DIR (a parent directory is not searchable; use e.g. /tmp/...)"
	fi
	chmod 700 "$DIR"
	cd "$DIR"   # initdb and postgres complain about an unreadable cwd
	: > "$DIR/log"
	if [ "$(id -u)" -eq 0 ]; then chown "$PGUSER_OS" "$DIR/log"; fi
	if ! as_owner "$BIN/initdb" -D "$DIR/data" -U djc -E UTF8 --locale=C.UTF-8 \
		--auth-local=trust --auth-host=reject >>"$DIR/log" 2>&1; then
		# older initdb or a system without C.UTF-8: plain C locale
		rm -rf "$DIR/data"
		as_owner "$BIN/initdb" -D "$DIR/data" -U djc -E UTF8 --locale=C \
			--auth-local=trust --auth-host=reject >>"$DIR/log" 2>&1 ||
			{ log_tail; die "initdb failed in $DIR/data"; }
	fi
	# trust for TCP from 127.0.0.1 only; the unix socket lives in the private DIR.
	# The role djc_scram must give its password (SCRAM-SHA-256, the server's
	# default method since PostgreSQL 14): tests of password handling and
	# the benchmark's memory figure with password authentication use it.
	as_owner sh -c 'printf "%s\n" \
		"local all all trust" \
		"host all djc_scram 127.0.0.1/32 scram-sha-256" \
		"host all all 127.0.0.1/32 trust" > "$1"' sh "$DIR/data/pg_hba.conf"
	for a in $LISTEN_EXTRA; do
		as_owner sh -c 'echo "host all all $2.0/24 trust" >> "$1"' sh "$DIR/data/pg_hba.conf" "${a%.*}"
	done
	as_owner sh -c 'echo "include = '"'"'djc.conf'"'"'" >> "$1"' sh "$DIR/data/postgresql.conf"
	tries=0
	while :; do
		PORT=$(pick_port)
		write_conf "$PORT"
		if as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w -t 60 start >/dev/null 2>&1; then
			break
		fi
		tries=$((tries + 1))
		# lost a race for the port? try another; otherwise report
		if [ $tries -ge 5 ] || ! grep -q "could not bind\|Address already in use" "$DIR/log"; then
			log_tail
			die "PostgreSQL did not start (see $DIR/log)"
		fi
	done
	echo "$PORT" > "$DIR/port"
	if ! "$BIN/psql" -X -q -h "$DIR" -p "$PORT" -U djc -d postgres -v ON_ERROR_STOP=1 \
		-c "CREATE DATABASE djc" \
		-c "SET password_encryption = 'scram-sha-256'" \
		-c "CREATE ROLE djc_scram LOGIN SUPERUSER PASSWORD 'djc-scram-pw'" >>"$DIR/log" 2>&1; then
		log_tail
		as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
		die "cannot create database djc"
	fi
	URL="postgresql://djc@127.0.0.1:$PORT/djc"
	echo "$URL" > "$DIR/url"
	echo "$URL"
}

cmd_stop() {
	[ -d "$DIR" ] || return 0
	# refuse to delete anything that does not look like ours
	if [ ! -e "$DIR/data/PG_VERSION" ] && [ ! -e "$DIR/url" ] && [ ! -e "$DIR/port" ]; then
		[ -z "$(ls -A "$DIR" 2>/dev/null)" ] && { rmdir "$DIR"; return 0; }
		[ -f "$DIR/log" ] && [ "$(ls -A "$DIR" | grep -v '^log$')" = "" ] && { rm -rf "$DIR"; return 0; }
		die "$DIR does not look like a pg-server.sh directory; not removing it"
	fi
	if [ -f "$DIR/data/postmaster.pid" ]; then
		BIN=$(find_bin)
		cd "$DIR"
		as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
		if [ -f "$DIR/data/postmaster.pid" ]; then
			pid=$(head -n 1 "$DIR/data/postmaster.pid" 2>/dev/null || true)
			if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi
		fi
	fi
	cd /
	rm -rf "$DIR"
}

cmd_restart() {
	BIN=$(find_bin)
	[ -e "$DIR/data/PG_VERSION" ] || die "$DIR holds no cluster"
	PORT=$(port_of)
	cd "$DIR"
	if [ -f "$DIR/data/postmaster.pid" ]; then
		as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
	fi
	write_conf "$PORT"
	if ! as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w -t 60 start >/dev/null 2>&1; then
		log_tail
		die "PostgreSQL did not restart on port $PORT (see $DIR/log)"
	fi
}

cmd_psql() {
	BIN=$(find_bin)
	PORT=$(port_of)
	exec "$BIN/psql" -X -h "$DIR" -p "$PORT" -U djc -d djc "$@"
}

[ $# -ge 2 ] || usage
CMD=$1
DIR=$(abs_dir "$2")
shift 2
case "$CMD" in
start) cmd_start ;;
stop) cmd_stop ;;
restart) cmd_restart ;;
psql) cmd_psql "$@" ;;
*) usage ;;
esac
