#!/bin/bash
# test_security.sh - input built to break SQL, a shell or the secrecy of
# passwords (issue 8, docs/bad-input.md): names and values with quotes,
# semicolons, comments, backslashes, NUL bytes and Unicode look-alikes in
# table names (pipeline file and CLI arguments), attribute names, --where
# keys, operators and values, job keys and row values are refused with exit
# 2 and one line, or stored verbatim and fetched back identically, never
# executed; make programs run without a shell; passwords never reach any
# output, error, `djc config` or the jobs table; TLS URL options reach the
# drivers.
. "$ROOT/tests/cli/lib.sh"

PW='Zq9xS3cretPw'
py() { python3 -c "$@"; }
cnt() { count "$@"; return 0; }   # count exits 1 when it counts 0

cat > p.djc <<'P'
Safe (manual)
    id : int32
    ---
    name : varchar(255)
    note = null : varchar(2000)

Other (manual)
    oid : int32
    ---

Named (manual)
    name : varchar(64)
    ---

NamedOut (computed)
    -> Named
    ---
    v : varchar(255)

Comp (computed)
    -> Safe
    ---
    v : varchar(255)
P
expect_rc 0 "declare the pipeline" djc declare p.djc
printf '{"oid": 1}\n{"oid": 2}\n{"oid": 3}\n' > other.jsonl
expect_out "insert Other" "inserted 3 rows into Other" djc insert Other other.jsonl
TABLES0=$(djc tables)

intact() {  # DESC: every table still there, with its rows
	run djc tables
	local t=$OUT
	local n
	n=$(count Other)
	if [ "$t" = "$TABLES0" ] && [ "$n" = 3 ]; then _report ok "$1: tables and rows intact"
	else _report fail "$1: tables and rows intact" "tables=$t
Other rows=$n"; fi
}

