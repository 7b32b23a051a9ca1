#!/bin/bash
# test_pool.sh - populate --processes N when worker children are killed at
# any moment (issue 12.4): a child killed after it committed its job (and
# before it said which job comes next) is not reported as a failure; every
# failure populate reports is a job the jobs table holds as an error, whose
# key is not made; the rest of a dead child's claim goes back to pending at
# once; the work still gets done. On the servers each claimed row sleeps
# 10 ms in the server (a trigger), so children are often killed with a
# claim in flight, which the server runs to its COMMIT after the child is
# gone: the parent waits for the end of the child's session before it
# hands its jobs back (through a transaction pooler, where no session is
# the child's, it hands them back again 2 s later). A killed parent's
# children stop by themselves, as on SIGTERM (populate and djc worker).
. "$ROOT/tests/cli/lib.sh"

# schema_sql SQL: run SQL with the backend's client (PostgreSQL: names
# qualified, as a session setting would stay on a pooler's connection)
schema_sql() {
	case $DJC_BACKEND in
	postgresql)
		psql "$DJC_DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "$1" ;;
	mysql) mariadb_cli -N -B "$DJC_DATABASE_SCHEMA" -e "$1" ;;
	esac
}

N=1500
printf 'K (manual)\n    k : int32\n    ---\n\nP (computed)\n    -> K\n    ---\n    v : int32\n' > p.djc
# the make prints {"v": 1} (tests/cli/helpers/print_make.c: a static
# program, as the 1,500 makes' starts are most of this file's CPU)
ln -s "$BUILD/tests/print_make" mk
expect_rc 0 "declare" djc declare p.djc
seq 1 $N | sed 's/.*/{"k":&}/' > keys.jsonl
expect_out "insert $N keys" "inserted $N rows into K" djc insert K keys.jsonl

case $DJC_BACKEND in
postgresql)
	S=$DJC_DATABASE_SCHEMA
	expect_rc 0 "slow claims (a trigger)" schema_sql 'CREATE FUNCTION "'"$S"'".slow_claim() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.status = '"'reserved'"' AND OLD.status = '"'pending'"' THEN PERFORM pg_sleep(0.01); END IF; RETURN NEW; END $$;
		CREATE TRIGGER slow_claim BEFORE UPDATE ON "'"$S"'"."~~p" FOR EACH ROW EXECUTE FUNCTION "'"$S"'".slow_claim()' ;;
mysql)
	expect_rc 0 "slow claims (a trigger)" schema_sql 'CREATE TRIGGER slow_claim BEFORE UPDATE ON `~~p` FOR EACH ROW
		SET @slow = IF(NEW.status = '"'reserved'"' AND OLD.status = '"'pending'"', SLEEP(0.01), 0)' ;;
esac
export DJC_JOBS_RESERVE_BATCH=3
DJC_WORKER_LOG=$PWD/wl.txt "$DJC" populate P --reserve-jobs --processes 3 --suppress-errors --json --make ./mk '{"v": 1}' > out.json 2> err.txt &
pid=$!
# kill a worker child every 50 ms, 10 times (the pool replaces each)
killed=0
for _ in $(seq 1 400); do
	[ "$killed" -ge 10 ] && break
	kill -0 "$pid" 2>/dev/null || break
	nap 0.05
	# live children only: a dead one stays unreaped (a zombie) until its
	# jobs are handed back, and killing it again would count for nothing
	kids=$(for k in $(pgrep -P "$pid" -x djc); do
		s=$(cut -d' ' -f3 "/proc/$k/stat" 2>/dev/null) && [ "$s" != Z ] && echo "$k"; done)
	[ -n "$kids" ] || continue   # not forked yet (refresh first), or between workers
	kid=$(printf '%s\n' $kids | shuf -n 1)
	kill -9 "$kid" 2>/dev/null && killed=$((killed + 1))
done
wait "$pid"
rc=$?
check "children were killed ($killed)" [ "$killed" -ge 3 ]
check "populate ended (exit 0 or 1)" [ "$rc" = 0 -o "$rc" = 1 ]
reported=$(jq '.error_count' out.json)
recorded=$(djc jobs P --json | jq '.error')
check "every reported failure is a job recorded as an error ($reported reported, $recorded recorded)" \
	[ "$reported" = "$recorded" ]
