#!/bin/bash
# server.sh - `make stress`: djc populate --reserve-jobs while the database
# server itself misbehaves, on PostgreSQL, MariaDB and PostgreSQL behind
# pgbouncer (transaction pooling), each with throwaway servers of its own
# (durable: fsync and synchronous commit on, so that a crash loses no
# acknowledged commit). SQLite has no server: none of this applies to it.
#
# Each scenario runs W separate `djc populate --reserve-jobs --processes P`
# over N keys (a make of tests/cli/helpers/lease_make.c that logs each
# start and end outside the database), with jobs.lease_timeout LEASE:
#
#   crash1   the server crashes (PostgreSQL: pg_ctl -m immediate; MariaDB:
#            SIGKILL of mariadbd) mid-run and is back 1 s later
#   crash10  the same, back after 2.5 leases: leases lapse meanwhile, and
#            jobs whose commit was cut short are taken over by others
#   freeze   the server is frozen (SIGSTOP of all its processes) for 2
#            leases while makes longer than a lease run, then thawed
#   lock     the jobs table is locked by another session for 2 leases
#            (LOCK TABLE ... ACCESS EXCLUSIVE / LOCK TABLES ... WRITE)
#   lockever the jobs table is locked by another session for ever: every
#            populate stops by itself after jobs.lock_timeout (max(60 s, 4
#            leases)) with a one-line failure saying the table is locked
#            (no make reported failed); the lock gone, one more populate
#            makes the rest
#   gone     the server crashes and stays down: every populate stops by
#            itself with a one-line failure naming the key it could not
#            commit (no make reported failed); the server back, one more
#            populate makes the rest
#   frozen   the server is frozen (SIGSTOP of all its processes) and stays
#            so: its kernel still acknowledges TCP, so no keepalive or
#            TCP_USER_TIMEOUT fires; every populate stops by itself (each
#            wait for the server is bounded by the retry window, max(60 s,
#            4 leases)) with a one-line failure and no make reported
#            failed; thawed, one more populate makes the rest
#   frozenchild  the server is frozen for good, then one worker process
#            of each populate is killed (SIGKILL): the --processes parent
#            asks the frozen server about it (its session, its job, what
#            it held), each wait bounded as a worker's (the retry window),
#            and after a window without an answer writes nothing more and
#            starts no worker in its place: every populate stops by itself
#            as in frozen, its line a worker's. Until 2026-12-07
#            the parent's connection had no bound and waited for ever
#            (reap: "a populate still runs after 300 s (hang)")
#   maxconn  the database admits fewer connections than the workers need
#            (a role's connection limit): a populate that cannot connect
#            says so in one line (exit 1) and leaves nothing reserved
#            (not through pgbouncer, which queues clients)
#
# Checks after each: every key's row exists exactly once; each key's commit
# was reported by exactly one worker (the sum of the workers' "made" is N:
# none reported a commit that was another's); every make beyond one per key
# is accounted for by a lost reservation; every populate exits 0 (gone,
# maxconn: as said above); the jobs table is empty (no job left reserved or
# in error), and a populate run again makes nothing. No check measures a
# duration; every wait is bounded by WAIT seconds so that a hang fails.
#
#   DJC_BACKENDS="postgresql mysql pgbouncer"  SERVER_RUNS="crash1 crash10 freeze lock lockever gone frozen frozenchild maxconn"
#   SERVER_KEEP=1 keeps the runs' directories (logs, outputs)
#   SERVER_KEYS=300  SERVER_LEASE=4
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${DJC_BUILD:-build}
DJC=$ROOT/$BUILD/djc
MK=$ROOT/$BUILD/tests/lease_make
BACKENDS=${DJC_BACKENDS:-postgresql mysql pgbouncer}
RUNS=${SERVER_RUNS:-crash1 crash10 freeze lock lockever gone frozen frozenchild maxconn}
N=${SERVER_KEYS:-300}
LEASE=${SERVER_LEASE:-4}
W=3
P=2
WAIT=300
[ -x "$DJC" ] && [ -x "$MK" ] || { echo "server.sh: $DJC or $MK not built (make all)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/djc-server.XXXXXX)
chmod 755 "$WORK"
PASS=0
FAIL=0

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
ok() { PASS=$((PASS + 1)); [ -n "${DJC_TEST_TRACE:-}" ] && log "ok: $*"; return 0; }
bad() { FAIL=$((FAIL + 1)); log "FAIL: $*"; }
check() {  # DESC EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected '$2', got '$3'"; fi
}

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u djcdb -- "$@"; else "$@"; fi; }