case_row_values() {
# ------------------------------------------------------------ row values
# The payloads, stored verbatim and fetched back identically.
cat > payloads.py <<'PY'
P = [
    "x'; DROP TABLE other; --",
    "\"); DELETE FROM safe; /*",
    "a\\'b\\\\",
    "*/ OR 1=1 --",
    "' OR '1'='1",
    "`x`; DROP TABLE `other`; #",
    "\uff1b DROP TABLE other\uff1b",
    "\u02bc OR \u02bc1\u02bc=\u02bc1",
    "\uff07; DROP TABLE other; \u2014\u2014",
    "$(touch pwned)",
    "; touch pwned",
    "\\x00\\u0000 %00 %s %n",
    "line1\nline2\r\n\ttab",
    "\u00e9\u4e2d\U0001F600",
    "--",
    "/*",
    "\\",
    "'",
    "\"",
    ";",
]
PY
py 'exec(open("payloads.py").read())
import json
with open("rows.jsonl", "w") as f:
    for i, p in enumerate(P):
        f.write(json.dumps({"id": i + 1, "name": p, "note": p * 3}) + "\n")'
expect_out "insert rows whose values are SQL" "inserted 20 rows into Safe" djc insert Safe rows.jsonl
run djc fetch Safe --format json
printf '%s\n' "$OUT" > fetched.jsonl
pycheck "values fetched back identically" 'exec(open("payloads.py").read())
import json, sys
got = [json.loads(l) for l in open("fetched.jsonl") if l.strip()]
want = [{"id": i + 1, "name": p, "note": p * 3} for i, p in enumerate(P)]
sys.exit(0 if got == want else 1)'
# each value is also a working restriction matching exactly its row
# (the 20 restrictions written and the 20 answers read by one python each)
py 'exec(open("payloads.py").read())
import json
for i, p in enumerate(P):
    open("where.%d" % i, "w").write(json.dumps({"name": p}))'
for i in $(seq 0 19); do
	run djc fetch Safe --where "$(< "where.$i")" --format json
	printf '%s' "$RC" > "wrc.$i"
	printf '%s' "$OUT" > "wout.$i"
done
okw=$(py 'import json
ok = 0
for i in range(20):
    ids = ",".join(str(json.loads(l)["id"]) for l in open("wout.%d" % i) if l.strip())
    ok += open("wrc.%d" % i).read() == "0" and ids == str(i + 1)
print(ok)')
check "every payload as a --where value matches exactly its row ($okw/20)" test "$okw" = 20
expect_out "a quoted OR-1=1 value matches nothing" "" djc fetch Safe --where '{"name": "zz'"'"' OR '"'"'1'"'"'='"'"'1"}' --format json
expect_out "a payload in an IN list matches its row only" '{"id":1}' sh -c "$DJC fetch Safe --where '{\"name\": [\"x'\"'\"'; DROP TABLE other; --\", \"nope\"]}' --format json | cut -c1-8 | sed 's/,\$/}/'"
intact "row values"

# NUL bytes (JSON \u0000) and invalid UTF-8 are refused, not truncated
printf '{"id": 100, "name": "a\\u0000b"}\n' > nul.jsonl
expect_fail 2 "a NUL byte in a value is refused" "NUL|UTF-8" djc insert Safe nul.jsonl
printf '{"id": 101, "name": "a\xff\xfeb"}\n' > badutf.jsonl
expect_fail 2 "invalid UTF-8 in a value is refused" "UTF-8|malformed|invalid" djc insert Safe badutf.jsonl
printf '{"id": 102, "name": "ok"}\n{"id": 103, "name": "x\\u0000; DROP TABLE other"}\n' > nul2.jsonl
expect_fail 2 "a NUL in the second row refuses the whole file" "NUL|UTF-8" djc insert Safe nul2.jsonl
expect_out "nothing of that file was inserted" "0" cnt Safe '{"id": [102, 103]}'
expect_fail 2 "a NUL byte in a --where value is refused" "NUL|UTF-8|invalid" djc fetch Safe --where '{"name": "x\u0000y"}'
}
tcase row_values

case_table_names() {
# ------------------------------------------------------- table names
bad_header() {  # DESC HEADER-LINE
	printf '%s\n    a : int32\n    ---\n' "$2" > bad.djc
	expect_fail 2 "table name refused: $1" "bad.djc:1:" djc declare bad.djc
}
bad_header "quote and semicolon" "Bad'; DROP TABLE other; -- (manual)"
bad_header "double quote" 'Bad"x (manual)'
bad_header "backtick" 'Bad`x (manual)'
bad_header "comment --" 'Bad-- (manual)'
bad_header "comment /* */" 'Bad/**/x (manual)'
bad_header "backslash" 'Bad\x (manual)'
bad_header "fullwidth semicolon" 'Bad；DROP (manual)'
bad_header "fullwidth letters" 'Ｂａｄ (manual)'
bad_header "space inside" 'Bad Table (manual)'
bad_header "part name with a quote" "Safe.P'x (part)"
bad_header "tier with SQL" "Bad (manual); DROP TABLE other"
printf 'Good (manual)\n    a : int32\n    ---\n\nBad;x (manual)\n    b : int32\n    ---\n' > half.djc
expect_fail 2 "a bad table after a good one" "half.djc:5:" djc declare half.djc
check "nothing of a refused file is created" test "$(djc tables)" = "$TABLES0"
intact "table names in a pipeline file"

# table names on the command line
for name in "Safe; DROP TABLE other" "Safe' --" 'Safe"' "Safe/*" "safe\\" "Safe；" "Other; --" "#other" "~djc_pipeline" "Safe\`"; do
	expect_fail 2 "fetch of table '$name' refused" "unknown table" djc fetch "$name"
	expect_fail 2 "insert into table '$name' refused" "unknown table" djc insert "$name" other.jsonl
	expect_fail 2 "populate of table '$name' refused" "unknown table" djc populate "$name" --make /bin/true
	expect_fail 2 "jobs of table '$name' refused" "unknown table" djc jobs "$name"
done
intact "table names on the command line"
}
tcase table_names row_values

case_attribute_names() {
# ---------------------------------------------------- attribute names
bad_attr() {  # DESC ATTRIBUTE-LINE
	printf 'Bad (manual)\n    id : int32\n    ---\n%s\n' "    $2" > bad.djc
	expect_fail 2 "attribute refused: $1" "bad.djc:4:" djc declare bad.djc
}
bad_attr "semicolon" 'a;drop : int32'
bad_attr "quote" "a' : int32"
bad_attr "double quote" 'a" : int32'
bad_attr "backtick" 'a` : int32'
bad_attr "comment --" 'a--b : int32'
bad_attr "comment /* */" 'a/**/b : int32'
bad_attr "backslash" 'a\b : int32'
bad_attr "fullwidth semicolon" 'a；b : int32'
bad_attr "look-alike letters" 'ａ : int32'
bad_attr "SQL in the type" 'a : int32); DROP TABLE other; --'
bad_attr "SQL in a varchar length" 'a : varchar(10); DROP TABLE other'
bad_attr "quote in an enum label" "a : enum('x'', 'y')"
bad_attr "SQL in a default" "a = 1); DROP TABLE other; -- : int32"
bad_attr "index of an unknown column" 'index(id); DROP TABLE other'
check "no refused table was created" test "$(djc tables)" = "$TABLES0"
# an enum label, a default and a comment holding SQL are stored verbatim
cat > weird.djc <<'P'
Weird (manual)
    id : int32        # comment'; DROP TABLE other; --
    ---
    e = "it's; --" : enum("it's; --", 'a"b', '/*', '；')
    d = "x'); DROP TABLE other; --" : varchar(64)
P
expect_rc 0 "SQL-looking enum labels, defaults and comments are declared" djc declare weird.djc
printf '{"id": 1}\n{"id": 2, "e": "a\\"b"}\n{"id": 3, "e": "；"}\n' > weird.jsonl
expect_out "insert takes the defaults" "inserted 3 rows into Weird" djc insert Weird weird.jsonl
expect_out "labels and defaults come back verbatim" '{"id":1,"e":"it'"'"'s; --","d":"x'"'"'); DROP TABLE other; --"}
{"id":2,"e":"a\"b","d":"x'"'"'); DROP TABLE other; --"}
{"id":3,"e":"；","d":"x'"'"'); DROP TABLE other; --"}' djc fetch Weird --format json
expect_out "csv output quotes them" 'id,e,d
1,it'"'"'s; --,x'"'"'); DROP TABLE other; --
2,"a""b",x'"'"'); DROP TABLE other; --
3,；,x'"'"'); DROP TABLE other; --' djc fetch Weird --format csv
TABLES0=$(djc tables)
intact "attribute names"
}
tcase attribute_names table_names

