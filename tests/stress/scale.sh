#!/bin/bash
# scale.sh - `make stress`, part 2: a thousand workers on one server (issue 14).
#
# `djc worker` processes spread over 3 simulated hosts (network namespaces
# joined to the database's by veth pairs, as run.sh does; without root they
# are local process groups) work KEYS keys whose make program sleeps a
# pseudo-random 0.2-2 s (so the two cores are not what limits them), at 10,
# 100 and 1,000 worker processes:
#   - PostgreSQL with max_connections = 50, reached through pgbouncer in
#     transaction pooling mode (scripts/pgbouncer.sh, a pool of 40 server
#     connections), the workers' URL saying ?pooler=transaction;
#   - MariaDB with max_connections raised to 3000 (SET GLOBAL, as
#     docs/workers.md says).
# Measured per run: the peak number of connections the server holds
# (sampled every 0.5 s), claims per second (keys / time from starting the
# workers to the end of the last make, the make log's modification time),
# the server's CPU time per job (its processes' user + system time, /proc,
# from before the workers start to a second after the last make ended;
# pgbouncer's own beside it), the statements sent over the same span (per
# job, and the server's CPU per statement: whether a bigger run costs more
# statements or dearer ones), and, once every key is made and the workers
# idle (10 s on, their backoff at its cap), the statements per second each
# idle worker sends (pgbouncer's SHOW STATS total_query_count, which counts
# as it goes; MariaDB's Questions) over 30 s.
# Checked: every key committed exactly once and made exactly once (the make
# program logs each start and end outside the database, O_APPEND), each
# worker group's reported count, nothing left pending, reserved or in error,
# and the coordination cost per job at 1,000 workers within 2x of that at 10.
#
#   DJC_BACKENDS="postgresql mysql"  SCALE_WORKERS="10 100 1000"
#   SCALE_KEYS="400 3000 20000" (keys per run, in the same order)
#   SCALE_OUT=docs/scale-results.md
#   SCALE_KEEP=1 keeps the work directory (logs, the servers' data) to look into a failure
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${DJC_BUILD:-build}
DJC=$ROOT/$BUILD/djc
BACKENDS=${DJC_BACKENDS:-postgresql mysql}
read -r -a SCALES <<< "${SCALE_WORKERS:-10 100 1000}"
read -r -a KEYSAT <<< "${SCALE_KEYS:-400 3000 20000}"
OUTFILE=${SCALE_OUT:-$ROOT/docs/scale-results.md}
HOSTS=3
PER_GROUP=25          # worker processes per `djc worker --processes N` command
IDLE_WINDOW=30
[ -x "$DJC" ] || { echo "scale: $DJC not built (make all)" >&2; exit 2; }
[ ${#SCALES[@]} = ${#KEYSAT[@]} ] || { echo "scale: SCALE_WORKERS and SCALE_KEYS differ in length" >&2; exit 2; }
WORK=$(mktemp -d /tmp/djc-scale.XXXXXX)
chmod 755 "$WORK"
TAG=z$$
FAILS=0
RATIOS=""

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
NET=10.78
. "$ROOT/tests/stress/hosts.sh"

ALLPG=""
cleanup() {
	local g
	for g in $ALLPG; do kill -KILL -- "-$g" 2>/dev/null; done
	[ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null
	[ -d "$WORK/pgb" ] && "$ROOT/scripts/pgbouncer.sh" stop "$WORK/pgb" >/dev/null 2>&1
	[ -d "$WORK/pg" ] && "$ROOT/scripts/pg-server.sh" stop "$WORK/pg" >/dev/null 2>&1
	[ -d "$WORK/my" ] && "$ROOT/scripts/mariadb-server.sh" stop "$WORK/my" >/dev/null 2>&1
	hosts_down
	if [ -n "${SCALE_KEEP:-}" ]; then echo "scale: kept $WORK (SCALE_KEEP)" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

hosts_up
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# ------------------------------------------------------------ programs
cat > "$WORK/p.djc" <<'P'
Item (manual)
    k : int32
    ---

Res (computed)
    -> Item
    ---
    attempt : varchar(80)
    host : varchar(16)
P
cat > "$WORK/mk.sh" <<'P'
#!/bin/sh
k=$DJC_KEY_k
echo "start $k $$ $SCALE_HOST" >> "$MK_LOG"
ms=$(( 200 + (k * 7919 + 13) % 1801 ))
sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
echo "{\"attempt\": \"$k-$$\", \"host\": \"$SCALE_HOST\"}"
echo "end $k $$ $SCALE_HOST" >> "$MK_LOG"
P
chmod +x "$WORK/mk.sh"
# CPU seconds (user + system) of processes: each pid's own, plus, with +PID,
# what its exited children used (the postmaster reaps the backends)
cat > "$WORK/cpu.py" <<'P'
import os, sys
tck = os.sysconf("SC_CLK_TCK")
tot = 0
for a in sys.argv[1:]:
    withkids = a.startswith("+")
    try:
        f = open("/proc/%s/stat" % a.lstrip("+")).read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    tot += int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if withkids else 0)
print("%.2f" % (tot / tck))
P

# ------------------------------------------------------------ per backend
server_cpu() {
	case $BACKEND in
	postgresql)
		local pm kids
		pm=$(head -n 1 "$WORK/pg/data/postmaster.pid")
		kids=$(ps -o pid= --ppid "$pm" | tr '\n' ' ')
		python3 "$WORK/cpu.py" "+$pm" $kids ;;
	mysql) python3 "$WORK/cpu.py" "$(cat "$WORK/my/pid")" ;;
	esac
}
pooler_cpu() { [ "$BACKEND" = postgresql ] && python3 "$WORK/cpu.py" "$(cat "$WORK/pgb/pid")" || echo 0; }
server_conns() {  # client connections the server holds now (not counting this one)
	case $BACKEND in
	postgresql) "$ROOT/scripts/pg-server.sh" psql "$WORK/pg" -qAt -c "SELECT count(*) - 1 FROM pg_stat_activity WHERE backend_type = 'client backend'" 2>/dev/null ;;
	mysql) "$ROOT/scripts/mariadb-server.sh" client "$WORK/my" -N -e "SELECT VARIABLE_VALUE - 1 FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'" 2>/dev/null ;;
	esac
}
queries() {  # statements the workers sent so far
	case $BACKEND in
	postgresql) "$ROOT/scripts/pgbouncer.sh" admin "$WORK/pgb" "SHOW STATS" | awk -F"|" '$1 == "djc" { print $3 }' ;;
	mysql) "$ROOT/scripts/mariadb-server.sh" client "$WORK/my" -N -e "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'" ;;
	esac
}
url_for_host() {  # HOST: the workers' URL from that host
	local u=$WURL
	[ $NETNS = 1 ] && u=${u/127.0.0.1/$(host_ip $1)}
	echo "$u"
}