PIDS=""
cleanup() {
	local p
	for p in $PIDS; do kill -KILL -- "-$p" 2>/dev/null; done
	if [ -d "$WORK/pg" ]; then
		pp=$(head -n 1 "$WORK/pg/data/postmaster.pid" 2>/dev/null)
		[ -n "${pp:-}" ] && kill -CONT "$pp" $(ps -o pid= --ppid "$pp") 2>/dev/null
		[ -d "$WORK/pgb" ] && "$ROOT/scripts/pgbouncer.sh" stop "$WORK/pgb" >/dev/null 2>&1
		"$ROOT/scripts/pg-server.sh" stop "$WORK/pg" >/dev/null 2>&1
	fi
	if [ -d "$WORK/my" ]; then
		[ -f "$WORK/my/pid" ] && kill -CONT "$(cat "$WORK/my/pid")" 2>/dev/null
		"$ROOT/scripts/mariadb-server.sh" stop "$WORK/my" >/dev/null 2>&1
	fi
	[ -n "${SERVER_KEEP:-}" ] && { log "kept $WORK"; return; }
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --------------------------------------------------------- the server
srv_crash() {
	case $SRV in
	pg) as_pg "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m immediate -w stop >/dev/null ;;
	my) kill -KILL "$(cat "$WORK/my/pid")" ;;
	esac
}
srv_start() {
	case $SRV in
	pg) "$ROOT/scripts/pg-server.sh" restart "$WORK/pg" >/dev/null ;;
	my) "$ROOT/scripts/mariadb-server.sh" restart "$WORK/my" >/dev/null ;;
	esac
}
srv_pids() {
	case $SRV in
	pg) local pp; pp=$(head -n 1 "$WORK/pg/data/postmaster.pid"); echo "$pp" $(ps -o pid= --ppid "$pp") ;;
	my) cat "$WORK/my/pid" ;;
	esac
}
# admin SQL on the server itself (not through the pooler)
srv_sql() {
	case $SRV in
	pg) "$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$(cat "$WORK/pg/port")" -U djc -d djc -v ON_ERROR_STOP=1 -c "$1" ;;
	my) "$ROOT/scripts/mariadb-server.sh" client "$WORK/my" --batch --skip-column-names -e "$1" ;;
	esac
}