case_where_keys() {
# ---------------------------------------------------- --where keys and operators
for w in '{"name; DROP TABLE other; --": 1}' '{"id\"); DROP TABLE other; --": 1}' '{"id`": 1}' "{\"id' OR 1=1 --\": 1}" \
	'{"id/**/": 1}' '{"ｉｄ": 1}' '{"id；": 1}' '{"id\\": 1}' '{"id\u0000": 1}'; do
	expect_fail 2 "--where key refused: $w" "restriction|attribute|JSON" djc fetch Safe --where "$w"
	expect_fail 2 "delete --where key refused: $w" "restriction|attribute|JSON" djc delete Safe --where "$w"
done
for op in '; DROP TABLE other; --' '= 1 OR 1=1 --' '=/**/' '<>1 --' 'in (1)) OR (1=1' 'LIKE' '＝'; do
	w=$(py 'import json,sys; print(json.dumps({"id": {sys.argv[1]: 1}}))' "$op")
	expect_fail 2 "--where operator refused: $op" "operator" djc fetch Safe --where "$w"
	expect_fail 2 "populate --where operator refused: $op" "operator" djc populate Comp --where "$w" --make /bin/true
done
for v in '"1 OR 1=1"' '"1; DROP TABLE other"' '"1)--"' '[1, "2) OR (1=1"]' '{"=": "1 OR 1=1"}' '1e999'; do
	expect_fail 2 "--where value refused for an int32: $v" "restriction|JSON|attribute" djc fetch Safe --where "{\"id\": $v}"
done
expect_out "delete with a payload restriction deletes only its row" "deleted 1 row from Safe" djc delete Safe --where '{"name": "x'"'"'; DROP TABLE other; --"}'
expect_out "19 rows left" "19" cnt Safe
intact "--where"
}
tcase where_keys attribute_names