start_backend() {
	case $BACKEND in
	postgresql)
		local pgurl
		pgurl=$("$ROOT/scripts/pg-server.sh" start "$WORK/pg") || return 1
		"$ROOT/scripts/pg-server.sh" psql "$WORK/pg" -qAt -c "ALTER SYSTEM SET max_connections = 50" >/dev/null || return 1
		"$ROOT/scripts/pg-server.sh" restart "$WORK/pg" || return 1
		local bu
		bu=$(PGB_POOL_SIZE=40 PGB_MAX_CLIENTS=3000 "$ROOT/scripts/pgbouncer.sh" start "$WORK/pgb" "$pgurl") || return 1
		WURL="$bu?pooler=transaction"
		ADMURL="$bu?pooler=transaction"
		log "PostgreSQL max_connections = $("$ROOT/scripts/pg-server.sh" psql "$WORK/pg" -qAt -c 'SHOW max_connections'), behind pgbouncer (pool_mode = transaction, 40 server connections)" ;;
	mysql)
		# the thread pool (docs/workers.md): with one thread per connection,
		# a thousand workers' claims ran at once on two cores and thrashed
		# InnoDB's locks (1.4 claims/s, row lock waits of 9.6 s on average)
		WURL=$(MARIADB_OPTS="--thread-handling=pool-of-threads" "$ROOT/scripts/mariadb-server.sh" start "$WORK/my") || return 1
		"$ROOT/scripts/mariadb-server.sh" client "$WORK/my" -e "SET GLOBAL max_connections = 3000" || return 1
		ADMURL=$WURL
		log "MariaDB max_connections = $("$ROOT/scripts/mariadb-server.sh" client "$WORK/my" -N -e 'SELECT @@max_connections'), thread_handling = $("$ROOT/scripts/mariadb-server.sh" client "$WORK/my" -N -e 'SELECT @@thread_handling'), open_files_limit = $("$ROOT/scripts/mariadb-server.sh" client "$WORK/my" -N -e 'SELECT @@open_files_limit')" ;;
	esac
}
stop_backend() {
	[ -d "$WORK/pgb" ] && "$ROOT/scripts/pgbouncer.sh" stop "$WORK/pgb" >/dev/null 2>&1
	[ -d "$WORK/pg" ] && "$ROOT/scripts/pg-server.sh" stop "$WORK/pg" >/dev/null 2>&1
	[ -d "$WORK/my" ] && "$ROOT/scripts/mariadb-server.sh" stop "$WORK/my" >/dev/null 2>&1
}