# ------------------------------------------------------------ a run
# setup NAME: a fresh schema with N keys; sets D (the run's directory)
setup() {
	D=$WORK/$BACKEND-$1
	mkdir -p "$D"
	export DJC_DATABASE_SCHEMA=srv_${BACKEND}_$1_$$ MK_LOG=$D/mk.log MK_SLEEP=${2:-0.05} MK_PIDFILE= MK_HOLD=
	: > "$MK_LOG"
	cat > "$D/p.djc" <<'EOF'
Item (manual)
    item_id : int32
    ---
    label : varchar(16)

Res (computed)
    -> Item
    ---
    attempt : varchar(64)
EOF
	(cd "$D" && "$DJC" declare p.djc >/dev/null) || { bad "$BACKEND $1: declare"; return 1; }
	seq 1 "$N" | awk '{printf "{\"item_id\": %d, \"label\": \"x\"}\n", $1}' | (cd "$D" && "$DJC" insert Item >/dev/null) ||
		{ bad "$BACKEND $1: insert"; return 1; }
}
# workers: W populates in the background, each its own process group
workers() {
	local i
	PIDS=""
	for i in $(seq 1 $W); do
		(cd "$D" && exec setsid "$DJC" populate Res --reserve-jobs --processes $P --json --make "$MK" >"$D/w$i.json" 2>"$D/w$i.err") &
		PIDS="$PIDS $!"
	done
}
# started K: wait until the makes have started at least K times
started() {
	local t=0
	while [ "$(grep -c '^start' "$D/mk.log")" -lt "$1" ] && [ $t -lt $((WAIT * 10)) ]; do sleep 0.1; t=$((t + 1)); done
}
# reap: wait for every worker (bounded); RCS holds their exit codes
reap() {
	local p t
	RCS=""
	for p in $PIDS; do
		t=0
		while kill -0 "$p" 2>/dev/null && [ $t -lt $((WAIT * 10)) ]; do sleep 0.1; t=$((t + 1)); done
		if kill -0 "$p" 2>/dev/null; then
			bad "$BACKEND $RUN: a populate still runs after $WAIT s (hang)"
			kill -KILL -- "-$p" 2>/dev/null
		fi
		wait "$p"
		RCS="$RCS $?"
	done
	PIDS=""
}
sumj() { cat "$D"/w*.json 2>/dev/null | jq -s "map(.$1 // 0) | add // 0"; }
# verify: the table and the jobs table after a run (made: the sum of the
# workers' success counts expected)
verify() {
	local rows distinct starts again
	rows=$(cd "$D" && "$DJC" fetch Res --format json | jq -s 'length')
	distinct=$(cd "$D" && "$DJC" fetch Res --format json | jq -s 'map(.item_id) | unique | length')
	check "$BACKEND $RUN: rows" "$N" "$rows"
	check "$BACKEND $RUN: distinct keys" "$N" "$distinct"
	check "$BACKEND $RUN: jobs left" "0" "$(cd "$D" && "$DJC" jobs Res --json | jq '.jobs | length')"
	again=$(cd "$D" && "$DJC" populate Res --reserve-jobs --json --make "$MK" | jq -c '[.success_count, .error_count]')
	check "$BACKEND $RUN: populate again" "[0,0]" "$again"
	# every make that started ended or was stopped; the makes beyond one
	# per key are the lost reservations (stopped, or refused at commit)
	starts=$(grep -c '^start' "$D/mk.log")
	check "$BACKEND $RUN: extra makes = lost reservations" "$((starts - N))" "$(sumj lost_count)"
}

run_crash() {   # DOWN seconds
	setup "$RUN" || return
	workers
	started $((N / 4))
	srv_crash
	log "  $BACKEND $RUN: server crashed"
	sleep "$1"
	srv_start
	log "  $BACKEND $RUN: server back"
	reap
	check "$BACKEND $RUN: exit codes" " 0 0 0" "$RCS"
	check "$BACKEND $RUN: commits reported" "$N" "$(sumj success_count)"
	check "$BACKEND $RUN: errors reported" "0" "$(sumj error_count)"
	verify
}

run_freeze() {
	local n_all=$N
	N=$((W * P * 3))   # makes longer than a lease: three rounds
	setup "$RUN" "$LEASE.5" || { N=$n_all; return; }
	workers
	started $((W * P))
	local pids
	pids=$(srv_pids)
	kill -STOP $pids
	log "  $BACKEND $RUN: server frozen"
	sleep $((2 * LEASE))
	kill -CONT $pids
	log "  $BACKEND $RUN: server thawed"
	reap
	check "$BACKEND $RUN: exit codes" " 0 0 0" "$RCS"
	check "$BACKEND $RUN: commits reported" "$N" "$(sumj success_count)"
	check "$BACKEND $RUN: errors reported" "0" "$(sumj error_count)"
	verify
	N=$n_all
}