case_job_keys() {
# ------------------------------------------------------------- job keys
expect_rc 0 "jobs refresh" djc jobs refresh Comp
for k in '{"id": "1; DROP TABLE other"}' '{"id": "1 OR 1=1"}' '{"id; DROP TABLE other": 1}' "{\"id' --\": 1}" \
	'{"id": 1, "x\"); --": 2}' '{"ｉｄ": 1}' '{"id": "1\u0000"}' '{"id": [1, 2]}' '{"id": {"=": 1}}' '{}'; do
	expect_fail 2 "jobs ignore key refused: $k" "key|attribute|KEY_JSON" djc jobs ignore Comp "$k"
done
expect_fail 2 "jobs ignore with malformed JSON" "KEY_JSON" djc jobs ignore Comp '{"id": 1'"'"'; DROP TABLE other; --'
expect_fail 2 "jobs clear with a SQL status" "status" djc jobs clear Comp --status "error' OR '1'='1"
expect_fail 2 "jobs --status with SQL" "status" djc jobs Comp --status "error' OR 1=1 --"
expect_out "jobs ignore a real key" 'Comp: ignoring {"id": 2}' djc jobs ignore Comp '{"id": 2}'
expect_out "job counts are sane" "Comp jobs: pending 18, reserved 0, success 0, error 0, ignore 1, total 19" djc jobs Comp
# text job keys holding payloads
py 'exec(open("payloads.py").read())
import json
with open("named.jsonl", "w") as f:
    for p in P[:12]:
        if "\n" not in p: f.write(json.dumps({"name": p[:64]}) + "\n")'
expect_rc 0 "insert text keys holding payloads" djc insert Named named.jsonl
NNAMED=$(count Named)
k=$(py 'import json; print(json.dumps({"name": "x'"'"'; DROP TABLE other; --"}))')
expect_rc 0 "jobs ignore a payload key verbatim" djc jobs ignore NamedOut "$k"
run djc jobs NamedOut --status ignore --json
pycheck "the ignored job holds the key verbatim" 'import json,sys
rows=json.loads(sys.argv[1])["jobs"]
sys.exit(0 if len(rows) == 1 and rows[0]["name"] == "x'"'"'; DROP TABLE other; --" else 1)' "$OUT"
intact "job keys"
}
tcase job_keys where_keys

case_make_no_shell() {
# ------------------------------------------------ make programs: no shell
rm -f pwned pwned*
cat > mk.sh <<'M'
#!/bin/sh
# echoes its arguments and key back as JSON, never evaluating them
python3 -c 'import json,os,sys; print(json.dumps({"v": (os.environ["DJC_KEY_name"] + "|" + "|".join(sys.argv[1:]))[:255]}))' "$@"
M
chmod +x mk.sh
expect_rc 0 "populate with payload keys and arguments" djc populate NamedOut --make ./mk.sh '$(touch pwned_arg)' '; touch pwned_arg2' '`touch pwned_arg3`' '| touch pwned_arg4'
check "no file was created by any key or argument" sh -c '! ls pwned* 2>/dev/null | grep -q .'
run djc fetch NamedOut --format json
printf '%s\n' "$OUT" > made.jsonl
pycheck "each make saw its key and arguments verbatim" 'import json,sys
rows=[json.loads(l) for l in open("made.jsonl") if l.strip()]
args="|$(touch pwned_arg)|; touch pwned_arg2|`touch pwned_arg3`|| touch pwned_arg4"
ok = len(rows) == '"$NNAMED"' and all(r["v"] == (r["name"] + args)[:255] for r in rows)
sys.exit(0 if ok else 1)'
# the table's own make line, with shell syntax in it
cat > mkline.djc <<'P'
Named2 (computed)
    -> Named
    ---
    v : varchar(255)
    make = ./mk.sh '$(touch pwned_line)' ; touch pwned_line2 "&& touch pwned_line3" `touch pwned_line4`
P
expect_rc 0 "declare a make line with shell syntax" djc declare mkline.djc
expect_rc 0 "populate by the make line" djc populate Named2
check "the make line ran no shell" sh -c '! ls pwned* 2>/dev/null | grep -q .'
check "the make line's words arrived verbatim" sh -c "$DJC fetch Named2 --format json | grep -qF '|\$(touch pwned_line)|;|touch|pwned_line2|&& touch pwned_line3|\`touch|pwned_line4\`'"
# a make program named by a payload is not looked up through a shell
expect_rc 1 "a make program name with shell syntax is not run by a shell" djc populate Comp --max-calls 1 --make 'true; touch pwned_prog'
check "...and created nothing" sh -c '! ls pwned* 2>/dev/null | grep -q .'
expect_rc 0 "clear that error" djc jobs clear Comp --status error
TABLES0=$(djc tables)
intact "make programs"
}
tcase make_no_shell job_keys

case_secrets() {
# --------------------------------------------------------------- secrets
nopw() {  # DESC: $OUT and $ERR hold no password
	if printf '%s\n%s\n' "$OUT" "$ERR" | grep -qF "$PW"; then _report fail "$1: password leaked" "OUT=$OUT
ERR=$ERR"; else _report ok "$1: no password"; fi
}
for scheme in postgresql mysql; do
	expect_fail 1 "$scheme refused connection, password in --db" "127.0.0.1|connect" djc --db "$scheme://u:$PW@127.0.0.1:1/db" fetch Safe
	nopw "$scheme --db error"
	expect_fail 1 "$scheme refused connection, password in DJC_DATABASE_URL" "127.0.0.1|connect" env DJC_DATABASE_URL="$scheme://u:$PW@127.0.0.1:1/db" "$DJC" tables
	nopw "$scheme DJC_DATABASE_URL error"
	expect_fail 1 "$scheme refused connection, DJC_DATABASE_PASSWORD" "127.0.0.1|connect" env DJC_DATABASE_PASSWORD="$PW" "$DJC" --db "$scheme://u@127.0.0.1:1/db" tables
	nopw "$scheme DJC_DATABASE_PASSWORD error"
	expect_fail 1 "$scheme refused connection, percent-encoded password" "127.0.0.1|connect" djc --db "$scheme://u:$PW%40%3A@127.0.0.1:1/db?sslmode=disable" populate Comp --reserve-jobs --make /bin/true
	nopw "$scheme percent-encoded password error"
done
expect_fail 2 "a bad port with a password in the URL" "port" djc --db "postgresql://u:$PW@127.0.0.1:notaport/db" tables
nopw "bad port error"
mkdir -p cfg
cat > cfg/url.json <<J
{"database": {"url": "postgresql://u:$PW@127.0.0.1:1/db"}}
J
cat > cfg/pw.json <<J
{"database": {"url": "postgresql://u@127.0.0.1:1/db", "password": "$PW"}}
J
chmod 600 cfg/url.json cfg/pw.json
for f in url pw; do
	expect_rc 0 "djc config with a password in djc.json ($f)" env -u DJC_DATABASE_URL DJC_CONFIG=cfg/$f.json "$DJC" config
	nopw "djc config ($f)"
	expect_rc 0 "djc config --json ($f)" env -u DJC_DATABASE_URL DJC_CONFIG=cfg/$f.json "$DJC" config --json
	nopw "djc config --json ($f)"
	pycheck "djc config --json is JSON ($f)" 'import json,sys; json.loads(sys.argv[1])' "$OUT"
	check "no permission warning for a 600 file ($f)" test -z "$ERR"
	expect_fail 1 "connection refused with the password from djc.json ($f)" "127.0.0.1|connect" env -u DJC_DATABASE_URL DJC_CONFIG=cfg/$f.json "$DJC" tables
	nopw "connection error ($f)"
	chmod 644 cfg/$f.json
	run env -u DJC_DATABASE_URL DJC_CONFIG=cfg/$f.json "$DJC" config
	check "a password file readable by others earns a warning ($f)" sh -c "printf '%s' \"\$1\" | grep -q 'readable by other'" _ "$ERR"
	nopw "the warning ($f)"
	chmod 600 cfg/$f.json
done
expect_rc 0 "djc config with a password in --db" djc --db "mysql://u:$PW@h:1/db" config
nopw "djc config --db"
expect_rc 0 "djc config with a password in DJC_DATABASE_URL" env DJC_DATABASE_URL="postgresql://u:$PW@h/db" "$DJC" config --json
nopw "djc config DJC_DATABASE_URL"
expect_rc 0 "djc config with DJC_DATABASE_PASSWORD" env DJC_DATABASE_PASSWORD="$PW" "$DJC" config
nopw "djc config DJC_DATABASE_PASSWORD"

# real password authentication: PostgreSQL's djc_scram role logs in with
# SCRAM-SHA-256 (scripts/pg-server.sh), MariaDB's djc user with its password;
# each way of giving the password connects, a wrong one is refused in one
# line that names the failure and holds no password
case $DJC_BACKEND in
postgresql)
	AUTH_USER=djc_scram AUTH_PW=djc-scram-pw AUTH_REST=${DJC_DATABASE_URL#postgresql://*@} ;;
mysql)
	AUTH_USER=djc AUTH_PW=djc AUTH_REST=${DJC_DATABASE_URL#mysql://*@} ;;
*) AUTH_USER= ;;
esac
if [ -n "$AUTH_USER" ]; then
	S=$DJC_BACKEND
	[ "$S" = mysql ] || S=postgresql
	NOPW_URL="$S://$AUTH_USER@$AUTH_REST"
	expect_rc 0 "password in the URL authenticates" djc --db "$S://$AUTH_USER:$AUTH_PW@$AUTH_REST" tables
	expect_rc 0 "DJC_DATABASE_PASSWORD authenticates" env DJC_DATABASE_PASSWORD="$AUTH_PW" "$DJC" --db "$NOPW_URL" tables
	printf '{"database": {"url": "%s", "password": "%s"}}\n' "$NOPW_URL" "$AUTH_PW" > cfg/auth.json
	chmod 600 cfg/auth.json
	expect_rc 0 "the password from djc.json authenticates" env -u DJC_DATABASE_URL DJC_CONFIG=cfg/auth.json "$DJC" tables
	expect_rc 0 "an authenticated refresh of the jobs table" env DJC_DATABASE_PASSWORD="$AUTH_PW" "$DJC" --db "$NOPW_URL" jobs refresh Comp
	for how in url env; do
		if [ $how = url ]; then
			run "$DJC" --db "$S://$AUTH_USER:$PW@$AUTH_REST" tables
		else
			run env DJC_DATABASE_PASSWORD="$PW" "$DJC" --db "$NOPW_URL" tables
		fi
		check "a wrong password ($how) exits 1" test "$RC" = 1
		check "a wrong password ($how) is reported as such" sh -c "printf '%s' \"\$1\" | grep -Eq 'password authentication failed|Access denied'" _ "$ERR"
		check "a wrong password ($how) is one line" test "$(printf '%s\n' "$ERR" | wc -l)" = 1
		nopw "wrong password ($how)"
	done
fi

# the jobs table of a failing make run with a password in the URL (a
# trusting PostgreSQL ignores it; SQLite never uses one; MariaDB's is fixed)
URL=$DJC_DATABASE_URL
SECRET=$PW
case $DJC_BACKEND in
postgresql) URL=$(printf '%s' "$DJC_DATABASE_URL" | sed -E "s#^postgresql://([^:@/]+)@#postgresql://\\1:$PW@#") ;;
mysql) SECRET=$(printf '%s' "$DJC_DATABASE_URL" | sed -E 's#^mysql://([^@/]*)@.*#\1#') ;;   # user:password
esac
cat > mkfail.sh <<'M'
#!/bin/sh
# fails the way a make that reads upstream data with djc fails
"$DJC" fetch NoSuchUpstream >/dev/null
"$DJC" --db "postgresql://u:$SECRETPW@127.0.0.1:1/db" tables
echo "make failed for $DJC_KEY" >&2
exit 3
M
chmod +x mkfail.sh
run env DJC_DATABASE_URL="$URL" DJC_DATABASE_PASSWORD="$PW" SECRETPW="$PW" DJC="$DJC" "$DJC" populate Comp --reserve-jobs --suppress-errors --max-calls 3 --make ./mkfail.sh
check "a failing make run: populate exits 1" test "$RC" = 1
if printf '%s\n%s\n' "$OUT" "$ERR" | grep -qF "$SECRET"; then _report fail "populate output holds no password" "$OUT $ERR"; else _report ok "populate output holds no password"; fi
run env DJC_DATABASE_URL="$URL" "$DJC" jobs Comp --status error --json
pycheck "three errors recorded" 'import json,sys; j=json.loads(sys.argv[1])["jobs"]; sys.exit(0 if len(j) == 3 and all(r["error_message"] for r in j) else 1)' "$OUT"
check "the error stack holds the make's stderr" sh -c "printf '%s' \"\$1\" | grep -q 'NoSuchUpstream'" _ "$OUT"
if printf '%s\n' "$OUT" | grep -qF "$SECRET"; then _report fail "jobs table (error_message, error_stack) holds no password" "$OUT"; else _report ok "jobs table (error_message, error_stack) holds no password"; fi
expect_rc 0 "clear the errors" djc jobs clear Comp --status error
# a make program that prints its connection settings (a careless debug line)
cat > mkleak.sh <<'M'
#!/bin/sh
cat >/dev/null
echo "connecting with $DJC_DATABASE_URL and ${DJC_DATABASE_PASSWORD:-}" >&2
echo "password was ${DJC_DATABASE_PASSWORD:-none}" >&2
exit 1
M
chmod +x mkleak.sh
run env DJC_DATABASE_URL="$URL" DJC_DATABASE_PASSWORD="$PW" "$DJC" populate Comp --reserve-jobs --suppress-errors --max-calls 2 --json --make ./mkleak.sh
check "a make printing its URL and password: populate exits 1" test "$RC" = 1
if printf '%s\n%s\n' "$OUT" "$ERR" | grep -qF "$PW"; then _report fail "populate output holds no password printed by a make" "$OUT $ERR"; else _report ok "populate output holds no password printed by a make"; fi
run env DJC_DATABASE_URL="$URL" "$DJC" jobs Comp --status error --json
check "the make's stderr was recorded" sh -c "printf '%s' \"\$1\" | grep -q 'password was \\*\\*\\*'" _ "$OUT"
if printf '%s\n' "$OUT" | grep -qF "$PW"; then _report fail "error_stack holds no password printed by a make" "$OUT"; else _report ok "error_stack holds no password printed by a make"; fi
if [ "$DJC_BACKEND" = mysql ]; then
	if printf '%s\n' "$OUT" | grep -qF "$SECRET@"; then _report fail "error_stack holds no URL password printed by a make" "$OUT"; else _report ok "error_stack holds no URL password printed by a make"; fi