# ------------------------------------------------------------ one run
run_one() {  # WORKERS KEYS
	local W=$1 K=$2
	RES=$WORK/res-$BACKEND-$W
	mkdir -p "$RES"
	chmod 777 "$RES"
	export MK_LOG=$RES/makes.log DJC_DATABASE_SCHEMA=scale_$W DJC_DATABASE_URL=$ADMURL
	: > "$MK_LOG"
	chmod 666 "$MK_LOG"
	"$DJC" declare "$WORK/p.djc" > /dev/null || { log "declare failed"; return 1; }
	python3 -c "import sys; [print('{\"k\": %d}' % k) for k in range(1, int(sys.argv[1]) + 1)]" "$K" > "$RES/items.jsonl"
	"$DJC" insert Item "$RES/items.jsonl" > /dev/null || { log "insert failed"; return 1; }
	"$DJC" jobs refresh Res > /dev/null || { log "refresh failed"; return 1; }
	# groups: `djc worker --processes P`, spread over the hosts
	local G=$(( (W + PER_GROUP - 1) / PER_GROUP )) g
	[ $G -lt $HOSTS ] && G=$HOSTS
	[ $G -gt $W ] && G=$W
	# sample the server's connections every 0.5 s until the work is done
	( peak=0; while [ ! -e "$RES/done" ]; do n=$(server_conns); [ -n "$n" ] && [ "$n" -gt "$peak" ] && peak=$n && echo "$peak" > "$RES/peak"; sleep 0.5; done ) &
	SAMPLER=$!
	local cpu0 pcpu0 t0 rq0 rq1
	cpu0=$(server_cpu)
	pcpu0=$(pooler_cpu)
	rq0=$(queries)
	t0=$(date +%s.%N)
	log "$BACKEND: $W worker processes ($G groups over $HOSTS hosts), $K keys"
	for g in $(seq 1 $G); do
		local h=$(( (g - 1) % HOSTS + 1 )) p=$(( W / G + (g <= W % G ? 1 : 0) ))
		local cmd=(setsid env SCALE_HOST="h$h" DJC_DATABASE_URL="$(url_for_host $h)" "$DJC" worker Res --processes "$p" --idle-exit 90 --json --make "$WORK/mk.sh")
		if [ $NETNS = 1 ]; then ip netns exec "$(ns $h)" "${cmd[@]}" > "$RES/g$g.json" 2> "$RES/g$g.err" &
		else "${cmd[@]}" > "$RES/g$g.json" 2> "$RES/g$g.err" & fi
		echo $! >> "$RES/pids"
	done
	sleep 1
	local pid
	for pid in $(cat "$RES/pids"); do ALLPG="$ALLPG $(ps -o pgid= -p "$pid" | tr -d ' ')"; done
	# until every key's make ended (the log, not the database), at most 30 min
	local i=0 ends
	while :; do
		ends=$(grep -c '^end ' "$MK_LOG")
		[ "$ends" -ge "$K" ] && break
		i=$((i + 1))
		[ $i -gt 3600 ] && { log "  giving up: $ends of $K made after 30 min"; break; }
		sleep 0.5
	done
	sleep 1   # the last commits
	touch "$RES/done"
	wait "$SAMPLER" 2>/dev/null
	SAMPLER=""
	local cpu1 pcpu1 t1
	cpu1=$(server_cpu)
	pcpu1=$(pooler_cpu)
	rq1=$(queries)
	t1=$(date +%s.%N)
	# idle: the backoff reaches its cap, then the statements over the window
	sleep 10
	local q0 q1 icpu0 icpu1
	q0=$(queries); icpu0=$(server_cpu)
	sleep $IDLE_WINDOW
	q1=$(queries); icpu1=$(server_cpu)
	for pid in $(cat "$RES/pids"); do kill -TERM -- "-$(ps -o pgid= -p "$pid" | tr -d ' ')" 2>/dev/null; done
	for pid in $(cat "$RES/pids"); do wait "$pid" 2>/dev/null; done
	"$DJC" fetch Res --format json > "$RES/rows.jsonl"
	"$DJC" jobs Res --json > "$RES/jobs.json"
	python3 - "$RES" "$BACKEND" "$W" "$K" "$G" "$t0" "$t1" "$cpu0" "$cpu1" "$pcpu0" "$pcpu1" "$(cat "$RES/peak" 2>/dev/null || echo 0)" \
		"$q0" "$q1" "$IDLE_WINDOW" "$icpu0" "$icpu1" "$rq0" "$rq1" >> "$REPORT" 2> "$RES/ratio" <<'P'
import glob, json, os, sys
res, backend, W, K, G, t0, t1, cpu0, cpu1, pcpu0, pcpu1, peak, q0, q1, win, icpu0, icpu1, rq0, rq1 = sys.argv[1:20]
W, K, G, win = int(W), int(K), int(G), float(win)
ok = True
out = []
def check(cond, what):
    global ok
    if not cond: ok = False
    out.append("- [%s] %s" % ("x" if cond else " ", what))
starts, ends, first, last = {}, {}, None, None
for l in open(os.path.join(res, "makes.log")):
    p = l.split()
    if len(p) != 4: continue
    (starts if p[0] == "start" else ends).setdefault(int(p[1]), []).append(p[2])
mtime = os.path.getmtime(os.path.join(res, "makes.log"))
rows = [json.loads(l) for l in open(os.path.join(res, "rows.jsonl")) if l.strip()]
jobs = json.load(open(os.path.join(res, "jobs.json")))
rep = {"success_count": 0, "error_count": 0, "lost_count": 0, "skipped_count": 0}
stops = {}
for f in glob.glob(os.path.join(res, "g*.json")):
    try: j = json.loads(open(f).read())
    except Exception: continue
    for k in rep: rep[k] += j.get(k, 0)
    for k, v in j.get("stopped", {}).items(): stops[k] = stops.get(k, 0) + v
hosts = {}
for r in rows: hosts[r["host"]] = hosts.get(r["host"], 0) + 1
wall = mtime - float(t0)   # to the end of the last make
cpu = float(cpu1) - float(cpu0)
pcpu = float(pcpu1) - float(pcpu0)
idle_q = (int(q1) - int(q0)) / win / W if q0.strip() and q1.strip() else float("nan")
idle_cpu = (float(icpu1) - float(icpu0)) / win
out.append("")
out.append("### %s, %d worker processes, %d keys" % (backend, W, K))
out.append("")
out.append("```")
out.append("worker groups: %d (djc worker --processes %s), rows by host: %s" % (G, "/".join(sorted({str(W // G), str(W // G + (1 if W % G else 0))})), ", ".join("%s %d" % kv for kv in sorted(hosts.items()))))
out.append("peak server connections: %s" % peak)
out.append("wall time from starting the workers to the last make's end: %.1f s; claims per second: %.1f" % (wall, K / wall))
out.append("server CPU: %.2f s in all, %.2f ms per job" % (cpu, 1000 * cpu / K))
if rq0.strip() and rq1.strip():
    nq = int(rq1) - int(rq0)
    out.append("statements from start to end: %d, %.2f per job; server CPU per statement %.0f us" % (nq, nq / K, 1e6 * cpu / nq if nq else float("nan")))
if backend == "postgresql": out.append("pgbouncer CPU: %.2f s in all, %.2f ms per job" % (pcpu, 1000 * pcpu / K))
out.append("idle (%.0f s window after the backoff reached its cap): %.3f statements per second per worker; server CPU %.1f%% of a core" % (win, idle_q, 100 * idle_cpu))
out.append("workers' reports: " + ", ".join("%s %d" % kv for kv in rep.items()) + "; stopped: " + json.dumps(stops))
out.append("```")
out.append("")
check(len(rows) == K and len({r["attempt"].split("-")[0] for r in rows}) == K, "every key committed exactly once: %d rows, %d keys" % (len(rows), K))
check(len(starts) == K and all(len(v) == 1 for v in starts.values()), "every key made exactly once (the make log: %d starts for %d keys)" % (sum(len(v) for v in starts.values()), K))
check(all(str(ends.get(int(r["attempt"].split("-")[0]), [""])[0]) == r["attempt"].split("-")[1] for r in rows), "every row comes from the make that ended for its key")
check(rep["success_count"] == K and rep["error_count"] == 0 and rep["lost_count"] == 0, "the workers report %d made, no error, nothing lost" % K)
check(all(jobs[s] == 0 for s in ("pending", "reserved", "error")), "jobs table: nothing pending, reserved or in error")
if backend == "postgresql": check(int(peak) <= 50, "the server never held more than its max_connections (50): peak %s" % peak)
print("\n".join(out))
print("\n**%s**\n" % ("PASS" if ok else "FAIL"))
sys.stderr.write("%.6f\n" % (cpu / K))
sys.exit(0 if ok else 1)
P
	local rc=$?
	[ $rc = 0 ] || FAILS=$((FAILS + 1))
	RATIOS="$RATIOS $BACKEND:$W:$(cat "$RES/ratio")"
	log "$BACKEND/$W: $( [ $rc = 0 ] && echo PASS || echo FAIL )"
	ALLPG=""
}

# ------------------------------------------------------------ main
REPORT=$WORK/report.md
START=$(date +%s)
{
	echo "## Scale run of $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`DJC_BACKENDS=\"$BACKENDS\" SCALE_WORKERS=\"${SCALES[*]}\" SCALE_KEYS=\"${KEYSAT[*]}\" tests/stress/scale.sh\`"
	echo "(\`make stress\` runs it after run.sh, by default at 10, 100 and 1,000 worker processes with 400, 3,000 and 20,000 keys);"
	if [ "${SCALES[*]}" != "10 100 1000" ] || [ "${KEYSAT[*]}" != "400 3000 20000" ]; then
		echo "**this run used other sizes than the default: worker processes ${SCALES[*]}, keys ${KEYSAT[*]}**;"
	fi
	echo "make programs sleep 0.2-2 s (pseudo-random by key); jobs.reserve_batch 1, lease 60 s, refresh interval 10 s."
	if [ $NETNS = 1 ]; then echo "Hosts: $HOSTS network namespaces joined by veth pairs to the database's namespace."
	else echo "Hosts: local process groups (not root)."; fi
	echo "Machine: $(nproc) cores, load average at the start $(cut -d' ' -f1-3 /proc/loadavg) (shared with other work)."
} > "$REPORT"
for BACKEND in $BACKENDS; do
	case $BACKEND in postgresql|mysql) ;; *) log "scale: $BACKEND skipped (a scale run needs a server: postgresql or mysql)"; continue ;; esac
	if ! start_backend; then log "$BACKEND did not start"; FAILS=$((FAILS + 1)); stop_backend; continue; fi
	for i in "${!SCALES[@]}"; do
		run_one "${SCALES[$i]}" "${KEYSAT[$i]}" || { [ -e "$RES/ratio" ] || FAILS=$((FAILS + 1)); }
	done
	stop_backend
	# the coordination cost per job: the largest run within 2x of the smallest
	python3 - "$BACKEND" $RATIOS >> "$REPORT" <<'P'
import sys
b = sys.argv[1]
v = [(int(x.split(":")[1]), float(x.split(":")[2])) for x in sys.argv[2:] if x.startswith(b + ":")]
if len(v) >= 2:
    v.sort()
    r = v[-1][1] / v[0][1] if v[0][1] > 0 else float("inf")
    ok = r <= 2.0
    print("- [%s] %s: server CPU per job at %d workers is %.2fx that at %d workers (within 2x)\n" % ("x" if ok else " ", b, v[-1][0], r, v[0][0]))
    if not ok: sys.exit(1)
P
	[ $? = 0 ] || FAILS=$((FAILS + 1))
done
echo "Total time $(( $(date +%s) - START )) s; $FAILS failing check(s)." >> "$REPORT"
cat "$REPORT"
cp "$REPORT" "$OUTFILE" && log "results written to $OUTFILE"
[ $FAILS = 0 ]