made_errors=0
for k in $(jq -r '.errors[].key.k' out.json); do
	[ "$(count P "{\"k\": $k}")" = 0 ] || made_errors=$((made_errors + 1))
done
check "no reported failure is a key that was made ($made_errors)" [ "$made_errors" = 0 ]
check "nothing left reserved by the dead children" [ "$(djc jobs P --json | jq '.reserved')" = 0 ]
# each child says when its server session could not be vouched for: only
# through the pooler (direct TCP: the server sees the child's own port)
unverified=$(grep -c 'session unverified' wl.txt || true)
case ${DJC_POOLER:-}/$DJC_BACKEND in
pgbouncer/*) check "through the pooler every child says its session is unverified ($unverified)" [ "$unverified" -ge 3 ] ;;
*/sqlite) check "no session to verify on sqlite ($unverified)" [ "$unverified" = 0 ] ;;
*) check "every child's session vouched for ($unverified unverified)" [ "$unverified" = 0 ] ;;
esac
case $DJC_BACKEND in
postgresql) expect_rc 0 "claims at full speed again" schema_sql 'DROP TRIGGER slow_claim ON "'"$S"'"."~~p"' ;;
mysql) expect_rc 0 "claims at full speed again" schema_sql 'DROP TRIGGER slow_claim' ;;
esac
# the failures are retried and everything gets made
expect_rc 0 "clear the errors" djc jobs clear P --status error
expect_rc 0 "populate the rest" djc populate P --reserve-jobs --processes 3 --make ./mk '{"v": 1}'
check "all $N keys made" [ "$(count P)" = $N ]
check "no job left" [ "$(djc jobs P --json)" = '{"table":"P","pending":0,"reserved":0,"success":0,"error":0,"ignore":0,"total":0}' ]

# a make that kills its worker process the first time: the parent records
# the attempt as "died", a lost worker (no attempt used), and the job is
# made again; for a
# key whose JSON (4,213 bytes: 700 control characters, each \u0001) does
# not fit the slot, and for a short one (jobs.keep_completed keeps the
# history)
printf 'L (manual)\n    name : varchar(700)\n    ---\n\nQ (computed)\n    -> L\n    ---\n    v : int32\n' > q.djc
expect_rc 0 "declare L, Q" djc declare q.djc
long=$(jq -nc '{name: ([range(700)] | map("\u0001") | join(""))}')
check "the long key's JSON is over 3,967 bytes ($(printf '%s' "$long" | wc -c))" [ "$(printf '%s' "$long" | wc -c)" -gt 3967 ]
{ echo "$long"; echo '{"name":"short"}'; } > l.jsonl
expect_out "insert 2 keys" "inserted 2 rows into L" djc insert L l.jsonl
cat > kill.sh <<'P'
#!/bin/sh
f=$T/killed.$(printf '%s' "$DJC_KEY" | md5sum | cut -d' ' -f1)
if [ ! -e "$f" ]; then
	: > "$f"
	kill -KILL "$("$DJC" jobs Q --key "$DJC_KEY" --json | jq .job.pid)"; sleep 60
fi
echo '{"v": 1}'
P
chmod +x kill.sh
run env DJC_JOBS_RESERVE_BATCH=1 DJC_JOBS_KEEP_COMPLETED=1 "$DJC" populate Q --reserve-jobs --processes 2 --json --make ./kill.sh
check "killed in make: both made on the retry" [ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '0/[2,0,2]' ]
for k in "$long" '{"name":"short"}'; do
	check "killed in make: history of a ${#k}-character key" \
		[ "$(djc jobs Q --key "$k" --json | jq -c '[.history[] | [.attempt, .outcome]]')" = '[[1,"died"],[2,"success"]]' ]
done