fi
expect_rc 0 "clear those errors" djc jobs clear Comp --status error
}
tcase secrets make_no_shell

case_privileges() {
# ------------------------------------------------------- privileges
# A database user that may read a table but not djc's pipeline table is
# told it is a permission problem, not that nothing is declared (issue 36;
# before: 'unknown table "Safe" (declared tables: none yet; run djc
# declare)'). The user has SELECT on safe only.
ro_user=djc_ro_$(printf '%s' "${DJC_DATABASE_SCHEMA:-s}$$" | tr -c 'a-z0-9_' _ | tail -c 40)
# (not through a pooler: pgbouncer knows only its own users; the same
# server is tested directly)
case ${DJC_POOLER:+pooled}$DJC_BACKEND in
postgresql)
	psql "$DJC_DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "CREATE ROLE \"$ro_user\" LOGIN" \
		-c "GRANT USAGE ON SCHEMA \"$DJC_DATABASE_SCHEMA\" TO \"$ro_user\"" \
		-c "GRANT SELECT ON \"$DJC_DATABASE_SCHEMA\".safe TO \"$ro_user\"" >/dev/null
	RO_URL="postgresql://$ro_user@${DJC_DATABASE_URL#postgresql://*@}"
	DENIED="postgresql: permission denied for table ~djc_pipeline" ;;