run_lock() {
	setup "$RUN" 0.2 || return
	workers
	started $((N / 4))
	log "  $BACKEND $RUN: jobs table locked"
	case $SRV in
	pg) srv_sql "BEGIN; LOCK TABLE \"$DJC_DATABASE_SCHEMA\".\"~~res\" IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep($((2 * LEASE))); COMMIT" >/dev/null ;;
	my) srv_sql "LOCK TABLES \`$DJC_DATABASE_SCHEMA\`.\`~~res\` WRITE; SELECT SLEEP($((2 * LEASE))); UNLOCK TABLES" >/dev/null ;;
	esac
	log "  $BACKEND $RUN: unlocked"
	reap
	check "$BACKEND $RUN: exit codes" " 0 0 0" "$RCS"
	check "$BACKEND $RUN: commits reported" "$N" "$(sumj success_count)"
	check "$BACKEND $RUN: errors reported" "0" "$(sumj error_count)"
	verify
}

run_lockever() {
	setup "$RUN" 0.2 || return
	workers
	started $((N / 4))
	case $SRV in
	pg) srv_sql "BEGIN; LOCK TABLE \"$DJC_DATABASE_SCHEMA\".\"~~res\" IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3600) /* lockever */" >/dev/null 2>&1 & ;;
	my) srv_sql "LOCK TABLES \`$DJC_DATABASE_SCHEMA\`.\`~~res\` WRITE; SELECT SLEEP(3600), 'lockever'" >/dev/null 2>&1 & ;;
	esac
	local locker=$!
	log "  $BACKEND $RUN: jobs table locked for good"
	reap
	stopped_checks 'Res is locked by another session: .*waited .* for a lock'
	case $SRV in
	pg) srv_sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%/* lockever */%' AND pid <> pg_backend_pid()" >/dev/null ;;
	my) local id
	    for id in $(srv_sql "SELECT id FROM information_schema.processlist WHERE info LIKE '%SLEEP(3600), _lockever_%' AND id <> CONNECTION_ID()"); do
		srv_sql "KILL CONNECTION $id" >/dev/null 2>&1
	    done ;;
	esac
	kill "$locker" 2>/dev/null
	wait "$locker" 2>/dev/null
	log "  $BACKEND $RUN: unlocked; populate the rest"
	local made rest
	made=$(sumj success_count)
	sleep $((LEASE + 1))   # what the stopped workers held lapses
	(cd "$D" && "$DJC" populate Res --reserve-jobs --processes 4 --json --make "$MK" > "$D/rest.json" 2>"$D/rest.err")
	rest=$(jq -e .success_count "$D/rest.json" 2>/dev/null) ||
		{ bad "$BACKEND $RUN: the populate of the rest failed: $(head -c 300 "$D/rest.err")"; rest=0; }
	check "$BACKEND $RUN: the rest made, each key counted once" "$N" "$((made + rest))"
	check "$BACKEND $RUN: rows" "$N" "$(cd "$D" && "$DJC" fetch Res --format json | jq -s 'length')"
	check "$BACKEND $RUN: jobs left" "0" "$(cd "$D" && "$DJC" jobs Res --json | jq '.jobs | length')"
}

# stopped_checks ERE: every populate stopped by itself: exit 1, no make
# reported failed, one line saying why (matching ERE), the failure in --json
stopped_checks() {
	check "$BACKEND $RUN: exit codes" " 1 1 1" "$RCS"
	check "$BACKEND $RUN: errors reported (no make failed)" "0" "$(sumj error_count)"
	local i line
	for i in $(seq 1 $W); do
		line=$(cat "$D/w$i.err")
		check "$BACKEND $RUN: worker $i: one line" "1" "$(printf '%s\n' "$line" | grep -c .)"
		if printf '%s\n' "$line" | grep -Eq "$1"; then ok "$BACKEND $RUN: worker $i says why"
		else bad "$BACKEND $RUN: worker $i: message: $line"; fi
		check "$BACKEND $RUN: worker $i: failure in --json" "true" "$(jq '.failure != null' "$D/w$i.json")"
	done
}

# gone_checks: after the server went away (crashed, or frozen)
gone_checks() {
	local t0=$SECONDS
	reap
	log "  $BACKEND $RUN: the workers stopped after $((SECONDS - t0)) s (window $((4 * LEASE > 60 ? 4 * LEASE : 60)) s)"
	stopped_checks 'was not committed|whether it committed is not known|gave up after|no reply from the server'
}

