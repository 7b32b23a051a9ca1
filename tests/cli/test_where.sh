#!/bin/bash
# test_where.sh - "everywhere a restriction is taken" (issue 39): --where
# takes JSON (as before) or a condition (subject = "m1" and duration > 3.5),
# and a computed table's restriction may name any attribute of its key
# source's tables and their ancestors (DataJoint's
# T.populate(Session & 'species="rat"')), for populate (direct and
# reserved), progress, jobs (list), jobs refresh, ignore, cancel, set,
# clear, with one parent and two; a malformed or unsafe condition is one
# line naming the problem and its column, exit 2, and nothing run: the jobs
# table and the rows are unchanged.
. "$ROOT/tests/cli/lib.sh"

cat > mk.sh <<'M'
#!/bin/sh
cat >/dev/null
echo '{"n": 1}'
M
chmod +x mk.sh
cat > p.djc <<'P'
Subject (manual)
    subject : varchar(16)
    ---
    species : varchar(16)
    weight = null : float64

Session (manual)
    -> Subject
    session : int32
    ---
    duration : float64
    note = null : varchar(64)

Stats (computed)
    -> Session
    ---
    n : int32

Param (lookup)
    param : int16
    ---
    k : float64

Fit (computed)
    -> Session
    -> Param
    ---
    n : int32

RatStats (computed)
    -> Session
    ---
    n : int32
    key_source = Session & species = "rat" or note = "a # b"   # a grandparent's attribute

Memo (manual)
    memo : int32
    ---
    txt : varchar(20)

FitK (computed)
    -> Session
    -> Param
    ---
    n : int32
    key_source = Session * Param & k > 0.7 and duration < 5
P
expect_rc 0 "declare" djc declare p.djc
printf '%s\n' '{"subject": "m1", "species": "mouse", "weight": 20}' '{"subject": "m2", "species": "mouse"}' \
	'{"subject": "r1", "species": "rat", "weight": 300}' > s.jsonl
expect_rc 0 "insert subjects" djc insert Subject s.jsonl
printf '{"subject": "%s", "session": %d, "duration": %s, "note": %s}\n' m1 1 3.5 '"pilot a"' m1 2 4 null \
	m2 1 2.25 '"pilot b"' r1 1 10 '"main"' r1 2 1.5 null > se.jsonl
expect_rc 0 "insert sessions" djc insert Session se.jsonl
printf '{"param": 1, "k": 0.5}\n{"param": 2, "k": 1}\n' > pa.jsonl
expect_rc 0 "insert params" djc insert Param pa.jsonl

# the keys of the jobs of TABLE [WHERE], "subject/session ..." in key order
job_keys() {
	if [ -n "$2" ]; then "$DJC" jobs "$1" --all --where "$2" --json; else "$DJC" jobs "$1" --all --json; fi |
		jq -r '[.jobs[] | "\(.subject)/\(.session)\(if .param then "/\(.param)" else "" end):\(.status)"] | sort | join(" ")'
}

case_progress() {
expect_out "progress by a parent's attribute (condition)" "Stats: Completed 0 of 2 (0.0%), 2 remaining" \
	djc progress Stats --where 'species = "rat"'
expect_out "... (JSON)" "Stats: Completed 0 of 2 (0.0%), 2 remaining" djc progress Stats --where '{"species": "rat"}'
expect_out "... the parent's own and the grandparent's attributes" "Stats: Completed 0 of 1 (0.0%), 1 remaining" \
	djc progress Stats --where "species = 'mouse' and duration > 3.9"
expect_out "... or, not, like, is null" "Stats: Completed 0 of 2 (0.0%), 2 remaining" \
	djc progress Stats --where 'not (note like "pilot%") or weight is null'
expect_out "a key attribute as before" "Stats: Completed 0 of 2 (0.0%), 2 remaining" djc progress Stats --where 'session = 2'
expect_out "two parents: both parents' attributes" "Fit: Completed 0 of 2 (0.0%), 2 remaining" \
	djc progress Fit --where 'species = "rat" and k > 0.7'
expect_out "... a list of JSON objects over both" "Fit: Completed 0 of 3 (0.0%), 3 remaining" \
	djc progress Fit --where '[{"species": "rat", "param": 1}, {"note": "pilot b", "k": 0.5}]'
}
tcase progress

case_refresh() {
expect_out "refresh by a parent's attribute adds those keys" \
	'{"table":"Stats","added":3,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --where 'species = "mouse"' --json
expect_out "... exactly those" "m1/1:pending m1/2:pending m2/1:pending" job_keys Stats
expect_out "jobs listed by a parent's attribute" "m1/1:pending m1/2:pending" job_keys Stats 'weight > 1'
expect_out "... by JSON on a parent's attribute" "m2/1:pending" job_keys Stats '{"weight": null}'
expect_out "... by a condition on a key attribute" "m1/2:pending" job_keys Stats 'session between 2 and 3'
expect_out "the counts by a parent's attribute" "Stats jobs: pending 1, reserved 0, success 0, error 0, ignore 0, total 1" \
	djc jobs Stats --where 'note like "pilot b"' --counts
expect_out "refresh of two parents by both" '{"table":"Fit","added":2,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh Fit --where 'species = "rat" and k > 0.7' --json
expect_out "... exactly those" "r1/1/2:pending r1/2/2:pending" job_keys Fit
}
tcase refresh

case_admin() {
expect_out "set by a parent's attribute" "Stats: updated 1 pending job" \
	djc jobs set Stats --where 'species = "mouse" and duration < 3' --priority 1
expect_out "... that job" "1" sh -c '"$DJC" jobs Stats --all --json | jq -c "[.jobs[] | select(.priority == 1) | .subject + \"/\" + (.session | tostring)] | length"'
expect_out "cancel by a grandparent's attribute" "Stats: cancelled 1 pending and 0 reserved job" \
	djc jobs cancel Stats --where 'weight is null'
expect_out "... that job" "m1/1:pending m1/2:pending m2/1:ignore" job_keys Stats
expect_out "ignore by a parent's attribute" "Stats: ignoring 1 job" djc jobs ignore Stats --where 'duration = 4'
expect_out "... that job" "m1/1:pending m1/2:ignore m2/1:ignore" job_keys Stats
expect_out "clear by a parent's attribute and a status" "Stats: cleared 1 ignore job" \
	djc jobs clear Stats --status ignore --where "species = 'mouse' and note is not null"
expect_out "... that job" "m1/1:pending m1/2:ignore" job_keys Stats
}
tcase admin refresh