mysql)
	mariadb_cli -e "CREATE USER '$ro_user'@'%' IDENTIFIED BY 'ro-pw'; GRANT SELECT ON \`$DJC_DATABASE_SCHEMA\`.safe TO '$ro_user'@'%'"
	RO_URL="mysql://$ro_user:ro-pw@${DJC_DATABASE_URL#mysql://*@}"
	DENIED="mysql: SELECT command denied to user '$ro_user'@'[^']*' for table .*~djc_pipeline.*" ;;
*) RO_URL= ;;
esac
if [ -n "$RO_URL" ]; then
	expect_fail 1 "a user without SELECT on ~djc_pipeline is told it is a permission problem" \
		"^djc: permission denied: this database user cannot read djc's pipeline table ~djc_pipeline in schema $DJC_DATABASE_SCHEMA \(grant it SELECT on that table\): $DENIED$" \
		djc --db "$RO_URL" fetch Safe
	expect_fail 1 "... by every command that reads the pipeline" "^djc: permission denied: this database user cannot read" \
		djc --db "$RO_URL" jobs Comp
	check "... and holds no password" sh -c '! printf "%s" "$1" | grep -q ro-pw' _ "$ERR"
	case $DJC_BACKEND in
	postgresql) psql "$DJC_DATABASE_URL" -qAt -c "DROP OWNED BY \"$ro_user\"" -c "DROP ROLE \"$ro_user\"" >/dev/null ;;
	mysql) mariadb_cli -e "DROP USER '$ro_user'@'%'" ;;
	esac
