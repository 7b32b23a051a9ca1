#!/bin/bash
# test_clocks.sh - leases keep working when a worker's clock is off or
# steps (issue 12.5). Lease times are the database's clock: on a server the
# server's; on SQLite every process reads the machine's one kernel clock
# (src/db/sqlite.c, djc_now), so a process whose C library reports another
# time (libfaketime preloaded) neither steals nor blocks others' leases.
# The worker's own timers (heartbeat period, lease proof) run on
# CLOCK_MONOTONIC, so a wall clock that steps back mid-make does not stop
# its renewals. Every make start is logged; a key made twice shows there.
. "$ROOT/tests/cli/lib.sh"

FT_LIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -1)
[ -n "$FT_LIB" ] || { echo "test_clocks: libfaketime is not installed (Debian package faketime)" >&2; exit 1; }

export DJC_JOBS_LEASE_TIMEOUT=1
cat > p.djc <<'P'
K (manual)
    k : int32
    ---

Ahead (computed)
    -> K
    ---
    v : int32

Behind (computed)
    -> K
    ---
    v : int32

Step (computed)
    -> K
    ---
    v : int32
P
# logs "start TABLE KEY" (O_APPEND), sleeps MK_SLEEP seconds, prints v = 1
cat > mk.sh <<'P'
#!/bin/sh
echo "start $DJC_TABLE $DJC_KEY_k" >> "$T/log"
sleep "${MK_SLEEP:-3}"
echo '{"v": 1}'
P
chmod +x mk.sh
: > log
expect_rc 0 "declare" djc declare p.djc
expect_out "insert a key" "inserted 1 row into K" sh -c 'echo "{\"k\": 1}" | "$DJC" insert K'

starts() { grep -c "^start $1 " log; }
wait_start() {  # TABLE: until one more of its makes started (at most ~20 s)
	local before=${2:-0}
	for _ in $(seq 1 200); do [ "$(starts "$1")" -gt "$before" ] && return 0; nap 0.1; done
	return 1
}
faked() {  # OFFSET CMD...: run with the C library's clock shifted by OFFSET
	local off=$1; shift
	LD_PRELOAD=$FT_LIB FAKETIME="$off" DONT_FAKE_MONOTONIC=1 "$@"
}

# 1 and 2 preload libfaketime, which hangs a program under AddressSanitizer
# (its clock_gettime recurses into ASan's start): a sanitizer build runs
# case 3 alone (lib.sh's ASAN_PRELOAD); the plain build of make check runs all
if [ -n "$ASAN_PRELOAD" ]; then
	echo "test_clocks: AddressSanitizer build: the libfaketime cases (1, 2) run in the plain build only"
else
	# 1. a worker two hours ahead cannot steal a live lease
	MK_SLEEP=3 djc populate Ahead --reserve-jobs --make ./mk.sh > a.out 2>&1 &
	apid=$!
	check "ahead: the holder's make started" wait_start Ahead
	for i in 1 2 3; do
		faked "+2h" "$DJC" populate Ahead --reserve-jobs --no-refresh --make ./mk.sh > "b.$i" 2>&1
		nap 0.5
	done
	wait $apid
	check "ahead: the holder committed" [ "$(cat a.out)" = "Ahead: 1 made, 0 errors, 0 skipped" ]
	check "ahead: the key was made once (no steal)" [ "$(starts Ahead)" = 1 ]
	check "ahead: the faked worker made nothing" [ "$(cat b.1 b.2 b.3 | grep -c '^Ahead: 0 made')" = 3 ]

	# 2. a worker two hours behind holds a live lease that others must not take
	MK_SLEEP=3 faked "-2h" "$DJC" populate Behind --reserve-jobs --make ./mk.sh > a2.out 2>&1 &
	apid=$!
	check "behind: the holder's make started" wait_start Behind
	for i in 1 2 3; do
		djc populate Behind --reserve-jobs --no-refresh --make ./mk.sh > "c.$i" 2>&1
		nap 0.5
	done
	wait $apid
	check "behind: the holder committed" [ "$(cat a2.out)" = "Behind: 1 made, 0 errors, 0 skipped" ]
	check "behind: the key was made once" [ "$(starts Behind)" = 1 ]
fi

# 3. the holder's wall clock steps while its make runs: its heartbeat
# keeps renewing (timers on CLOCK_MONOTONIC), nobody takes the job over.
# clockshift.so shifts the wall clock the process reads but not the kernel's
# timed waits: to a timer computed from the wall clock, "+3600" is exactly a
# system clock stepped back an hour after the deadline was computed (the
# wait then lasts an hour more); "-3600" the other way.
cc -shared -fPIC -o clockshift.so "$ROOT/tests/cli/clockshift.c" -ldl || { echo "cannot build clockshift.so" >&2; exit 1; }
n=0
for shift in 3600 -3600; do
	n=$((n + 1))
	echo "{\"k\": $((n + 1))}" | "$DJC" insert K > /dev/null
	echo 0 > shift
	MK_SLEEP=4 LD_PRELOAD="$ASAN_PRELOAD$T/clockshift.so" CLOCKSHIFT_FILE="$T/shift" \
		"$DJC" populate Step --reserve-jobs --where "{\"k\": $((n + 1))}" --make ./mk.sh > "a3.$n" 2>&1 &
	apid=$!
	check "step $shift: the holder's make started" wait_start Step $((n - 1))
	echo "$shift" > shift
	for i in 1 2 3 4 5; do
		djc populate Step --reserve-jobs --no-refresh --make ./mk.sh > "d.$n.$i" 2>&1
		nap 0.5
	done
	wait $apid
	check "step $shift: the holder committed" [ "$(cat a3.$n)" = "Step: 1 made, 0 errors, 0 skipped" ]
	check "step $shift: the key was made once" [ "$(starts Step)" = "$n" ]
	check "step $shift: nothing left reserved or pending" \
		[ "$(djc jobs Step --json)" = '{"table":"Step","pending":0,"reserved":0,"success":0,"error":0,"ignore":0,"total":0}' ]
done

finish
