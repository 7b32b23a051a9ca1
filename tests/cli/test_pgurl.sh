#!/bin/bash
# test_pgurl.sh - PostgreSQL URLs are parsed by libpq itself
# (PQconninfoParse), so every URL libpq accepts works: several hosts tried in
# turn, a service file, libpq's parameters; and the password, wherever the
# URL carries it (user:password@ or ?password=), stays out of every output:
# messages, djc config, the jobs table, a make program's captured output.
# PostgreSQL only (the URL parser is libpq's); the other backends skip it.
. "$ROOT/tests/cli/lib.sh"
if [ "$DJC_BACKEND" != postgresql ]; then
	echo "test_pgurl: skipped on $DJC_BACKEND: PostgreSQL URLs only"
	finish; exit
fi
# the suite's server: postgresql://USER@HOST:PORT/DB
HOSTPORT=$(printf '%s' "$DJC_DATABASE_URL" | sed -E 's#^postgresql://[^@]*@([^/]*)/.*#\1#')
DB=$(printf '%s' "$DJC_DATABASE_URL" | sed -E 's#^postgresql://[^/]*/([^?]*).*#\1#')
PGUSER_=$(printf '%s' "$DJC_DATABASE_URL" | sed -E 's#^postgresql://([^@:]*)[:@].*#\1#')
HOST=${HOSTPORT%:*}; PORT=${HOSTPORT##*:}

cat > p.djc <<'P'
A (manual)
    id : int32
    ---
B (computed)
    -> A
    ---
    y : int32
P
expect_rc 0 "declare" djc declare p.djc
echo '{"id": 1}' | djc insert A >/dev/null

case_libpq_accepts() {
# ------------------------------------------------- what libpq accepts
expect_out "several hosts: the first refuses, the second serves" "A
B" djc --db "postgresql://$PGUSER_@127.0.0.1:1,$HOSTPORT/$DB?connect_timeout=5" tables
expect_out "several hosts with their ports as a list (host=h1,h2&port=p1,p2)" "A
B" djc --db "postgresql:///$DB?host=127.0.0.1,$HOST&port=1,$PORT&user=$PGUSER_&target_session_attrs=any" tables
cat > pg_service.conf <<S
[djctest]
host=$HOST
port=$PORT
user=$PGUSER_
dbname=$DB
S
expect_out "a service file (?service=)" "A
B" env PGSERVICEFILE="$T/pg_service.conf" "$DJC" --db "postgresql://?service=djctest" tables
# pgbouncer refuses the startup parameter `options` ("unsupported startup parameter")
OPTS="&options=-c%20statement_timeout%3D60000"
[ "${DJC_POOLER:-}" = pgbouncer ] && OPTS=""
expect_out "libpq's parameters (application_name, keepalives, options)" "A
B" djc --db "$DJC_DATABASE_URL?application_name=djc-pgurl&keepalives=0$OPTS" tables
expect_fail 2 "a parameter libpq does not know: libpq's reason, exit 2" '^djc: database URL: postgresql: invalid URI query parameter: "bogus"$' \
	djc --db "$DJC_DATABASE_URL?bogus=1" tables
expect_fail 2 "a bad port in a host list" "^djc: database URL has a bad port 'x'$" djc --db "postgresql://$PGUSER_@127.0.0.1:1,$HOST:x/$DB" tables
}
tcase libpq_accepts

case_password_hidden() {
# --------------------------------------- the password stays out of output
# the server's SCRAM role needs its password; here it is a query parameter
PW=djc-scram-pw
SURL="postgresql://$HOSTPORT/$DB?user=djc_scram&password=$PW&sslmode=disable"
nopw() {  # DESC TEXT: TEXT does not hold the password
	check "$1: no password" sh -c '! printf "%s" "$1" | grep -qF -- "$2"' _ "$2" "$PW"
}
expect_out "?password= logs in (SCRAM)" "A
B" djc --db "$SURL" tables
cat > leak.sh <<'S'
#!/bin/sh
cat >/dev/null
echo "connecting to $DJC_DATABASE_URL" >&2
echo "url $DJC_DATABASE_URL"
exit 1
S
chmod +x leak.sh
run djc --db "$SURL" populate B --reserve-jobs --suppress-errors --make ./leak.sh
check "a make program that prints the URL fails" test "$RC" = 1
nopw "populate's output" "$OUT$ERR"
run djc --db "$SURL" jobs B --status error
check "the error is recorded" eval 'printf "%s" "$OUT" | grep -q "connecting to"'
nopw "the jobs table (message and stack)" "$OUT"
run djc --db "$SURL" jobs B --status error --json
nopw "the jobs table as JSON" "$OUT"
run env DJC_DATABASE_URL="$SURL" "$DJC" config
check "djc config shows the URL" eval 'printf "%s" "$OUT" | grep -q "password=\*\*\*"'
nopw "djc config" "$OUT"
run djc --db "postgresql://127.0.0.1:1/$DB?user=djc_scram&password=$PW&connect_timeout=5" tables
check "a refused connection fails" test "$RC" = 1
nopw "the connection error" "$ERR"
run djc --db "postgresql://$HOSTPORT/$DB?user=djc_scram&password=${PW}x&sslmode=disable" tables
check "a wrong password fails" test "$RC" = 1
check "the wrong password is not shown" eval '! printf "%s" "$ERR" | grep -qF -- "${PW}x"'
}
tcase password_hidden libpq_accepts

finish