case_populate() {
expect_out "populate by a parent's attribute (direct)" "Stats: 2 made, 0 errors, 0 skipped" \
	djc populate Stats --where 'species = "rat"' --make ./mk.sh
expect_out "... exactly those keys" "r1/1 r1/2" sh -c '"$DJC" fetch Stats --format json | jq -r "\"\(.subject)/\(.session)\"" | sort | tr "\n" " " | sed "s/ \$//"'
expect_out "populate --reserve-jobs by a parent's attribute" "Fit: 2 made, 0 errors, 0 skipped" \
	djc populate Fit --reserve-jobs --where "species = 'rat' and k > 0.7" --make ./mk.sh
expect_out "... only those keys made" "r1/1/2 r1/2/2" sh -c '"$DJC" fetch Fit --format json | jq -r "\"\\(.subject)/\\(.session)/\\(.param)\"" | sort | tr "\n" " " | sed "s/ \$//"'
expect_out "populate --reserve-jobs, JSON on a parent's attribute" "Fit: 1 made, 0 errors, 0 skipped" \
	djc populate Fit --reserve-jobs --where '{"note": "main", "param": 1}' --make ./mk.sh
expect_out "progress then" "Fit: Completed 3 of 10 (30.0%), 7 remaining" djc progress Fit
}
tcase populate

case_keysource() {
expect_out "key_source = A & a condition on a grandparent's attribute" "RatStats: Completed 0 of 2 (0.0%), 2 remaining" \
	djc progress RatStats
expect_out "... and --where on top" "RatStats: Completed 0 of 1 (0.0%), 1 remaining" djc progress RatStats --where 'note is null'
expect_out "... populate makes those keys" "RatStats: 2 made, 0 errors, 0 skipped" djc populate RatStats --make ./mk.sh
expect_out "key_source = A * B & a condition on both" "FitK: Completed 0 of 4 (0.0%), 4 remaining" djc progress FitK
expect_out "... refresh adds those keys" "m1/1/2:pending m1/2/2:pending m2/1/2:pending r1/2/2:pending" \
	sh -c '"$DJC" jobs refresh FitK >/dev/null && "$DJC" jobs FitK --all --json | jq -r "[.jobs[] | \"\\(.subject)/\\(.session)/\\(.param):\\(.status)\"] | sort | join(\" \")"'
}
tcase keysource

case_plain() {
expect_out "fetch --where a condition" "m1/1 r1/1" sh -c '"$DJC" fetch Session --where "duration > 3 and note is not null" --format json | jq -r "\"\\(.subject)/\\(.session)\"" | sort | tr "\n" " " | sed "s/ \$//"'
printf '{"memo": %d, "txt": "%s"}\n' 1 xa 2 xb 3 ya > m.jsonl
expect_rc 0 "insert memos" djc insert Memo m.jsonl
expect_fail 2 "delete --where a bad condition" '^djc: condition, column 14: this compares two values' \
	djc delete Memo --where 'txt = "x" or 1=1' --yes
expect_out "... deleted nothing" "3" count Memo
expect_out "delete --where a condition" "deleted 2 rows from Memo" djc delete Memo --where 'txt like "x%"' --yes
expect_out "... those rows" '{"memo":3,"txt":"ya"}' sh -c '"$DJC" fetch Memo --format json | jq -c .'
}
tcase plain