# the rest made by one more populate once the server is back
rest_checks() {
	local made rest rows
	made=$(sumj success_count)
	(cd "$D" && "$DJC" populate Res --reserve-jobs --processes 4 --json --make "$MK" > "$D/rest.json" 2>"$D/rest.err")
	rest=$(jq -e .success_count "$D/rest.json" 2>/dev/null) ||
		{ bad "$BACKEND $RUN: the populate of the rest failed: $(head -c 300 "$D/rest.err")"; rest=0; }
	# a worker process that stopped with its COMMIT sent and no reply (a
	# frozen server commits it when it thaws) may have committed a key it
	# could not count, which the rest then finds made: at most one per
	# worker process (W x P; a populate's one line names one of them)
	local unknown=$(cat "$D"/w*.err | grep -c "whether it committed is not known")
	if [ $((made + rest)) -le "$N" ] && [ $((made + rest + W * P)) -ge "$N" ]; then ok "$BACKEND $RUN: the rest made"
	else bad "$BACKEND $RUN: the rest made: $made + $rest of $N ($unknown populate(s) said a commit is not known)"; fi
	rows=$(cd "$D" && "$DJC" fetch Res --format json | jq -s 'length')
	check "$BACKEND $RUN: rows" "$N" "$rows"
	check "$BACKEND $RUN: jobs left" "0" "$(cd "$D" && "$DJC" jobs Res --json | jq '.jobs | length')"
}

run_gone() {
	setup "$RUN" 0.3 || return
	workers
	started $((N / 10))
	srv_crash
	log "  $BACKEND $RUN: server crashed for good"
	gone_checks
	srv_start
	log "  $BACKEND $RUN: server back; populate the rest"
	rest_checks
}

run_frozen() {
	setup "$RUN" 0.3 || return
	workers
	started $((N / 10))
	local pids
	pids=$(srv_pids)
	kill -STOP $pids
	log "  $BACKEND $RUN: server frozen for good"
	gone_checks
	kill -CONT $pids
	log "  $BACKEND $RUN: server thawed; populate the rest"
	rest_checks
}

run_frozenchild() {
	setup "$RUN" 0.3 || return
	workers
	started $((N / 10))
	local pids p kid
	pids=$(srv_pids)
	kill -STOP $pids
	# a worker process of each populate (the parent's child; its make is
	# a grandchild)
	for p in $PIDS; do
		kid=$(ps -o pid= --ppid "$p" | head -n 1)
		[ -n "$kid" ] && kill -KILL $kid
	done
	log "  $BACKEND $RUN: server frozen for good, a worker process of each populate killed"
	gone_checks
	kill -CONT $pids
	log "  $BACKEND $RUN: server thawed; populate the rest"
	rest_checks
}