case_parent_killed() {
# ------------------------------------- the parent killed (issue 36.2)
# kill -9 of the --processes parent: its children notice at once (the
# kernel's SIGTERM on the parent's death) and stop as on SIGTERM: the
# running make is stopped and recorded as interrupted, the rest of each
# child's claim (jobs.reserve_batch 3) goes back to pending, nothing more
# is claimed, and they exit. Before, they went on claiming and making, and
# a djc worker's ran forever. The makes log their start and wait for ./go,
# which never comes.
# wait_until SECONDS CMD...: until CMD succeeds (0), or SECONDS passed (1)
wait_until() {
	local lim=$(($1 * 10)) i=0
	shift
	while ! "$@"; do
		i=$((i + 1))
		[ $i -ge $lim ] && return 1
		nap 0.1
	done
}
printf 'M (manual)\n    m : int32\n    ---\n\nR (computed)\n    -> M\n    ---\n    v : int32\n    make = ./mkwait.sh\n\nS (computed)\n    -> M\n    ---\n    v : int32\n    make = ./mkwait.sh\n' > m.djc
expect_rc 0 "declare M, R, S" djc declare m.djc
seq 1 10 | sed 's/.*/{"m":&}/' | "$DJC" insert M > /dev/null
cat > mkwait.sh <<'P'
#!/bin/sh
echo "start $DJC_TABLE $DJC_KEY_m" >> made.log
i=0
while [ ! -e go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
echo '{"v": 1}'
P
chmod +x mkwait.sh
alive() { for k in "$@"; do kill -0 "$k" 2>/dev/null && return 0; done; return 1; }
none_alive() { ! alive "$@"; }
# orphan_run TABLE CMD...: start CMD (2 worker processes), kill -9 it once
# both makes started, then wait (bounded) for its children to end
orphan_run() {
	local table=$1 ppid
	shift
	rm -f go made.log
	"$@" > orphan.out 2> orphan.err &
	ppid=$!
	wait_until 120 sh -c "[ \$(cat made.log 2>/dev/null | grep -c '^start $table ') -ge 2 ]"
	KIDS=$(pgrep -P "$ppid" -x djc | tr '\n' ' ')
	kill -KILL "$ppid"
	wait "$ppid" 2>/dev/null
	PPID_KILLED=$ppid
	# shellcheck disable=SC2086  # KIDS is a list of pids
	wait_until 60 none_alive $KIDS
	GONE=$?
	STARTS=$(grep -c "^start $table " made.log)
	# whatever is left (before the fix: the children) is ended here
	touch go
	for k in $KIDS; do kill -KILL "$k" 2>/dev/null; done
	# shellcheck disable=SC2086
	wait_until 30 none_alive $KIDS
}
jobs_json() { "$DJC" jobs "$1" --json | jq -c '[.pending, .reserved, .error]'; }
errors_of() { "$DJC" jobs "$1" --status error --json | jq -r '.jobs[].error_message' | sort -u; }

orphan_run R "$DJC" populate R --reserve-jobs --processes 2 --suppress-errors
check "populate parent killed: it had 2 worker processes ($KIDS)" [ "$(echo $KIDS | wc -w)" = 2 ]
check "... both ended by themselves" [ "$GONE" = 0 ]
check "... no make started after the kill (2 started)" [ "$STARTS" = 2 ]
check "... the 2 running makes are errors, the rest of their claims pending, nothing reserved" [ "$(jobs_json R)" = '[8,0,2]' ]
check "... recorded as interrupted by the parent's death" \
	[ "$(errors_of R)" = "interrupted by SIGTERM: its worker's parent process (pid $PPID_KILLED) died" ]
check "... each child said so on stderr" [ "$(grep -c "^djc: worker process [0-9]* stopped as on SIGTERM: its parent process $PPID_KILLED died$" orphan.err)" = 2 ]

# djc worker, without any stop condition, likewise
: > wl.txt
orphan_run S env DJC_WORKER_LOG="$PWD/wl.txt" "$DJC" worker S --processes 2 --refresh-interval 3600
check "worker parent killed: it had 2 worker processes ($KIDS)" [ "$(echo $KIDS | wc -w)" = 2 ]
check "... both ended by themselves" [ "$GONE" = 0 ]
check "... no make started after the kill (2 started)" [ "$STARTS" = 2 ]
check "... the 2 running makes are errors, the rest pending, nothing reserved" [ "$(jobs_json S)" = '[8,0,2]' ]
check "... recorded as interrupted by the parent's death" \
	[ "$(errors_of S)" = "interrupted by SIGTERM: its worker's parent process (pid $PPID_KILLED) died" ]
check "... each logged it and stopped (signal)" \
	[ "$(grep -c " orphaned parent=$PPID_KILLED$" wl.txt)/$(grep -c ' stop signal$' wl.txt)" = 2/2 ]
}
tcase parent_killed

finish