case_bad() {
expect_rc 0 "jobs to keep" djc jobs refresh Stats
before_jobs=$("$DJC" jobs Stats --all --json)
before_rows=$("$DJC" fetch Stats --format json)
# every command with a few, two commands (one that changes jobs, one that
# makes rows) with each
all=("populate Stats|--make ./mk.sh" "populate Stats|--reserve-jobs --make ./mk.sh" "progress Stats|" "jobs Stats|"
	"jobs refresh Stats|" "jobs ignore Stats|" "jobs cancel Stats|" "jobs set Stats|--priority 1" "jobs clear Stats|")
two=("populate Stats|--reserve-jobs --make ./mk.sh" "jobs cancel Stats|")
while IFS='|' read -r every w msg; do
	if [ "$every" = all ]; then cmds=("${all[@]}"); else cmds=("${two[@]}"); fi
	for c in "${cmds[@]}"; do
		read -ra pre <<< "${c%%|*}"
		read -ra post <<< "${c#*|}"
		expect_fail 2 "${c%%|*} --where '$w'" "^djc: condition, $msg" djc "${pre[@]}" --where "$w" "${post[@]}"
	done
done <<'W'
all|1=1|column 1: this compares two values
two|species = "rat" or 1=1|column 20: this compares two values
two|species = "rat" or 1|column 20: a value alone is not a condition
all|species = "rat"; delete from Stats|column 16: ';' is not part of a condition
two|species = "rat" -- x|column 17: comments are not part of a condition
two|species = "rat" /* x */|column 17: comments are not part of a condition
two|species = "rat" # x|column 17: comments are not part of a condition
two|species = "rat|column 11: unterminated string
all|species = 'rat" or 1=1 --|column 11: unterminated string
two|(species = "rat"|column 1: unbalanced parentheses: this '\(' is not closed
two|species = "rat")|column 16: unbalanced parentheses: this '\)' closes nothing
two|species = "rat" or|column 19: the condition ends where a condition is expected
all|specis = "rat"|column 1: "specis" is not an attribute of the key source of Stats \(Session, Subject\) \(did you mean species\?
two|weight = "heavy"|column 10: attribute 'weight' \(float64\): expects a number, got a string
two|weight < 1e400|column 10: attribute 'weight' \(float64\): 1e400 is out of a float64's range
two|weight = null|column 10: null is not a value to compare with
two|species|column 1: 'species' alone is not a condition
W
check "bad conditions changed no job" test "$("$DJC" jobs Stats --all --json)" = "$before_jobs"
check "bad conditions made no row" test "$("$DJC" fetch Stats --format json)" = "$before_rows"
# JSON naming what is not an attribute of the key source: that name, and
# the attributes the restriction takes (before: the key attributes alone,
# and with an attribute beyond the key, that one named)
ks_attrs='its attributes: subject, session, duration, note, species, weight'
for c in "${all[@]}"; do
	read -ra pre <<< "${c%%|*}"
	read -ra post <<< "${c#*|}"
	expect_fail 2 "${c%%|*} --where '{\"specis\": \"rat\"}': names it and the key source's attributes" \
		"^djc: restriction names \"specis\", which is not an attribute of the key source of Stats \\(Session, Subject\\) \\(did you mean species\\? $ks_attrs\\)\$" \
		djc "${pre[@]}" --where '{"specis": "rat"}' "${post[@]}"
	expect_fail 2 "${c%%|*} --where '{\"species\": \"rat\", \"zzz\": 1}': names zzz, not species" \
		"^djc: restriction names \"zzz\", which is not an attribute of the key source of Stats \\(Session, Subject\\) \\($ks_attrs\\)\$" \
		djc "${pre[@]}" --where '{"species": "rat", "zzz": 1}' "${post[@]}"
done
expect_fail 2 "a list of objects: the unknown name of the second named" \
	"^djc: restriction names \"zzz\", which is not an attribute of the key source of Stats \\(Session, Subject\\) \\($ks_attrs\\)\$" \
	djc jobs clear Stats --where '[{"species": "rat"}, {"session": 1, "zzz": 1}]'
expect_fail 2 "a key attribute and an unknown one" \
	"^djc: restriction names \"zzz\", which is not an attribute of the key source of Stats \\(Session, Subject\\) \\($ks_attrs\\)\$" \
	djc jobs clear Stats --where '{"session": 1, "zzz": 1}'
expect_fail 2 "worker: the same" \
	"^djc: restriction names \"zzz\", which is not an attribute of the key source of Stats \\(Session, Subject\\) \\($ks_attrs\\)\$" \
	djc worker Stats --until-empty --where '{"species": "rat", "zzz": 1}' --make ./mk.sh
expect_fail 2 "malformed JSON as before" '^djc: --where is not valid JSON: ' djc jobs Stats --where '{"species"'
check "nothing changed" test "$("$DJC" jobs Stats --all --json)" = "$before_jobs"
}
tcase bad

# --where EXPR: an expression of the pipeline's tables (a table name then an
# operator, or a table's name alone) restricts a computed table's keys by a
# semijoin on the attributes they share, in the statement each command runs
case_expr() {
printf '%s\n' 'Excluded (manual)' '    -> Subject' '    ---' 'XStats (computed)' '    -> Session' '    ---' '    n : int32' \
	'XFit (computed)' '    -> Session' '    -> Param' '    ---' '    n : int32' \
	'XKs (computed)' '    -> Session' '    ---' '    n : int32' '    key_source = Session & Subject - Excluded' > ex.djc
expect_rc 0 "declare Excluded, XStats, XFit" djc declare ex.djc
echo '{"subject": "m1"}' > ex.jsonl
expect_rc 0 "insert Excluded" djc insert Excluded ex.jsonl
expect_out "progress --where 'Subject - Excluded' (antijoin)" "XStats: Completed 0 of 3 (0.0%), 3 remaining" \
	djc progress XStats --where 'Subject - Excluded'
expect_out "... a table's name alone (semijoin)" "XStats: Completed 0 of 2 (0.0%), 2 remaining" djc progress XStats --where 'Excluded'
expect_out "... in parentheses" "XStats: Completed 0 of 2 (0.0%), 2 remaining" djc progress XStats --where ' (Excluded) '
expect_out "... a restricted parent (condition text in the expression)" "XFit: Completed 0 of 4 (0.0%), 4 remaining" \
	djc progress XFit --where 'Subject & "species = \"rat\""'
expect_out "... a join restricted by both" "XStats: Completed 0 of 1 (0.0%), 1 remaining" \
	djc progress XStats --where "Session * Subject & 'species = \"rat\" and duration > 2'"
expect_out "... JSON and an antijoin, Python's precedence" "XStats: Completed 0 of 1 (0.0%), 1 remaining" \
	djc progress XStats --where 'Subject & {"species": "mouse"} - Excluded'
expect_out "... an aggregation" "XStats: Completed 0 of 2 (0.0%), 2 remaining" \
	djc progress XStats --where 'Subject.aggr(Session, n=count()) & "n > 1" - Excluded'
expect_out "... a key attribute that is not the key source's (param) is left aside" "XStats: Completed 0 of 3 (0.0%), 3 remaining" \
	djc progress XStats --where 'Session * Param - Excluded'
expect_out "key_source = A & EXPR" "XKs: Completed 0 of 3 (0.0%), 3 remaining" djc progress XKs
expect_out "... and --where EXPR on top" "XKs: Completed 0 of 1 (0.0%), 1 remaining" djc progress XKs --where 'Session & "duration > 3"'
expect_out "jobs refresh --where EXPR adds those keys" \
	'{"table":"XStats","added":3,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh XStats --where 'Subject - Excluded' --json
expect_out "... exactly those" "m2/1:pending r1/1:pending r1/2:pending" job_keys XStats
expect_out "jobs --where EXPR lists" "r1/1:pending" job_keys XStats 'Session & "duration > 3"'
expect_out "jobs set --where EXPR" "XStats: updated 1 pending job" djc jobs set XStats --where 'Session & "duration < 2"' --priority 1
expect_out "... that job" '["r1/2"]' sh -c '"$DJC" jobs XStats --all --json | jq -c "[.jobs[] | select(.priority == 1) | .subject + \"/\" + (.session | tostring)]"'
expect_out "jobs cancel --where EXPR" "XStats: cancelled 1 pending and 0 reserved job" \
	djc jobs cancel XStats --where 'Subject & {"species": "mouse"}'
expect_out "jobs ignore --where EXPR" "XStats: ignoring 1 job" djc jobs ignore XStats --where 'Session & "duration > 9"'
expect_out "... those jobs" "m2/1:ignore r1/1:ignore r1/2:pending" job_keys XStats
expect_out "jobs clear --where EXPR" "XStats: cleared 1 ignore job" djc jobs clear XStats --status ignore --where 'Subject - Excluded & "species = \"rat\""'
expect_out "... that job" "m2/1:ignore r1/2:pending" job_keys XStats
expect_out "populate --where EXPR (direct)" "XFit: 6 made, 0 errors, 0 skipped" djc populate XFit --where 'Subject - Excluded' --make ./mk.sh
expect_out "... exactly those keys" "m2/1/1 m2/1/2 r1/1/1 r1/1/2 r1/2/1 r1/2/2" sh -c '"$DJC" fetch XFit --format json | jq -r "\"\\(.subject)/\\(.session)/\\(.param)\"" | sort | tr "\n" " " | sed "s/ \$//"'
expect_out "populate --reserve-jobs --where EXPR" "XFit: 2 made, 0 errors, 0 skipped" \
	djc populate XFit --reserve-jobs --where 'Excluded * Param & "k < 0.6"' --make ./mk.sh
expect_out "worker --where EXPR" "made=2" sh -c '"$DJC" worker XFit --where "Excluded & {\"subject\": \"m1\"}" --until-empty --json --make ./mk.sh | jq -r "\"made=\\(.success_count)\""'
expect_out "... then" "XFit: Completed 10 of 10 (100.0%), 0 remaining" djc progress XFit
before=$("$DJC" jobs XStats --all --json)
expect_fail 2 "an unknown table in --where EXPR" '^djc: unknown table "Exclued" \(did you mean Excluded\?' \
	djc jobs cancel XStats --where 'Exclued - Subject'
expect_fail 2 "a namesake that is not a link" "^djc: cannot restrict XStats by Memo.proj\(subject=txt\) on attribute 'subject'" \
	djc jobs cancel XStats --where 'Memo.proj(subject=txt)'
expect_fail 2 "a malformed expression" '^djc: expression: ' djc jobs cancel XStats --where 'Subject - '
expect_fail 2 "a name that is not a table stays a condition" "^djc: condition, column 1: 'species' alone" \
	djc jobs cancel XStats --where 'species'
check "... nothing changed" test "$("$DJC" jobs XStats --all --json)" = "$before"
}
tcase expr

# a decimal compared with a number by <, <=, >, >=, between compares numbers
# on every backend (SQLite stores decimals as text: "9.5" > "10.25" there)
case_decimal() {
printf '%s\n' 'Price (manual)' '    item : int32' '    ---' '    price : decimal(10,2)' > dec.djc
expect_rc 0 "declare Price" djc declare dec.djc
printf '{"item": %d, "price": "%s"}\n' 1 9.5 2 10.25 3 100 4 2 5 -3.5 > dec.jsonl
expect_rc 0 "insert prices" djc insert Price dec.jsonl
# (each helper below: one jq takes the attribute, sorts and joins the rows'
# values, where jq, sort, tr and sed were four processes a check)
items() { "$DJC" fetch Price --where "$1" --format json | jq -rs 'map(.item) | sort | map(tostring) | join(" ")'; }
expect_out "price < 10.25" "1 4 5" items 'price < 10.25'
expect_out "price > 9.5" "2 3" items 'price > 9.5'
expect_out "price <= 10.25" "1 2 4 5" items 'price <= 10.25'
expect_out "price >= 2" "1 2 3 4" items 'price >= 2'
expect_out "10 < price (flipped)" "2 3" items '10 < price'
expect_out "price between 9 and 11" "1 2" items 'price between 9 and 11'
expect_out "price not between 9 and 11" "3 4 5" items 'price not between 9 and 11'
expect_out "JSON {\">\": 9.5}" "2 3" items '{"price": {">": 9.5}}'
expect_out "JSON {\"<\": \"10.25\"}" "1 4 5" items '{"price": {"<": "10.25"}}'
expect_out "an expression's condition" "2 3" sh -c '"$DJC" fetch "Price & \"price > 9.5\"" --format json | jq -r .item | sort -n | tr "\n" " " | sed "s/ \$//"'
expect_out "equality as before" "2" items 'price = 10.25'
# a number with an exponent is the number it writes, exactly (MySQL takes
# 1e2 as a double and compares the decimal with it)
expect_out "price < 1e2" "1 2 4 5" items 'price < 1e2'
expect_out "price = 1.025E1" "2" items 'price = 1.025E1'
expect_out "price >= 95e-1" "1 2 3" items 'price >= 95e-1'
expect_out "price between -4e0 and 2e+0" "4 5" items 'price between -4e0 and 2e+0'
expect_out "price in (1e2, 2e0)" "3 4" items 'price in (1e2, 2e0)'
expect_out "JSON {\"price\": 1e2}" "3" items '{"price": 1e2}'
expect_fail 2 "more decimal places than the type keeps, written out" \
	"^djc: condition, column 9: attribute 'price' \(decimal\(10,2\)\): '10.255' has more decimal places" \
	djc fetch Price --where 'price = 1.0255e1'
expect_fail 2 "an exponent out of any decimal's range" \
	"^djc: condition, column 9: attribute 'price' \(decimal\(10,2\)\): 1e400 is out of its range" \
	djc fetch Price --where 'price < 1e400'
}
tcase decimal

# a datetime compared with a date compares as on MySQL (and so in
# DataJoint): the date is that day at midnight, so it equals a datetime at
# midnight and none later that day, and is before those
case_date_datetime() {
printf '%s\n' 'Born (manual)' '    b : int32' '    ---' '    born = null : date' > born.djc
expect_rc 0 "declare Born" djc declare born.djc
printf '{"b": %d, "born": %s}\n' 1 '"2019-12-30"' 2 '"2019-12-31"' 3 '"2020-01-01"' 4 null > born.jsonl
expect_rc 0 "insert births" djc insert Born born.jsonl
bs() { "$DJC" fetch Born --where "$1" --format json | jq -rs 'map(.b) | sort | map(tostring) | join(" ")'; }
while IFS='|' read -r w want; do
	expect_out "$w" "$want" bs "$w"
done <<'W'
born = "2019-12-31 00:00:00"|2
born = "2019-12-31T00:00:00.000"|2
born = "2019-12-31 10:00:00"|
born != "2019-12-31 10:00:00"|1 2 3
not born = "2019-12-31 10:00:00"|1 2 3
born <> "2019-12-31 00:00:00"|1 3
born < "2019-12-31 10:00:00"|1 2
born <= "2019-12-31 10:00:00"|1 2
born > "2019-12-31 10:00:00"|3
born >= "2019-12-31 10:00:00"|3
born >= "2019-12-31 00:00:00.000001"|3
born >= "2019-12-31 00:00:00"|2 3
"2019-12-31 10:00:00" > born|1 2
born between "2019-12-30 12:00:00" and "2019-12-31 00:00:00"|2
born not between "2019-12-30 12:00:00" and "2019-12-31 00:00:00"|1 3
born in ("2019-12-31 10:00:00", "2020-01-01 00:00:00")|3
born in ("2019-12-31 10:00:00")|
born not in ("2019-12-31 10:00:00")|1 2 3
born not in ("2019-12-31 10:00:00", "2019-12-30")|2 3
W
# the same in JSON (DataJoint's dict restriction is the same SQL text)
while IFS='|' read -r w want; do
	expect_out "$w" "$want" bs "$w"
done <<'W'
{"born": "2019-12-31 00:00:00"}|2
{"born": "2019-12-31 10:00:00"}|
{"born": {"!=": "2019-12-31 10:00:00"}}|1 2 3
{"born": {"<": "2019-12-31 10:00:00"}}|1 2
{"born": {">=": "2019-12-31 10:00:00"}}|3
{"born": ["2019-12-31 10:00:00", "2020-01-01 00:00:00"]}|3
{"born": {"not in": ["2019-12-31 10:00:00"]}}|1 2 3
{"born": {"not in": ["2019-12-31 10:00:00", "2019-12-30"]}}|2 3
[{"born": "2019-12-31 10:00:00"}, {"born": "2019-12-30 00:00:00"}]|1
W
keys=$(jq -nc '[range(150) | {b: (. % 5), born: (if . == 3 then "2019-12-31 10:00:00" else "2019-12-30" end)}]')
expect_out "... a long list of keys (one IN of pairs where it can be)" "1" bs "$keys"
expect_fail 2 "... neither a date nor a datetime" \
	"^djc: restriction: attribute 'born' \(date\): '2019-12-31 24:00:00' is not a date YYYY-MM-DD or a datetime YYYY-MM-DD HH:MM\[:SS\[\.ffffff\]\]$" \
	djc fetch Born --where '{"born": "2019-12-31 24:00:00"}'
expect_out "... in an expression's condition" "1 2" sh -c '"$DJC" fetch "Born & '"'"'born < \"2019-12-31 10:00:00\"'"'"'" --format json | jq -r .b | sort -n | tr "\n" " " | sed "s/ \$//"'
expect_fail 2 "neither a date nor a datetime" \
	"^djc: condition, column 8: attribute 'born' \(date\): '2019-12-31 24:00:00' is not a date YYYY-MM-DD or a datetime YYYY-MM-DD HH:MM\[:SS\[\.ffffff\]\]$" \
	djc fetch Born --where 'born = "2019-12-31 24:00:00"'
}
tcase date_datetime

# a float32 attribute compared with a number compares as the servers (and
# DataJoint) compare it: the stored float32, widened to a double, with the
# number as a double, never the number rounded to float32. 0.1 is stored as
# 0.100000001490116..., which is not 0.1 and is greater than it.
case_float32() {
printf '%s\n' 'Rig (manual)' '    rig : varchar(8)' '    ---' '    gain : float32' '' \
	'Gain (lookup)' '    gain : float32' '    ---' '' 'GainStats (computed)' '    -> Gain' '    ---' '    n : int32' > f32.djc
expect_rc 0 "declare Rig, Gain, GainStats" djc declare f32.djc
printf '{"rig": "%s", "gain": %s}\n' A 1.5 B 0.1 c 2.0 > rig.jsonl
expect_rc 0 "insert rigs" djc insert Rig rig.jsonl
rigs() { "$DJC" fetch Rig --where "$1" --format json | jq -rs 'map(.rig) | sort | map(tostring) | join(" ")'; }
while IFS='|' read -r w want; do
	expect_out "$w" "$want" rigs "$w"
done <<'W'
{"gain": 0.1}|
gain = 0.1|
gain > 0.1|A B c
gain >= 0.1|A B c
gain < 0.1|
gain != 0.1|A B c
{"gain": {">": 0.1}}|A B c
{"gain": {"<=": 0.1}}|
gain between 0.05 and 0.1|
gain in (0.1, 2)|c
{"gain": [0.1, 1.5]}|A
{"gain": {"not in": [0.1]}}|A B c
gain = 1.5|A
gain < 1e39|A B c
W
# the value fetched (the float32's own double) finds its row
b=$("$DJC" fetch Rig --where '{"rig": "B"}' --format json)
expect_out "a fetched row as the restriction finds it" "B" rigs "$b"
expect_out "... its gain as a condition" "B" rigs "gain = $(jq -r .gain <<<"$b")"
expect_out "... in a list" "B" rigs "{\"gain\": [$(jq -r .gain <<<"$b"), 3]}"
expect_out "Rig & 'gain > 0.1' (an expression)" "A B c" sh -c '"$DJC" fetch "Rig & '"'"'gain > 0.1'"'"'" --format json | jq -r .rig | sort | tr "\n" " " | sed "s/ \$//"'
expect_out "Rig & {\"gain\": 0.1} (an expression)" "" sh -c '"$DJC" fetch "Rig & {\"gain\": 0.1}" --format json | jq -r .rig'
# inserting still rounds to float32 (what the column stores)
expect_fail 2 "an insert beyond float32's range is still refused" "float32 range" \
	sh -c 'echo "{\"rig\": \"x\", \"gain\": 1e39}" | "$DJC" insert Rig'
# a populate restricted by a float32 threshold makes DataJoint's keys, each
# once; a key with a float32 round-trips through the jobs table and make
printf '{"gain": %s}\n' 0.1 0.2 0.3 1.5 2 > gain.jsonl
expect_rc 0 "insert gains" djc insert Gain gain.jsonl
expect_out "progress --where 'gain > 0.3' (0.3 is stored above 0.3)" "GainStats: Completed 0 of 3 (0.0%), 3 remaining" \
	djc progress GainStats --where 'gain > 0.3'
expect_out "populate --where 'gain > 0.3'" "GainStats: 3 made, 0 errors, 0 skipped" \
	djc populate GainStats --where 'gain > 0.3' --make ./mk.sh
expect_out "populate --reserve-jobs --where '{\"gain\": {\"<=\": 0.3}}'" "GainStats: 2 made, 0 errors, 0 skipped" \
	djc populate GainStats --reserve-jobs --where '{"gain": {"<=": 0.3}}' --make ./mk.sh
expect_out "populate again makes nothing" "GainStats: 0 made, 0 errors, 0 skipped" djc populate GainStats --reserve-jobs --make ./mk.sh
expect_out "every key made once" "5 5" sh -c '"$DJC" fetch GainStats --format json | jq -s -r "\"\(length) \(map(.gain) | unique | length)\""'
expect_out "progress then" "GainStats: Completed 5 of 5 (100.0%), 0 remaining" djc progress GainStats
expect_out "the jobs' keys restrict by their own values" "5" sh -c \
	'for k in $("$DJC" fetch GainStats --format json | jq -c "{gain}"); do "$DJC" fetch GainStats --where "$k" --format json; done | grep -c .'
}
tcase float32

# a datetime compared with a value that has more fractional digits than the
# column keeps compares exactly, as the servers (and DataJoint) compare it:
# equal to no value of the column, ordered after the value it starts with.
# Written (insert, a job's key), such a value is refused, as before.
case_datetime_digits() {
printf '%s\n' 'Sess (manual)' '    s : int32' '    ---' '    started : datetime' '' \
	'Tick (lookup)' '    at : datetime' '    ---' '' 'TickStats (computed)' '    -> Tick' '    ---' '    n : int32' > dt.djc
expect_rc 0 "declare Sess, Tick" djc declare dt.djc
printf '{"s": %d, "started": "%s"}\n' 1 "2024-01-02 10:30:01" 2 "2024-01-02 10:30:02" > sess.jsonl
expect_rc 0 "insert sessions" djc insert Sess sess.jsonl
ss() { "$DJC" fetch Sess --where "$1" --format json | jq -rs 'map(.s) | sort | map(tostring) | join(" ")'; }
while IFS='|' read -r w want; do
	expect_out "$w" "$want" ss "$w"
done <<'W'
{"started": "2024-01-02 10:30:01.123456"}|
{"started": "2024-01-02 10:30:01.000000"}|1
started = "2024-01-02 10:30:01.5"|
started != "2024-01-02 10:30:01.5"|1 2
started > "2024-01-02 10:30:01.5"|2
started >= "2024-01-02 10:30:01.000001"|2
started < "2024-01-02 10:30:01.5"|1
started <= "2024-01-02 10:30:01.999"|1
started between "2024-01-02 10:30:00.5" and "2024-01-02 10:30:01.5"|1
started in ("2024-01-02 10:30:01.5", "2024-01-02 10:30:02.0")|2
{"started": ["2024-01-02 10:30:01.5", "2024-01-02T10:30:02"]}|2
{"started": {">": "2024-01-02 10:30:01.25"}}|2
W
keys=$(jq -nc '[range(150) | {started: "2024-01-02 10:30:0\(. % 10).5"}] + [{started: "2024-01-02 10:30:01"}]')
expect_out "... a long list (one IN where it can be)" "1" ss "$keys"
expect_out "Sess & {\"started\": ...123456} (an expression)" "" sh -c '"$DJC" fetch "Sess & {\"started\": \"2024-01-02 10:30:01.123456\"}" --format json | jq -r .s'
expect_fail 2 "an insert with more digits is refused" "'2024-01-02 10:30:03.5' has more fractional digits than the type keeps" \
	sh -c 'echo "{\"s\": 3, \"started\": \"2024-01-02 10:30:03.5\"}" | "$DJC" insert Sess'
expect_fail 2 "... a bad datetime in a restriction still is" "is not a datetime" djc fetch Sess --where 'started = "2024-01-02 25:00:00.5"'
printf '{"at": "%s"}\n' "2024-01-02 10:30:01" > tick.jsonl
expect_rc 0 "insert ticks" djc insert Tick tick.jsonl
expect_fail 2 "jobs ignore of a key with more digits is refused" "has more fractional digits than the type keeps" \
	djc jobs ignore TickStats '{"at": "2024-01-02 10:30:01.5"}'
expect_out "progress --where with more digits" "TickStats: Completed 0 of 1 (0.0%), 1 remaining" \
	djc progress TickStats --where 'at < "2024-01-02 10:30:01.5"'
}
tcase datetime_digits

# a JSON list (an OR) may hold condition text beside its objects, as
# DataJoint's Subject & [{'species': 'rat'}, 'weight < 50'] does: each
# string is a condition, each object as before
case_mixed_list() {
printf '%s\n' 'MixStats (computed)' '    -> Session' '    ---' '    n : int32' > mix.djc
expect_rc 0 "declare MixStats" djc declare mix.djc
subj() { "$DJC" fetch "$@" --format json | jq -rs 'map(.subject) | sort | map(tostring) | join(" ")'; }
expect_out "--where [{object}, \"condition\"]" "m1 r1" subj Subject --where '[{"species": "rat"}, "weight < 50"]'
expect_out "... conditions only" "m1 m2" subj Subject --where '["weight < 50", "subject = \"m2\""]'
expect_out "Subject & [{...}, 'cond'] (an expression, DataJoint's quotes)" "m1 r1" subj "Subject & [{\"species\": \"rat\"}, 'weight < 50']"
expect_out "Subject - [{...}, 'cond'] (m2's null weight is neither)" "m1" subj "Subject - [{\"species\": \"rat\"}, 'weight < 10']"
expect_out "... a quote in the condition" "m2" subj "Subject & ['subject = \\'m2\\'', 'weight > 500']"
expect_out "a computed table's keys: a parent's and a grandparent's attributes" "MixStats: Completed 0 of 3 (0.0%), 3 remaining" \
	djc progress MixStats --where '[{"species": "rat"}, "duration > 3.9"]'
expect_out "... populate makes those" "MixStats: 3 made, 0 errors, 0 skipped" \
	djc populate MixStats --reserve-jobs --where '[{"species": "rat"}, "duration > 3.9"]' --make ./mk.sh
expect_fail 2 "a string that is not a condition" \
	'^djc: restriction: item 2 of the list is a string that is not a condition \(a list holds objects and conditions' \
	djc fetch Subject --where '[{"species": "rat"}, ""]'
expect_fail 2 "... a bad condition says where" '^djc: condition, column 1: "wieght" is not an attribute of Subject' \
	djc fetch Subject --where '[{"species": "rat"}, "wieght > 3"]'
expect_fail 2 "... a number" '^djc: restriction: item 2 of the list is a number' \
	djc fetch Subject --where '["weight > 3", 3]'
expect_fail 2 "an unterminated condition in an expression's list" "unterminated condition text in a JSON restriction" \
	djc fetch "Subject & [{\"species\": \"rat\"}, 'weight > 50]"
}
tcase mixed_list

case_long_list() {
# ------------------------------------------------ a long key list in the jobs commands
# `--where '{"k": [1500 keys]}'` in jobs set, cancel, ignore and clear
# (on MariaDB a multiple-table UPDATE/DELETE, db.h write_join): the rows
# changed and the counts reported are the list's, keys without a job
# change nothing, and a two-attribute key list of objects does the same
printf '%s\n' 'KL (manual)' '    kl : int32' '    ---' '' 'KLB (computed)' '    -> KL' '    ---' '    n : int32' '' \
	'KM (manual)' '    a : int32' '    b : varchar(8)' '    ---' '' 'KMB (computed)' '    -> KM' '    ---' '    n : int32' > kl.djc
expect_rc 0 "declare KL, KLB, KM, KMB" djc declare kl.djc
seq 1 3000 | awk '{ print "{\"kl\": " $1 "}" }' > kl.jsonl
expect_rc 0 "insert 3000 keys" djc insert KL kl.jsonl
seq 1 1000 | awk '{ print "{\"a\": " $1 ", \"b\": \"x" $1 % 3 "\"}" }' > km.jsonl
expect_rc 0 "insert 1000 two-attribute keys" djc insert KM km.jsonl
expect_out "refresh KLB" "KLB: added 3000, removed 0, orphaned 0, re_pended 0" djc jobs refresh KLB
expect_out "refresh KMB" "KMB: added 1000, removed 0, orphaned 0, re_pended 0" djc jobs refresh KMB
# the odd keys 1..2999 and 100 keys without a job
odd=$(seq -s, 1 2 2999); none=$(seq -s, 5001 5100)
wl="{\"kl\": [$odd,$none]}"
klc() { "$DJC" jobs KLB --json | jq -c '[.pending, .reserved, .success, .error, .ignore]'; }
expect_out "set --priority with 1600 keys: the 1500 pending ones" '{"table":"KLB","updated":1500}' \
	djc jobs set KLB --where "$wl" --priority 2 --json
check "... exactly the odd keys have priority 2" \
	[ "$("$DJC" jobs KLB --status pending --json | jq -c '[.jobs[] | select(.priority == 2) | .kl] | [length, all(. % 2 == 1)]')" = '[1500,true]' ]
expect_out "set --delay with 1600 keys" '{"table":"KLB","updated":1500}' djc jobs set KLB --where "$wl" --delay 3600 --json
expect_out "cancel with 1600 keys: 1500 pending" '{"table":"KLB","pending":1500,"reserved":0}' djc jobs cancel KLB --where "$wl" --json
check "... they are ignore, the even keys pending" [ "$(klc)" = '[1500,0,0,0,1500]' ]
check "... and only odd keys are ignore" \
	[ "$("$DJC" jobs KLB --status ignore --json | jq -c '[.jobs[].kl] | [length, all(. % 2 == 1)]')" = '[1500,true]' ]
expect_out "set on them now: none pending" '{"table":"KLB","updated":0}' djc jobs set KLB --where "$wl" --priority 3 --json
expect_out "ignore with 1600 keys counts those already ignored" '{"table":"KLB","ignored":1500}' \
	djc jobs ignore KLB --where "$wl" --json
check "... nothing else changed" [ "$(klc)" = '[1500,0,0,0,1500]' ]
expect_out "clear --status pending with them: none" '{"table":"KLB","cleared":0}' \
	djc jobs clear KLB --status pending --where "$wl" --json
expect_out "clear --status ignore with them" '{"table":"KLB","cleared":1500}' \
	djc jobs clear KLB --status ignore --where "$wl" --json
check "... the even keys are left" [ "$(klc)" = '[1500,0,0,0,0]' ]
even=$(seq -s, 2 2 1000)
expect_out "ignore of 500 pending keys" '{"table":"KLB","ignored":500}' djc jobs ignore KLB --where "{\"kl\": [$even]}" --json
check "... 1000 pending, 500 ignore" [ "$(klc)" = '[1000,0,0,0,500]' ]
expect_out "clear (any status) of 1600 keys, half of them jobs" '{"table":"KLB","cleared":500}' \
	djc jobs clear KLB --where "{\"kl\": [$even,$none,$none]}" --json
check "... 1000 pending left" [ "$(klc)" = '[1000,0,0,0,0]' ]
wm=$(seq 1 2 999 | awk '{ printf "%s{\"a\": %d, \"b\": \"x%d\"}", (NR > 1 ? "," : "["), $1, $1 % 3 } END { print ",{\"a\": 1, \"b\": \"nope\"}]" }')
expect_out "ignore with 501 two-attribute keys" '{"table":"KMB","ignored":500}' djc jobs ignore KMB --where "$wm" --json
check "... exactly those" \
	[ "$("$DJC" jobs KMB --status ignore --json | jq -c '[.jobs[] | select(.b == "x\(.a % 3)") | .a] | [length, all(. % 2 == 1)]')" = '[500,true]' ]
expect_out "clear them" '{"table":"KMB","cleared":500}' djc jobs clear KMB --where "$wm" --json
expect_out "... 500 pending left" '{"table":"KMB","pending":500,"reserved":0,"success":0,"error":0,"ignore":0,"total":500}' \
	djc jobs KMB --json
}
tcase long_list

case_delete_long_list() {
# ------------------------------------------------ a long key list in delete
# `djc delete T --where '{"k": [1600 keys]}'` (on MariaDB a multiple-table
# DELETE unless a subquery reads the table deleted from: query.c
# q_delete_sql): the rows deleted and the counts reported are the list's,
# with and without cascade (a part table, a child, a computed table and its
# jobs), part integrity and --no-cascade refuse as before, and a delete
# whose restriction reads its own table (or, cascaded, a child's) works
printf '%s\n' 'DK (manual)' '    dk : int32' '    ---' '    v : int32' '' 'DK.Item (part)' '    -> DK' '    item : int32' '    ---' '' \
	'DC (manual)' '    -> DK' '    c : int32' '    ---' '' 'DS (computed)' '    -> DK' '    ---' '    n : int32' > dl.djc
expect_rc 0 "declare DK, DK.Item, DC, DS" djc declare dl.djc
seq 1 3000 | awk '{ print "{\"dk\": " $1 ", \"v\": " $1 "}" }' > dk.jsonl
seq 1 1000 | awk '{ print "{\"dk\": " $1 ", \"item\": 1}"; print "{\"dk\": " $1 ", \"item\": 2}" }' > di.jsonl
seq 1 3000 | awk '{ print "{\"dk\": " $1 ", \"c\": 7}" }' > dc.jsonl
expect_rc 0 "insert 3000 DK rows" djc insert DK dk.jsonl
expect_rc 0 "insert 2000 DK.Item rows (keys 1-1000)" djc insert DK.Item di.jsonl
expect_rc 0 "insert 3000 DC rows" djc insert DC dc.jsonl
expect_out "refresh DS" "DS: added 3000, removed 0, orphaned 0, re_pended 0" djc jobs refresh DS
expect_out "populate DS for keys 1-20" "DS: 20 made, 0 errors, 0 skipped" \
	djc populate DS --where "{\"dk\": [$(seq -s, 1 20)]}" --make ./mk.sh
# the odd keys 1..2999 and 100 keys without a row
odd=$(seq -s, 1 2 2999); none=$(seq -s, 5001 5100)
wl="{\"dk\": [$odd,$none]}"
# "count all-of-them-odd" of TABLE's dk
dkodd() { "$DJC" fetch "$1" --format json | jq -sc '[length, all(.[]; .dk % 2 == 1)]'; }
dkeven() { "$DJC" fetch "$1" --format json | jq -sc '[length, all(.[]; .dk % 2 == 0)]'; }
expect_out "delete from DC with 1600 keys: the 1500 odd ones" "deleted 1500 rows from DC" djc delete DC --where "$wl" --yes
check "... the even keys are left" [ "$(dkeven DC)" = '[1500,true]' ]
expect_fail 2 "a part's rows alone with 1600 keys: refused" \
	"^djc: cannot delete 1000 rows of part table DK\.Item without their master rows in DK \(DataJoint's part integrity\): delete from DK instead$" \
	djc delete DK.Item --where "$wl" --yes
expect_fail 2 "DK with 1600 keys, --no-cascade: refused, naming the part's rows" \
	"^djc: cannot delete from DK: 1000 rows of DK\.Item reference them \(delete those first, or delete with cascade\)$" \
	djc delete DK --where "$wl" --no-cascade --yes
check "... nothing deleted" [ "$("$DJC" fetch DK --format json | jq -s length)/$("$DJC" fetch DK.Item --format json | jq -s length)" = 3000/2000 ]
expect_out "DK with 1600 keys, --dry-run: the cascade's counts" "would delete 1500 jobs of DS
would delete 10 rows from DS
would delete 1000 rows from DK.Item
would delete 1500 rows from DK" djc delete DK --where "$wl" --dry-run
expect_out "DK with 1600 keys, cascading" "deleted 1500 jobs of DS
deleted 10 rows from DS
deleted 1000 rows from DK.Item
deleted 1500 rows from DK" djc delete DK --where "$wl" --yes
check "... DK: the even keys left" [ "$(dkeven DK)" = '[1500,true]' ]
check "... DK.Item: the even keys' items" [ "$(dkeven DK.Item)" = '[1000,true]' ]
check "... DS: the even keys made" [ "$(dkeven DS)" = '[10,true]' ]
check "... DS's jobs: the even keys'" \
	[ "$("$DJC" jobs DS --all --json | jq -c '[.jobs | length, all(.[]; .dk % 2 == 0)]')" = '[1500,true]' ]
expect_out "delete from DK again with them: nothing" "deleted 0 rows from DK" djc delete DK --where "$wl" --yes
# a restriction reading the table deleted from (MariaDB refuses that in a
# multiple-table DELETE): a long list inside, cascading to DC, DK.Item, DS
even=$(seq -s, 2 2 1000)
expect_out "delete 'DK & (DK & {500 keys}).proj()'" "deleted 500 jobs of DS
deleted 10 rows from DS
deleted 500 rows from DC
deleted 1000 rows from DK.Item
deleted 500 rows from DK" djc delete "DK & (DK & {\"dk\": [$even]}).proj()" --yes
check "... DK: the keys 1002-3000 left" \
	[ "$("$DJC" fetch DK --format json | jq -sc '[length, (map(.dk) | min)]')" = '[1000,1002]' ]
expect_rc 0 "insert DK's rows again" djc insert DK dk.jsonl --skip-duplicates
# DC's statement reads DC (a cascaded child restricted by itself): DK's 2000
# rows without a DC row go, DC keeps its 1000
expect_out "delete 'DK - DC': cascades through DC's own condition" "deleted 2000 rows from DK" \
	djc delete "DK - DC" --yes
check "... DK and DC: 1000 rows each, the same keys" \
	[ "$("$DJC" fetch DK --format json | jq -sc 'map(.dk)')" = "$("$DJC" fetch DC --format json | jq -sc 'map(.dk)')" ]
check "... ... 1000 of them" [ "$(dkeven DC)" = '[1000,true]' ]
expect_out "delete 'DK & {3000 keys} - (DC & {1001 keys})'" "deleted 499 jobs of DS
deleted 499 rows from DC
deleted 499 rows from DK" djc delete "DK & {\"dk\": [$(seq -s, 1 3000)]} - (DC & {\"dk\": [$(seq -s, 2000 3000)]})" --yes
check "... the keys 2000-3000 left" [ "$("$DJC" fetch DK --format json | jq -sc '[length, (map(.dk) | min)]')" = '[501,2000]' ]
}
tcase delete_long_list

# values as a DataJoint user writes them in a query dict, which the servers
# take (and DataJoint finds the rows): a datetime without seconds, an
# integer as a string, an enum label in another case (MariaDB compares
# enums so; djc does on every backend). Before, each was exit 2.
case_user_values() {
printf '%s\n' 'Visit (manual)' '    session_idx : int32' '    ---' '    at : datetime' "    kind : enum('Rest', 'task')" '    w = null : float32' > uv.djc
expect_rc 0 "declare Visit" djc declare uv.djc
printf '{"session_idx": %d, "at": "%s", "kind": "%s", "w": %s}\n' 1 "2024-01-02 10:30:00" Rest 2.5 2 "2024-01-02 10:31:00" task 0.5 > uv.jsonl
expect_rc 0 "insert visits" djc insert Visit uv.jsonl
vv() { "$DJC" fetch Visit --where "$1" --format json | jq -r .session_idx | sort -n | tr '\n' ' ' | sed 's/ $//'; }
while IFS='|' read -r w want; do
	expect_out "$w" "$want" vv "$w"
done <<'W'
{"at": "2024-01-02 10:30"}|1
{"at": {">=": "2024-01-02 10:30"}}|1 2
{"session_idx": "1"}|1
{"session_idx": ["1", "2"]}|1 2
{"kind": "rest"}|1
{"kind": "TASK"}|2
at = "2024-01-02 10:31" and session_idx = "2" and kind = "Task"|2
{"w": "2.5"}|1
{"w": {">": "5e-1"}}|1
w < "1"|2
W
expect_fail 2 "an integer's string that is not one" "^djc: restriction: attribute 'session_idx' \(int32\): expects an integer, got a string$" \
	djc fetch Visit --where '{"session_idx": "1.5"}'
expect_fail 2 "a float's string that is not a number" "^djc: restriction: attribute 'w' \(float32\): expects a number, got a string$" \
	djc fetch Visit --where '{"w": "2.5 kg"}'
expect_fail 2 "an insert keeps JSON's types" "attribute 'session_idx' \(int32\): expects an integer, got a string$" \
	sh -c 'echo "{\"session_idx\": \"3\", \"at\": \"2024-01-02 10:32\", \"kind\": \"task\"}" | "$DJC" insert Visit'
expect_fail 2 "... and the labels as declared" "'TASK' is not one of the enum's labels$" \
	sh -c 'echo "{\"session_idx\": 3, \"at\": \"2024-01-02 10:32\", \"kind\": \"TASK\"}" | "$DJC" insert Visit'
expect_out "an insert takes a datetime without seconds" "inserted 1 row into Visit" \
	sh -c 'echo "{\"session_idx\": 3, \"at\": \"2024-01-02 10:32\", \"kind\": \"task\"}" | "$DJC" insert Visit'
expect_out "... stored with seconds 00" "2024-01-02 10:32:00" sh -c '"$DJC" fetch Visit --where "{\"session_idx\": 3}" --format json | jq -r .at'
}
tcase user_values

# a uuid in condition text matches as in JSON, on every backend (MariaDB
# stores uuid as it stores text of its own)
case_uuid_text() {
printf '%s\n' 'Rec (manual)' '    rid : uuid' '    ---' '    n : int32' > uu.djc
expect_rc 0 "declare Rec" djc declare uu.djc
printf '{"rid": "%s", "n": %d}\n' 6ba7b810-9dad-11d1-80b4-00c04fd430c8 1 6ba7b811-9dad-11d1-80b4-00c04fd430c8 2 > uu.jsonl
expect_rc 0 "insert Rec" djc insert Rec uu.jsonl
rr() { "$DJC" fetch Rec --where "$1" --format json | jq -r .n | sort -n | tr '\n' ' ' | sed 's/ $//'; }
while IFS='|' read -r w want; do
	expect_out "$w" "$want" rr "$w"
done <<'W'
rid = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'|1
rid = "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"|1
rid = '6ba7b8109dad11d180b400c04fd430c8'|1
rid != '6ba7b810-9dad-11d1-80b4-00c04fd430c8'|2
rid in ('6ba7b810-9dad-11d1-80b4-00c04fd430c8', '6ba7b811-9dad-11d1-80b4-00c04fd430c8')|1 2
{"rid": "6ba7b811-9dad-11d1-80b4-00c04fd430c8"}|2
W
expect_out "Rec & 'rid = ...' (an expression)" "1" \
	sh -c '"$DJC" fetch "Rec & \"rid = '"'"'6BA7B8109DAD11D180B400C04FD430C8'"'"'\"" --format json | jq -r .n'
expect_out "Rec - 'rid = ...' (an expression)" "2" \
	sh -c '"$DJC" fetch "Rec - \"rid = '"'"'6ba7b810-9dad-11d1-80b4-00c04fd430c8'"'"'\"" --format json | jq -r .n'
expect_out "delete by a uuid in condition text" "deleted 1 row from Rec" \
	djc delete Rec --where "rid = '6ba7b811-9dad-11d1-80b4-00c04fd430c8'" --yes
}
tcase uuid_text

finish