fi
}
tcase privileges secrets

case_tls() {
# ------------------------------------------------------------------- TLS
case $DJC_BACKEND in
postgresql)
	expect_fail 1 "sslmode=require against a server without TLS" "SSL|TLS|ssl" djc --db "$DJC_DATABASE_URL?sslmode=require" tables
	expect_fail 1 "an unknown sslmode is refused by libpq" "sslmode" djc --db "$DJC_DATABASE_URL?sslmode=bogus" tables
	expect_rc 0 "sslmode=disable connects" djc --db "$DJC_DATABASE_URL?sslmode=disable" tables
	expect_rc 0 "sslmode=prefer connects" djc --db "$DJC_DATABASE_URL?sslmode=prefer" tables ;;
mysql)
	expect_fail 1 "ssl-mode=REQUIRED against a server without TLS" "SSL|TLS|ssl" djc --db "$DJC_DATABASE_URL?ssl-mode=REQUIRED" tables
	nopw "ssl error"
	expect_fail 2 "an unknown ssl-mode is refused" "ssl-mode" djc --db "$DJC_DATABASE_URL?ssl-mode=bogus" tables
	expect_rc 0 "ssl-mode=DISABLED connects" djc --db "$DJC_DATABASE_URL?ssl-mode=DISABLED" tables ;;
sqlite)
	expect_fail 2 "an sqlite path with ; and quotes is a file name (tables creates none)" \
		"^djc: no SQLite database '$T/we'ird; DROP\.db' " djc --db "sqlite:$T/we'ird; DROP.db" tables
	expect_rc 0 "...declare creates it" djc --db "sqlite:$T/we'ird; DROP.db" declare p.djc
	check "...as that file" test -f "$T/we'ird; DROP.db" ;;
esac
intact "the end"
}
tcase tls privileges

finish