run_maxconn() {
	setup "$RUN" 0.05 || return
	# a role the server admits LIMIT times at once: fewer than the
	# W * (P + 1) connections of the workers, more than one populate's
	local limit=$((P + 2)) url
	case $SRV in
	pg) srv_sql "DROP ROLE IF EXISTS lim; CREATE ROLE lim LOGIN CONNECTION LIMIT $limit; GRANT ALL ON DATABASE djc TO lim;
		GRANT ALL ON SCHEMA \"$DJC_DATABASE_SCHEMA\" TO lim; GRANT ALL ON ALL TABLES IN SCHEMA \"$DJC_DATABASE_SCHEMA\" TO lim" >/dev/null
	    url="postgresql://lim@127.0.0.1:$(cat "$WORK/pg/port")/djc" ;;
	my) srv_sql "DROP USER IF EXISTS lim; CREATE USER lim@'%' IDENTIFIED BY 'lim' WITH MAX_USER_CONNECTIONS $limit;
		GRANT ALL ON *.* TO lim@'%'" >/dev/null
	    url="mysql://lim:lim@127.0.0.1:$(cat "$WORK/my/port")/djc" ;;
	esac
	DJC_DATABASE_URL=$url workers
	reap
	local i nok=0 line
	for i in $(seq 1 $W); do
		line=$(cat "$D/w$i.err")
		if [ -z "$line" ]; then nok=$((nok + 1)); continue; fi
		check "$BACKEND $RUN: worker $i: one line" "1" "$(printf '%s\n' "$line" | grep -c .)"
		case $line in
		*"too many connections"*|*"max_user_connections"*) ok "$BACKEND $RUN: worker $i says why" ;;
		*) bad "$BACKEND $RUN: worker $i: message: $line" ;;
		esac
	done
	[ $nok -lt $W ] && ok "$BACKEND $RUN: some populate refused" || bad "$BACKEND $RUN: the limit refused nobody"
	check "$BACKEND $RUN: nothing reserved" "0" "$(cd "$D" && "$DJC" jobs Res --status reserved --json | jq '.jobs | length')"
	check "$BACKEND $RUN: rows unique" "$(cd "$D" && "$DJC" fetch Res --format json | jq -s 'length')" \
		"$(cd "$D" && "$DJC" fetch Res --format json | jq -s 'map(.item_id) | unique | length')"
	(cd "$D" && "$DJC" populate Res --reserve-jobs --make "$MK" >/dev/null 2>&1)
	check "$BACKEND $RUN: the rest made" "$N" "$(cd "$D" && "$DJC" fetch Res --format json | jq -s 'length')"
}

export DJC_JOBS_LEASE_TIMEOUT=$LEASE DJC_JOBS_RETRY_DELAY=0
# durable servers, at their start and at every restart (pg-server.sh and
# mariadb-server.sh read these each time): without them a crash loses
# commits the server had acknowledged, and keys are made twice by design
export PG_DURABLE=1 MARIADB_DURABLE=1
for BACKEND in $BACKENDS; do
	case $BACKEND in
	postgresql|pgbouncer)
		SRV=pg
		[ -d "$WORK/pg" ] || "$ROOT/scripts/pg-server.sh" start "$WORK/pg" >/dev/null || { bad "pg-server start"; continue; }
		if [ $BACKEND = pgbouncer ]; then
			"$ROOT/scripts/pgbouncer.sh" start "$WORK/pgb" "$(cat "$WORK/pg/url")" >/dev/null || { bad "pgbouncer start"; continue; }
			export DJC_DATABASE_URL="$(cat "$WORK/pgb/url")?pooler=transaction"
		else
			export DJC_DATABASE_URL=$(cat "$WORK/pg/url")
		fi ;;
	mysql)
		SRV=my
		"$ROOT/scripts/mariadb-server.sh" start "$WORK/my" >/dev/null || { bad "mariadb-server start"; continue; }
		export DJC_DATABASE_URL=$(cat "$WORK/my/url") ;;
	sqlite) log "server.sh: SQLite has no server; skipped"; continue ;;
	*) log "server.sh: unknown backend $BACKEND"; exit 2 ;;
	esac
	for RUN in $RUNS; do
		[ $BACKEND = pgbouncer ] && [ $RUN = maxconn ] && continue
		log "$BACKEND $RUN"
		f0=$FAIL
		case $RUN in
		crash1) run_crash 1 ;;
		crash10) run_crash $((LEASE * 5 / 2)) ;;
		freeze) run_freeze ;;
		lock) run_lock ;;
		lockever) run_lockever ;;
		gone) run_gone ;;
		frozen) run_frozen ;;
		frozenchild) run_frozenchild ;;
		maxconn) run_maxconn ;;
		*) log "server.sh: unknown run $RUN"; exit 2 ;;
		esac
		[ $FAIL = "$f0" ] && log "  $BACKEND $RUN: ok" || log "  $BACKEND $RUN: FAILED"
	done
	if [ $BACKEND = pgbouncer ]; then "$ROOT/scripts/pgbouncer.sh" stop "$WORK/pgb" >/dev/null 2>&1; fi
done
echo "server.sh: $PASS passed, $FAIL failed"
[ $FAIL = 0 ]
