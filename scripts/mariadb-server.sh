#!/usr/bin/env bash
# mariadb-server.sh - a throwaway MariaDB server for tests and benchmarks.
#
#   mariadb-server.sh start DIR      create DIR, initialise a data directory,
#                                    start mariadbd on a free 127.0.0.1 port and
#                                    print its URL (also written to DIR/url):
#                                      mysql://djc:djc@127.0.0.1:PORT/djc
#   mariadb-server.sh stop DIR       shut it down and remove DIR
#   mariadb-server.sh restart DIR    shut it down and start it again on the same
#                                    port with the same data (server-restart tests)
#   mariadb-server.sh client DIR [ARGS...]
#                                    the mariadb client as root over the socket
#
# Runs as root (the server drops to the `mysql` system user that Debian's
# mariadb-server package creates) or as an ordinary user (the server runs as
# that user). No configuration file is read (--no-defaults). The server is
# tuned for tests: innodb_flush_log_at_trx_commit=2 unless MARIADB_DURABLE=1.
# Diagnostics go to stderr; stdout carries only the URL.
# DJC_LISTEN_EXTRA="10.77.1.1 10.77.2.1" (start and restart) also binds those
# addresses (tests/stress/run.sh); the djc user may connect from anywhere.
# MARIADB_OPTS="--thread-handling=pool-of-threads" (start) adds server
# options (tests/stress/scale.sh: a thousand connections).
set -euo pipefail

MARKER=.djc-mariadb
# mariadbd lives in /usr/sbin, which an ordinary user's PATH may lack; the
# directories are added only then, so that under scripts/run-tests.sh (whose
# PATH offers only the programs of scripts/deps.txt) an undeclared program
# is not found here either
command -v mariadbd >/dev/null 2>&1 || command -v mysqld >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "mariadb-server.sh: $*" >&2; exit 1; }

