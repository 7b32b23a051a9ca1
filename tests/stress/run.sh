#!/bin/bash
# run.sh - `make stress`: exactly once under contention and failure, on every
# backend, with throwaway PostgreSQL and MariaDB servers. Three runs per backend:
#
#   crash  KEYS keys with random make times (10-300 ms) done by 9 worker groups
#          (a loop of `djc populate --reserve-jobs --processes 2`, each group its
#          own process group: 18 worker processes) spread over 3 simulated
#          hosts. Whole groups are SIGKILLed again and again and replaced by
#          new ones; the last kill comes when few keys remain. No refresh.
#   chaos  the same workload; host 3 is cut off (ip link set down) for 2.5
#          leases while its makes run, then healed; later the database server
#          is restarted mid-run (PostgreSQL, MariaDB).
#   retries the crash run with retries on (jobs.max_attempts 3, retry_delay
#          0.2 s): keys divisible by 7 fail their first attempt, keys
#          divisible by 11 their first two, on purpose; each still commits
#          exactly once, from the attempt after its failures.
#
# As root, each host is a network namespace joined to the database's (the
# root namespace) by a veth pair, and the servers also listen on the veth
# addresses. Otherwise the hosts are plain local process groups and the
# cut is simulated by freezing (SIGSTOP) the host's groups. SQLite, having
# no network, always gets the freeze, and no server restart.
#
# Every make start/end/stop is logged outside the database (O_APPEND writes
# by the make program). Checks: every key committed exactly once (one row,
# made by an attempt that finished), each surviving group reports exactly
# the commits that are its own, every make beyond one per key is accounted
# for (killed with its worker, or stopped / refused because its reservation
# was lost, matching the workers' lost counts), nothing reserved, pending or
# in error at the end, and every worker group finishes by itself. How long
# the run went on after the last kill (about one lease when all is well) is
# reported, not checked: a duration depends on the machine's load.
#
#   DJC_BACKENDS="sqlite postgresql mysql"  STRESS_KEYS=2000  STRESS_LEASE=3
#   STRESS_RUNS="crash chaos retries" (the runs, in this order, per backend)
#   STRESS_OUT=docs/stress-results.md (results are appended to a fresh copy)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${DJC_BUILD:-build}
DJC=$ROOT/$BUILD/djc
BACKENDS=${DJC_BACKENDS:-sqlite postgresql mysql}
KEYS=${STRESS_KEYS:-2000}
LEASE=${STRESS_LEASE:-3}
HOSTS=3
GROUPS_PER_HOST=3
PROCS=2
MAX_KILLS=${STRESS_KILLS:-8}
RUNS=${STRESS_RUNS:-crash chaos retries}
OUTFILE=${STRESS_OUT:-$ROOT/docs/stress-results.md}
[ -x "$DJC" ] || { echo "stress: $DJC not built (make all)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/djc-stress.XXXXXX)
chmod 755 "$WORK"
TAG=s$$
FAILS=0

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

NET=10.77
. "$ROOT/tests/stress/hosts.sh"

ALLPG=""   # process groups we started
cleanup() {
	local g
	for g in $ALLPG; do kill -KILL -- "-$g" 2>/dev/null; kill -CONT -- "-$g" 2>/dev/null; done
	[ -d "$WORK/pg" ] && "$ROOT/scripts/pg-server.sh" stop "$WORK/pg" >/dev/null 2>&1
	[ -d "$WORK/my" ] && "$ROOT/scripts/mariadb-server.sh" stop "$WORK/my" >/dev/null 2>&1
	hosts_down
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

hosts_up

# ------------------------------------------------------------ programs
cat > "$WORK/p.djc" <<'P'
Item (manual)
    k : int32
    ---
    ms : int32

Res (computed)
    -> Item
    ---
    attempt : varchar(80)
    worker : varchar(32)
    n : int32
P
cat > "$WORK/mk.sh" <<'P'
#!/bin/sh
k=$DJC_KEY_k
a="$k-$$-$(date +%s%N)"
echo "start $k $a $STRESS_WORKER" >> "$MK_LOG"
trap 'echo "term $k $a $STRESS_WORKER" >> "$MK_LOG"; exit 143' TERM
ms=$(( 10 + (k * 7919 + 13) % 291 ))
sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" &
wait $!
echo "{\"attempt\": \"$a\", \"worker\": \"$STRESS_WORKER\", \"n\": ${DJC_ATTEMPT:-1}}"
echo "end $k $a $STRESS_WORKER" >> "$MK_LOG"
P
# the same, failing on purpose: keys divisible by 11 their first two
# attempts, by 7 their first (DJC_ATTEMPT counts the failures)
cat > "$WORK/mk_retry.sh" <<'P'
#!/bin/sh
k=$DJC_KEY_k
a="$k-$$-$(date +%s%N)"
echo "start $k $a $STRESS_WORKER" >> "$MK_LOG"
trap 'echo "term $k $a $STRESS_WORKER" >> "$MK_LOG"; exit 143' TERM
ms=$(( 10 + (k * 7919 + 13) % 291 ))
sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" &
wait $!
f=0
[ $((k % 7)) = 0 ] && f=1
[ $((k % 11)) = 0 ] && f=2
if [ "$DJC_ATTEMPT" -le "$f" ]; then
	echo "fail $k $a $STRESS_WORKER" >> "$MK_LOG"
	echo "failing $k on attempt $DJC_ATTEMPT on purpose" >&2
	exit 1
fi
echo "{\"attempt\": \"$a\", \"worker\": \"$STRESS_WORKER\", \"n\": $DJC_ATTEMPT}"
echo "end $k $a $STRESS_WORKER" >> "$MK_LOG"
P
cat > "$WORK/group.sh" <<'P'
#!/bin/bash
# group.sh W: one worker group; populates until no key remains
W=$1
export STRESS_WORKER=$W
ps -o pgid= -p $$ | tr -d ' ' > "$RES/$W.pgid"
while :; do
	"$DJC" populate Res --reserve-jobs --no-refresh --suppress-errors --processes "$PROCS" --json --make "$MK" \
		>> "$RES/$W.json" 2>> "$RES/$W.err"
	r=$("$DJC" progress Res --json 2>> "$RES/$W.err" | sed -nE 's/.*"remaining":([0-9]+).*/\1/p')
	[ "$r" = 0 ] && break
	sleep 0.3
done
echo done > "$RES/$W.done"
P
chmod +x "$WORK/mk.sh" "$WORK/mk_retry.sh" "$WORK/group.sh"
python3 - "$KEYS" > "$WORK/items.jsonl" <<'P'
import sys
for k in range(1, int(sys.argv[1]) + 1): print('{"k": %d, "ms": %d}' % (k, 10 + (k * 7919 + 13) % 291))
P

# ------------------------------------------------------------ helpers
now() { date +%s.%N; }
remaining() { "$DJC" progress Res --json 2>/dev/null | sed -nE 's/.*"remaining":([0-9]+).*/\1/p'; }

# start_group HOST: a new worker group on HOST; sets G_PG (its process group)
NGROUP=0
start_group() {
	local h=$1 w url
	NGROUP=$((NGROUP + 1))
	w="h$h-g$NGROUP"
	url=$BASEURL
	if [ $NETNS = 1 ] && [ "$BACKEND" != sqlite ]; then url=${BASEURL/127.0.0.1/$(host_ip $h)}; fi
	if [ $NETNS = 1 ]; then
		DJC_DATABASE_URL=$url ip netns exec "$(ns $h)" setsid "$WORK/group.sh" "$w" </dev/null >/dev/null 2>&1 &
		disown
	else
		DJC_DATABASE_URL=$url setsid "$WORK/group.sh" "$w" </dev/null >/dev/null 2>&1 &
		disown
	fi
	local i=0
	while [ ! -s "$RES/$w.pgid" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
	G_PG=$(cat "$RES/$w.pgid")
	ALLPG="$ALLPG $G_PG"
	echo "$w $h $G_PG" >> "$RES/groups"
}

alive_groups() {  # "W HOST PGID" of groups not killed and not done
	while read -r w h g; do
		[ -e "$RES/$w.done" ] && continue
		grep -qx "$w" "$RES/killed" 2>/dev/null && continue
		echo "$w $h $g"
	done < "$RES/groups"
}

kill_group() {  # W PGID
	kill -KILL -- "-$2" 2>/dev/null
	echo "$1" >> "$RES/killed"
	log "  SIGKILL process group of $1 (remaining $(remaining))"
}

wait_all_done() {  # seconds
	local i=0 lim=$(( $1 * 5 ))
	while [ -n "$(alive_groups)" ] && [ $i -lt $lim ]; do sleep 0.2; i=$((i + 1)); done
}

# ------------------------------------------------------------ one run
run_one() {  # RUN (crash|chaos|retries)
	RUN=$1
	RES=$WORK/res-$BACKEND-$RUN
	mkdir -p "$RES"
	chmod 777 "$RES"
	: > "$RES/killed"
	: > "$RES/groups"
	: > "$RES/events"
	export RES DJC MK="$WORK/mk.sh" MK_LOG="$RES/makes.log" PROCS
	export DJC_JOBS_LEASE_TIMEOUT=$LEASE DJC_JOBS_KEEP_COMPLETED=true DJC_JOBS_AUTO_REFRESH=false
	export DJC_JOBS_MAX_ATTEMPTS=1 DJC_JOBS_RETRY_DELAY=0.2
	[ "$RUN" = retries ] && { MK="$WORK/mk_retry.sh"; DJC_JOBS_MAX_ATTEMPTS=3; }
	export DJC_DATABASE_URL=$BASEURL
	if [ "$BACKEND" = sqlite ]; then export DJC_DATABASE_URL="sqlite:$RES/djc.db"; BASEURL=$DJC_DATABASE_URL; export DJC_DATABASE_SCHEMA=""
	else export DJC_DATABASE_SCHEMA="stress_$RUN"; fi
	"$DJC" declare "$WORK/p.djc" >/dev/null || { log "declare failed"; return 1; }
	"$DJC" insert Item "$WORK/items.jsonl" >/dev/null || { log "insert failed"; return 1; }
	"$DJC" jobs refresh Res >/dev/null || { log "refresh failed"; return 1; }
	log "$BACKEND/$RUN: $KEYS keys, lease ${LEASE}s, $((HOSTS * GROUPS_PER_HOST)) groups x $PROCS processes"
	local t0 h k tlast="" tend part_at="" heal_at="" restart_at="" restart_took=""
	t0=$(now)
	for h in $(seq 1 $HOSTS); do for k in $(seq 1 $GROUPS_PER_HOST); do start_group $h; done; done
	local kills=0 r parted=0 restarted=0 frozen=""
	while :; do
		sleep 0.5
		r=$(remaining)
		[ -z "$r" ] && continue
		[ "$r" = 0 ] && break
		if [ "$RUN" != chaos ]; then
			if [ "$kills" -lt "$MAX_KILLS" ] && [ "$r" -gt 150 ] && [ $(( $(date +%s%N) / 1000000 % 3 )) = 0 ]; then
				set -- $(alive_groups | shuf -n 1)
				[ $# = 3 ] && { kill_group "$1" "$3"; kills=$((kills + 1)); start_group "$2"; }
			elif [ "$kills" -ge 1 ] && [ -z "$tlast" ] && [ "$r" -le 40 ]; then
				set -- $(alive_groups | shuf -n 1)
				[ $# = 3 ] && { kill_group "$1" "$3"; kills=$((kills + 1)); tlast=$(now); }
			fi
		else
			if [ $parted = 0 ] && [ "$r" -le $((KEYS * 8 / 10)) ]; then
				parted=1
				part_at=$(now)
				if [ $NETNS = 1 ] && [ "$BACKEND" != sqlite ]; then
					ip link set "$(veth 3)a" down
					log "  host 3 cut off: ip link set $(veth 3)a down (remaining $r)"
				else
					frozen=$(alive_groups | awk '$2 == 3 { print $3 }')
					for k in $frozen; do kill -STOP -- "-$k"; done
					log "  host 3 frozen: SIGSTOP of its process groups (remaining $r)"
				fi
				echo "cut host 3 at remaining=$r" >> "$RES/events"
				sleep "$(awk -v l="$LEASE" 'BEGIN { print 2.5 * l }')"
				if [ $NETNS = 1 ] && [ "$BACKEND" != sqlite ]; then ip link set "$(veth 3)a" up; else for k in $frozen; do kill -CONT -- "-$k"; done; fi
				heal_at=$(now)
				log "  host 3 healed (remaining $(remaining))"
				echo "healed host 3 at remaining=$(remaining)" >> "$RES/events"
			elif [ $parted = 1 ] && [ $restarted = 0 ] && [ "$BACKEND" != sqlite ] && [ "$r" -le $((KEYS * 4 / 10)) ]; then
				restarted=1
				local ts=$(now)
				if [ "$BACKEND" = postgresql ]; then "$ROOT/scripts/pg-server.sh" restart "$WORK/pg" >/dev/null
				else "$ROOT/scripts/mariadb-server.sh" restart "$WORK/my" >/dev/null; fi
				restart_at=$ts
				restart_took=$(awk -v a="$ts" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
				log "  $BACKEND server restarted in ${restart_took}s (remaining $(remaining))"
				echo "server restart at remaining=$r took ${restart_took}s" >> "$RES/events"
			fi
		fi
		if awk -v a="$t0" -v b="$(now)" 'BEGIN { exit !(b - a > 400) }'; then log "  giving up: run exceeds 400 s"; break; fi
	done
	tend=$(now)
	wait_all_done 60
	local left
	left=$(alive_groups)
	if [ -n "$left" ]; then log "  groups still running: $left"; for g in $(echo "$left" | awk '{ print $3 }'); do kill -KILL -- "-$g" 2>/dev/null; done; fi
	"$DJC" fetch Res --format json > "$RES/rows.jsonl"
	"$DJC" jobs Res > "$RES/jobs.txt"
	for k in pending reserved success error ignore; do "$DJC" jobs Res --status $k --json; done > "$RES/jobs.jsonl"
	# the attempt history of every key that failed on purpose
	: > "$RES/history.jsonl"
	if [ "$RUN" = retries ]; then
		for k in $(seq 1 "$KEYS"); do
			if [ $((k % 7)) = 0 ] || [ $((k % 11)) = 0 ]; then "$DJC" jobs Res --key "{\"k\": $k}" --json >> "$RES/history.jsonl"; fi
		done
	fi
	python3 - "$RES" "$KEYS" "$LEASE" "$BACKEND" "$RUN" "$t0" "$tend" "${tlast:-}" "$NETNS" "$left" >> "$REPORT" <<'P'
import json, os, sys
res, keys, lease, backend, run, t0, tend, tlast, netns, left = sys.argv[1:11]
keys = int(keys); lease = float(lease); t0 = float(t0); tend = float(tend)
ok = True
out = []
def check(cond, what):
    global ok
    if not cond: ok = False
    out.append("- [%s] %s" % ("x" if cond else " ", what))
rows = [json.loads(l) for l in open(os.path.join(res, "rows.jsonl")) if l.strip()]
att = {}
for l in open(os.path.join(res, "makes.log")):
    p = l.split()
    if len(p) != 4: continue
    kind, k, a, w = p
    d = att.setdefault(a, {"k": int(k), "w": w, "end": False, "term": False, "fail": False})
    d[kind if kind != "start" else "start"] = True
def fails(k):  # the failures of key k on purpose (retries run)
    if run != "retries": return 0
    return 2 if k % 11 == 0 else 1 if k % 7 == 0 else 0
killed = set(l.strip() for l in open(os.path.join(res, "killed")) if l.strip())
groups = [l.split() for l in open(os.path.join(res, "groups")) if l.strip()]
rep = {}
for g in groups:
    s = {"success_count": 0, "lost_count": 0, "error_count": 0, "skipped_count": 0, "retried_count": 0, "runs": 0}
    fn = os.path.join(res, g[0] + ".json")
    if os.path.exists(fn):
        for l in open(fn):
            try: j = json.loads(l)
            except Exception: continue
            s["runs"] += 1
            for f in ("success_count", "lost_count", "error_count", "skipped_count", "retried_count"): s[f] += j.get(f, 0)
    rep[g[0]] = s
jobs = [j for l in open(os.path.join(res, "jobs.jsonl")) if l.strip() for j in json.loads(l)["jobs"]]
status = {}
for j in jobs: status[j["status"]] = status.get(j["status"], 0) + 1
starts = len(att)
per_key = {}
for a, d in att.items(): per_key.setdefault(d["k"], []).append(a)
committed = {r["attempt"] for r in rows}
rowkeys = [r["k"] for r in rows]
out.append("")
out.append("### %s, %s run" % (backend, run))
out.append("")
out.append("```")
for l in open(os.path.join(res, "events")): out.append(l.rstrip())
out.append("worker groups started: %d, SIGKILLed: %d; make starts: %d; wall time %.1f s" % (len(groups), len(killed), starts, tend - t0))
out.append("jobs table: " + ", ".join("%s %d" % kv for kv in sorted(status.items())))
hist = {}
for j in jobs: hist[j.get("reservations")] = hist.get(j.get("reservations"), 0) + 1
out.append("reservations per key: " + ", ".join("%s x%s" % (n, c) for c, n in sorted(hist.items(), key=lambda x: (x[0] is None, x[0]))))
made_twice = sum(1 for k, a in per_key.items() if len(a) > 1)
cat = {"killed with its worker": 0, "stopped: reservation lost": 0, "finished, commit refused (reservation lost)": 0,
       "failed on purpose (retried)": 0, "unexplained": 0}
surv_lost_attempts = {}
surv_fails = {}
for a, d in att.items():
    if a in committed: continue
    if d["fail"]:
        cat["failed on purpose (retried)"] += 1; surv_fails[d["w"]] = surv_fails.get(d["w"], 0) + 1
    elif d["w"] in killed and not d["term"]:
        cat["killed with its worker"] += 1
    elif d["term"]:
        cat["stopped: reservation lost"] += 1; surv_lost_attempts[d["w"]] = surv_lost_attempts.get(d["w"], 0) + 1
    elif d["end"]:
        cat["finished, commit refused (reservation lost)"] += 1; surv_lost_attempts[d["w"]] = surv_lost_attempts.get(d["w"], 0) + 1
    else:
        cat["unexplained"] += 1
out.append("keys made exactly once: %d; keys made more than once: %d; extra makes: %d" % (sum(1 for a in per_key.values() if len(a) == 1), made_twice, starts - len(per_key)))
for c, n in cat.items(): out.append("  extra makes %s: %d" % (c, n))
tot = {f: sum(s[f] for s in rep.values()) for f in ("success_count", "lost_count", "error_count", "skipped_count", "retried_count")}
out.append("workers' reports (surviving groups' populate --json, summed): " + ", ".join("%s %d" % kv for kv in tot.items()))
if tlast:
    out.append("last SIGKILL to last commit: %.1f s (lease %.0f s)" % (tend - float(tlast), lease))
out.append("```")
out.append("")
check(len(rows) == keys and len(set(rowkeys)) == keys, "every key committed exactly once: %d rows, %d distinct keys, %d keys" % (len(rows), len(set(rowkeys)), keys))
check(all(a in att and att[a]["end"] for a in committed), "every committed row comes from a make that finished")
check(all(att[r["attempt"]]["w"] == r["worker"] for r in rows if r["attempt"] in att), "every row names the worker group that made it")
check(status.get("success", 0) == keys and sum(status.values()) == keys, "jobs table: all %d success; nothing pending, reserved or in error" % keys)
check(tot["error_count"] == 0 and tot["skipped_count"] == 0, "no errors, nothing skipped")
bad = []
for g in groups:
    w = g[0]
    if w in killed: continue
    mine = sum(1 for r in rows if r["worker"] == w)
    if mine != rep[w]["success_count"]: bad.append("%s: %d rows, reported %d" % (w, mine, rep[w]["success_count"]))
    if surv_lost_attempts.get(w, 0) != rep[w]["lost_count"]: bad.append("%s: %d lost makes, reported %d" % (w, surv_lost_attempts.get(w, 0), rep[w]["lost_count"]))
check(not bad, "each surviving group reports exactly its own commits, and its lost count equals its stopped/refused makes" + ("" if not bad else ": " + "; ".join(bad)))
check(cat["unexplained"] == 0, "every make beyond one per key is accounted for (killed with its worker, lost reservation, or failed on purpose)")
if run == "retries":
    want = {k: fails(k) for k in range(1, keys + 1)}
    badn = [r["k"] for r in rows if r.get("n") != want[r["k"]] + 1]
    check(not badn, "every row comes from the attempt after its failures (DJC_ATTEMPT = failures + 1)" + ("" if not badn else ": keys %s" % badn[:10]))
    bada = [j["k"] for j in jobs if j.get("attempts") != want[j["k"]]]
    check(not bada, "every job's attempts equals its failures on purpose (%d failures in all)" % sum(want.values()) + ("" if not bada else ": keys %s" % bada[:10]))
    hist_rows = [json.loads(l) for l in open(os.path.join(res, "history.jsonl")) if l.strip()]
    badh = [h["job"]["k"] for h in hist_rows if [x["outcome"] for x in h["history"] if x["outcome"] != "lease expired"] != ["error"] * want[h["job"]["k"]] + ["success"]]
    check(len(hist_rows) == sum(1 for k in want if want[k]) and not badh,
          "the history of each key that failed: its errors, then its success (%d keys; lapsed attempts aside)" % len(hist_rows) + ("" if not badh else ": keys %s" % badh[:10]))
    badr = ["%s: %d retried, %d failed makes" % (w, rep[w]["retried_count"], surv_fails.get(w, 0)) for w in rep if w not in killed and rep[w]["retried_count"] != surv_fails.get(w, 0)]
    check(not badr, "each surviving group's retried count equals its failed makes" + ("" if not badr else ": " + "; ".join(badr)))
check(not left, "every worker group finished by itself")
if run == "chaos":
    check(cat["stopped: reservation lost"] + cat["finished, commit refused (reservation lost)"] > 0,
          "the cut host lost reservations (its late commits refused / makes stopped) and others took the keys over")
print("\n".join(out))
print("\n**%s**\n" % ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
P
	local rc=$?
	[ $rc = 0 ] || FAILS=$((FAILS + 1))
	log "$BACKEND/$RUN: $( [ $rc = 0 ] && echo PASS || echo FAIL )"
	for g in $ALLPG; do kill -KILL -- "-$g" 2>/dev/null; done
	ALLPG=""
}

# ------------------------------------------------------------ main
REPORT=$WORK/report.md
START=$(date +%s)
{
	echo "## Run of $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`make stress\` (tests/stress/run.sh); $KEYS keys, lease ${LEASE} s, $HOSTS hosts x $GROUPS_PER_HOST groups x $PROCS processes ($((HOSTS * GROUPS_PER_HOST * PROCS)) worker processes)."
	if [ $NETNS = 1 ]; then echo "Hosts: network namespaces joined by veth pairs to the database's namespace; the cut is \`ip link set down\` of host 3's veth (SQLite: SIGSTOP freeze)."
	else echo "Hosts: local process groups (not root); the cut is a SIGSTOP freeze of host 3's groups."; fi
	echo
	echo "Each make start, end and stop (SIGTERM) is logged by the make program with O_APPEND writes"
	echo "outside the database; each committed row names the make attempt and worker group that"
	echo "produced it. *Extra makes* are makes of a key beyond its first: *killed with its worker*"
	echo "(the group was SIGKILLed; its job was taken over after the lease), *stopped* (the heartbeat"
	echo "found the reservation taken, or the watchdog could not prove it for a lease) or *finished,"
	echo "commit refused* (the fenced commit found another token: DJC_ELOST, nothing written). The"
	echo "last two must equal the lost counts the surviving workers report themselves. In the"
	echo "retries run (jobs.max_attempts 3) some makes also *failed on purpose* (keys divisible by 7"
	echo "on their first attempt, by 11 on their first two): each such job went back to pending by"
	echo "itself and was claimed again; its committed row must come from the attempt after its failures."
} > "$REPORT"
for BACKEND in $BACKENDS; do
	case $BACKEND in
	sqlite) BASEURL="sqlite:$WORK/unused.db" ;;
	postgresql) BASEURL=$("$ROOT/scripts/pg-server.sh" start "$WORK/pg") || { log "PostgreSQL did not start"; FAILS=$((FAILS + 1)); continue; } ;;
	mysql) BASEURL=$("$ROOT/scripts/mariadb-server.sh" start "$WORK/my") || { log "MariaDB did not start"; FAILS=$((FAILS + 1)); continue; } ;;
	esac
	for r in $RUNS; do
		case $r in
		crash | chaos | retries) run_one "$r" ;;
		*) log "unknown run '$r' (crash, chaos, retries)"; FAILS=$((FAILS + 1)) ;;
		esac
	done
	case $BACKEND in
	postgresql) "$ROOT/scripts/pg-server.sh" stop "$WORK/pg" >/dev/null 2>&1 ;;
	mysql) "$ROOT/scripts/mariadb-server.sh" stop "$WORK/my" >/dev/null 2>&1 ;;
	esac
done
echo "Total time $(( $(date +%s) - START )) s; $FAILS failing run(s)." >> "$REPORT"
cat "$REPORT"
cp "$REPORT" "$OUTFILE" && log "results written to $OUTFILE"
[ $FAILS = 0 ]