usage() {
	echo "usage: $0 start|stop|restart DIR | client DIR [mariadb args...]" >&2
	exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
case $dir in
/*) ;;
*) dir=$PWD/$dir ;;
esac
dir=${dir%/}
if [ -z "$dir" ] || [ "$dir" = / ]; then die "refusing to use '/' as the server directory"; fi

find_bin() {
	local b
	for b in "$@"; do
		if command -v "$b" >/dev/null 2>&1; then command -v "$b"; return 0; fi
	done
	return 1
}

MARIADBD=$(find_bin mariadbd mysqld) || die "mariadbd not found (install the mariadb-server package)"
INSTALL_DB=$(find_bin mariadb-install-db mysql_install_db) || die "mariadb-install-db not found (install mariadb-server)"
ADMIN=$(find_bin mariadb-admin mysqladmin) || die "mariadb-admin not found (install mariadb-client)"
CLIENT=$(find_bin mariadb mysql) || die "the mariadb client was not found (install mariadb-client)"

if [ "$(id -u)" -eq 0 ]; then
	RUN_USER=mysql
	getent passwd mysql >/dev/null || die "the 'mysql' system user does not exist (install mariadb-server)"
else
	RUN_USER=$(id -un)
fi

admin() { "$ADMIN" --no-defaults -uroot --socket="$dir/sock" --connect-timeout=2 "$@"; }
sql() { "$CLIENT" --no-defaults -uroot --socket="$dir/sock" --batch --skip-column-names; }

server_pid() {
	local pid
	[ -f "$dir/pid" ] || return 1
	pid=$(cat "$dir/pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# 0 if something accepts TCP connections on 127.0.0.1:$1.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))   # below the ephemeral ports (32768-60999)
		port_busy "$p" || { echo "$p"; return 0; }
	done
	die "cannot find a free TCP port on 127.0.0.1"
}

# Start mariadbd on port $1 and wait until it answers. Returns 0 when up,
# 1 when the port was taken (the caller may retry), dies otherwise.
launch() {
	local port=$1 flush=2 pid
	[ "${MARIADB_DURABLE:-0}" = 1 ] && flush=1
	rm -f "$dir/pid" "$dir/sock"
	: >>"$dir/log"
	local mark
	mark=$(wc -l <"$dir/log")
	local user_opt=()
	[ "$(id -u)" -eq 0 ] && user_opt=(--user=mysql)
	# setsid + closed stdio: the server must not hold the caller's stdout
	# (start is used as URL=$(mariadb-server.sh start DIR)). Without
	# --log-error the error log goes to stderr, i.e. DIR/log (mariadbd would
	# turn --log-error=DIR/log into DIR/log.err).
	setsid "$MARIADBD" --no-defaults \
		--datadir="$dir/data" \
		--port="$port" \
		--bind-address="127.0.0.1$(for a in $(printf '%s' "${DJC_LISTEN_EXTRA:-}" | tr ',' ' '); do printf ',%s' "$a"; done)" \
		--socket="$dir/sock" \
		--pid-file="$dir/pid" \
		--tmpdir="$dir/tmp" \
		"${user_opt[@]}" \
		--max-connections=300 \
		--max-prepared-stmt-count=200000 \
		--max-allowed-packet=1G \
		--innodb-flush-log-at-trx-commit="$flush" \
		--innodb-buffer-pool-size=128M \
		--character-set-server=utf8mb4 \
		--collation-server=utf8mb4_bin \
		--skip-name-resolve \
		--skip-log-bin \
		${MARIADB_OPTS:-} \
		</dev/null >>"$dir/log" 2>&1 &
	local child=$!
	for _ in $(seq 1 600); do   # up to 60 s
		if admin ping >/dev/null 2>&1; then
			echo "$port" >"$dir/port"
			return 0
		fi
		if ! kill -0 "$child" 2>/dev/null; then
			wait "$child" 2>/dev/null || true
			if tail -n +"$((mark + 1))" "$dir/log" | grep -qiE 'bind on tcp/ip port|address already in use'; then
				return 1
			fi
			echo "mariadb-server.sh: mariadbd exited during startup; the end of $dir/log:" >&2
			tail -n 20 "$dir/log" >&2
			exit 1
		fi
		sleep 0.1
	done
	echo "mariadb-server.sh: mariadbd did not answer within 60 s; the end of $dir/log:" >&2
	tail -n 20 "$dir/log" >&2
	pid=$(server_pid) && kill -KILL "$pid" 2>/dev/null
	kill -KILL "$child" 2>/dev/null || true
	exit 1
}

shutdown_server() {
	local pid
	pid=$(server_pid) || pid=""
	admin shutdown >/dev/null 2>&1 || true
	[ -n "$pid" ] || return 0
	for _ in $(seq 1 300); do   # up to 30 s for a clean shutdown
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "mariadb-server.sh: mariadbd (pid $pid) did not shut down; killing it" >&2
	kill -TERM "$pid" 2>/dev/null || true
	sleep 2
	kill -KILL "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
}

do_start() {
	if [ -e "$dir" ]; then
		if [ -e "$dir/$MARKER" ]; then
			# a leftover of an earlier run: stop it and start afresh
			shutdown_server
			rm -rf "$dir"
		elif [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
			die "$dir exists and is not empty; refusing to use it"
		fi
	fi
	mkdir -p "$dir"
	: >"$dir/$MARKER"
	mkdir -p "$dir/data" "$dir/tmp"
	: >"$dir/log"
	if [ "$(id -u)" -eq 0 ]; then
		chown -R "$RUN_USER": "$dir"
		chmod 755 "$dir"
		if command -v runuser >/dev/null 2>&1 && ! runuser -u "$RUN_USER" -- test -w "$dir/data"; then
			die "user $RUN_USER cannot write $dir/data (is a parent directory private?); use a directory under /tmp"
		fi
	fi
	if ! "$INSTALL_DB" --no-defaults --datadir="$dir/data" --user="$RUN_USER" \
		--auth-root-authentication-method=socket --skip-test-db \
		>>"$dir/install.log" 2>&1; then
		echo "mariadb-server.sh: mariadb-install-db failed; the end of $dir/install.log:" >&2
		tail -n 20 "$dir/install.log" >&2
		exit 1
	fi
	local port tries=0
	while :; do
		port=$(pick_port)
		launch "$port" && break
		tries=$((tries + 1))
		[ $tries -lt 5 ] || die "could not bind a TCP port after $tries attempts (see $dir/log)"
	done
	if ! sql >/dev/null 2>>"$dir/log" <<-'EOF'
		CREATE USER IF NOT EXISTS 'djc'@'%' IDENTIFIED BY 'djc';
		CREATE USER IF NOT EXISTS 'djc'@'localhost' IDENTIFIED BY 'djc';
		GRANT ALL PRIVILEGES ON *.* TO 'djc'@'%' WITH GRANT OPTION;
		GRANT ALL PRIVILEGES ON *.* TO 'djc'@'localhost' WITH GRANT OPTION;
		CREATE DATABASE IF NOT EXISTS djc CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
		FLUSH PRIVILEGES;
	EOF
	then
		echo "mariadb-server.sh: cannot create the djc user and database; the end of $dir/log:" >&2
		tail -n 5 "$dir/log" >&2
		shutdown_server
		exit 1
	fi
	local url="mysql://djc:djc@127.0.0.1:$port/djc"
	echo "$url" >"$dir/url"
	echo "$url"
}

do_stop() {
	[ -e "$dir" ] || return 0
	[ -e "$dir/$MARKER" ] || die "$dir was not made by mariadb-server.sh; not removing it"
	shutdown_server
	rm -rf "$dir"
}

do_restart() {
	if [ ! -e "$dir/$MARKER" ] || [ ! -f "$dir/port" ]; then die "no server directory at $dir (run start first)"; fi
	local port
	port=$(cat "$dir/port")
	shutdown_server
	local _
	for _ in $(seq 1 100); do   # the old listener's port may linger briefly
		launch "$port" && return 0
		sleep 0.2
	done
	die "cannot restart on port $port (see $dir/log)"
}

case $cmd in
start) do_start ;;
stop) do_stop ;;
restart) do_restart ;;
client)
	[ -S "$dir/sock" ] || die "no server socket at $dir/sock"
	exec "$CLIENT" --no-defaults -uroot --socket="$dir/sock" "$@"
	;;
*) usage ;;
esac
