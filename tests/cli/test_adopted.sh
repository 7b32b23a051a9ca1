#!/bin/bash
# test_adopted.sh - tables adopted from a DataJoint schema (issue 38,
# docs/adopt.md): DataJoint-shaped schemas made with the server's own
# client (tests/fixtures/datajoint-model/: 0.14 on MariaDB, 2.x on
# PostgreSQL), the stored form adopt writes declared into djc's own schema
# (the companion), populated directly and through the jobs table, and
# DataJoint's tables left as they were but for the rows djc made. SQLite
# has no DataJoint schemas: declaring an adopted table there is refused.
. "$ROOT/tests/cli/lib.sh"
FX="$ROOT/tests/fixtures/datajoint-model"
UP="${DJC_DATABASE_SCHEMA:-c}_up"
MAIN="${DJC_DATABASE_SCHEMA:-c}_dj"

# server_sql SQL: run SQL with the backend's own client (no schema of djc's)
rows() { count "$@"; return 0; }   # count, whose grep -c fails on none
subst() { sed -e "s/@UP@/$UP/g" -e "s/@MAIN@/$MAIN/g" "$1"; }
# qt SCHEMA TABLE: the table's name quoted for the backend's client
qt() { if [ "$DJC_BACKEND" = mysql ]; then printf '`%s`.`%s`' "$1" "$2"; else printf '"%s"."%s"' "$1" "$2"; fi; }
# fingerprint: rows and a checksum of each DataJoint table djc only reads
fingerprint() {
	local t
	case $DJC_BACKEND in
	mysql)
		for t in "$UP\`.\`subject" "$MAIN\`.\`#param_set" "$MAIN\`.\`#reviewer" "$MAIN\`.\`session"; do
			server_sql "SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS('|', t.*))), 0) FROM \`$t\` t" 2>/dev/null ||
				server_sql "CHECKSUM TABLE \`$t\` EXTENDED"
		done ;;
	postgresql)
		for t in "\"$UP\".\"subject\"" "\"$MAIN\".\"#param_set\"" "\"$MAIN\".\"#level\"" "\"$MAIN\".\"session\""; do
			server_sql "SELECT COUNT(*), md5(COALESCE(string_agg(t::text, '|' ORDER BY t::text), '')) FROM $t t"
		done ;;
	esac
}

case $DJC_BACKEND in
mysql) FIX=dj014-mariadb ;;
postgresql) FIX=dj2-postgres ;;
*) FIX= ;;
esac
if [ -n "$FIX" ]; then
	subst "$FX/$FIX.sql" > fixture.sql
	case $DJC_BACKEND in
	mysql) mariadb_cli < fixture.sql ;;
	postgresql) psql "${DJC_SERVER_URL:-$DJC_DATABASE_URL}" -q -v ON_ERROR_STOP=1 -f fixture.sql >/dev/null ;;
	esac
	subst "$FX/$FIX.djc" > pipe.djc
fi

# the makes: Analysis copies the session's blob (base64 in JSON, as fetch
# gives it) with one part row; Pair and Review count; Graded copies sex
cat > mk_analysis.sh <<'P'
#!/bin/sh
blob=$("$DJC" fetch Session --key "$DJC_KEY" --format json | sed 's/.*"raw_data": *"\([^"]*\)".*/\1/')
echo "{\"result\": $DJC_KEY_param_id.5, \"out\": \"$blob\"}"
echo "{\"_part\": \"Item\", \"item\": 1, \"value\": 2.5}"
P
cat > mk_pair.sh <<'P'
#!/bin/sh
echo "{\"gap\": $((DJC_KEY_session_idx - DJC_KEY_prev_idx))}"
P
cat > mk_review.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_reviewer" >> "$T/reviewed"
echo "{\"n_sessions\": $("$DJC" fetch Session --key "$DJC_KEY" --format json | grep -c .)}"
P
cat > mk_graded.sh <<'P'
#!/bin/sh
"$DJC" fetch @UP@.Subject --key "$DJC_KEY" --format json | sed 's/.*"sex": *"\([A-Z]\)".*/{"sex": "\1"}/'
P
sed -i "s/@UP@/$UP/" mk_graded.sh
cat > mk_badblob.sh <<'P'
#!/bin/sh
echo "{\"result\": 1.0, \"out\": \"$(printf 'not a blob' | base64)\"}"
P
chmod +x mk_*.sh

case_sqlite_refused() {
	[ "$DJC_BACKEND" = sqlite ] || return 0
	printf 'Session (manual)\n    adopted = ephys.session\n    s : int32\n    ---\n' > s.djc
	expect_fail 2 "an adopted table whose DataJoint table is not there is refused, named" \
		"s\.djc:1: table Session is adopted from DataJoint table ephys\.session, which is missing" djc declare s.djc
	expect_out "nothing declared" "" djc tables
}
tcase sqlite_refused

case_declare() {
	[ -n "$FIX" ] || return 0
	BEFORE=$(fingerprint)
	run djc declare pipe.djc
	check "the adopted pipeline declares" [ "$RC" = 0 ]
	check "the adopted tables are reported" grep -q "created Analysis (computed) as __analysis" <<< "$OUT"
	check "jobs tables made for the computed ones" grep -q "created Pair jobs table ~~pair" <<< "$OUT"
	expect_out "declare again: nothing to do" "$(printf '%s\n' "$OUT" | grep -c '^created [A-Za-z.@_0-9]* (')" \
		sh -c "'$DJC' declare pipe.djc | grep -c '^exists '"
	# djc's tables are in the companion; DataJoint's schema has none of them
	case $DJC_BACKEND in
	mysql) run server_sql "SELECT table_name FROM information_schema.tables WHERE table_schema = '$MAIN' AND table_name LIKE '~%'" ;;
	postgresql) run server_sql "SELECT table_name FROM information_schema.tables WHERE table_schema = '$MAIN' AND table_name LIKE '~%'" ;;
	esac
	check "nothing of djc's in the DataJoint schema" [ -z "$OUT" ]
	expect_out "a session's uuid reads as its text form" '"0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e5"' \
		sh -c "'$DJC' fetch Session --where '{\"subject_id\": 1, \"session_idx\": 1}' --format json | sed 's/.*\"uid\": *\\(\"[^\"]*\"\\).*/\\1/'"
	expect_out "restricted by the uuid" 1 count Session '{"uid": "1f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e5"}'
	expect_out "the parent of the other schema reads" 2 count "$UP.Subject"
}
tcase declare

case_populate_direct() {
	[ -n "$FIX" ] || return 0
	expect_out "progress: the key source is session x param_set" "Analysis: Completed 0 of 10" \
		sh -c "'$DJC' progress Analysis | sed 's/ (.*//'"
	expect_rc 0 "populate Analysis directly" djc populate Analysis
	expect_out "10 rows made" 10 count Analysis
	expect_out "with their part rows" 10 count Analysis.Item
	# byte for byte: the blob djc wrote is the session's, as the server keeps it
	case $DJC_BACKEND in
	mysql) run server_sql "SELECT COUNT(*) FROM \`$MAIN\`.\`__analysis\` a JOIN \`$MAIN\`.\`session\` s USING (subject_id, session_idx) WHERE a.out = s.raw_data" ;;
	postgresql) run server_sql "SELECT COUNT(*) FROM \"$MAIN\".\"__analysis\" a JOIN \"$MAIN\".\"session\" s USING (subject_id, session_idx) WHERE a.out = s.raw_data" ;;
	esac
	check "every blob came back byte for byte" [ "$OUT" = 10 ]
	check "DataJoint's upstream tables are as they were" [ "$(fingerprint)" = "$BEFORE" ]
	expect_rc 0 "populate again: nothing to do" djc populate Analysis
	expect_out "still 10" 10 count Analysis
}
tcase populate_direct declare

case_populate_reserved() {
	[ -n "$FIX" ] || return 0
	# DataJoint's key source: session x session renamed, on subject_id:
	# 3 x 3 + 2 x 2 pairs
	expect_rc 0 "populate Pair through its jobs table" djc populate Pair --reserve-jobs --processes 2
	expect_out "13 pairs" 13 count Pair
	expect_out "each pair's gap" 3 count Pair '{"gap": 1}'
	expect_out "renamed attribute restricts" 5 count Pair '{"prev_idx": 1}'
	expect_out "progress complete" "Pair: Completed 13 of 13" sh -c "'$DJC' progress Pair | sed 's/ (.*//'"
	expect_rc 0 "a refresh of its jobs table" djc jobs refresh Pair
	expect_out "still 13 pairs" 13 count Pair
	check "DataJoint's upstream tables are as they were" [ "$(fingerprint)" = "$BEFORE" ]
}
tcase populate_reserved declare

case_text_key() {
	[ -n "$FIX" ] || return 0
	local T2=Review
	[ "$DJC_BACKEND" = postgresql ] && T2=Graded
	expect_rc 0 "populate $T2 through its jobs table (key of the server's collation or enum type)" \
		djc populate $T2 --reserve-jobs
	expect_out "4 rows" 4 count $T2
	expect_out "nothing left" "$T2: Completed 4 of 4" sh -c "'$DJC' progress $T2 | sed 's/ (.*//'"
	expect_rc 0 "populate again through the jobs table: nothing to do" djc populate $T2 --reserve-jobs
	expect_out "still 4" 4 count $T2
	# its jobs table's key columns compare as the target's: same collation
	# (MariaDB) or the same enum type (PostgreSQL)
	case $DJC_BACKEND in
	mysql) expect_out "the jobs table's key has the target's collation" utf8mb4_general_ci \
		server_sql "SELECT collation_name FROM information_schema.columns WHERE table_schema = '$DJC_DATABASE_SCHEMA' AND table_name = '~~review' AND column_name = 'reviewer'" ;;
	postgresql) expect_out "the jobs table's key has the target's enum type" enum_7027a361 \
		server_sql "SELECT udt_name FROM information_schema.columns WHERE table_schema = '$DJC_DATABASE_SCHEMA' AND table_name = '~~graded' AND column_name = 'level'" ;;
	esac
}
tcase text_key declare

case_refusals() {
	[ -n "$FIX" ] || return 0
	expect_fail 2 "drop of an adopted table is refused" \
		"^djc: Session is adopted from DataJoint schema $MAIN: djc does not change its definition$" djc drop Session
	expect_fail 2 "delete from an adopted table is refused" \
		"^djc: Session is adopted from DataJoint schema $MAIN: djc does not change its definition$" djc delete Session
	sed 's/    gap : int32/    gap : int64/' pipe.djc > changed.djc
	expect_fail 2 "alter of an adopted table is refused" \
		"changed\.djc:[0-9]+: Pair is adopted from DataJoint schema $MAIN: djc does not change its definition" djc alter changed.djc
	expect_fail 2 "declare of a changed adopted table is refused" \
		"changed\.djc:[0-9]+: Pair is adopted from DataJoint schema $MAIN: djc does not change its definition" djc declare changed.djc
	expect_out "the table is still there" 2 count "$UP.Subject"
	expect_fail 2 "an insert into an adopted manual table is refused" \
		"^djc: ParamSet is adopted from DataJoint schema $MAIN: djc inserts only into the computed and imported tables it populates" \
		djc insert ParamSet <<< '{"param_id": 9, "threshold": 1.0}'
	expect_out "nothing inserted" 0 rows ParamSet '{"param_id": 9}'
	printf 'Gone (manual)\n    adopted = %s.nosuch\n    g : int32\n    ---\n' "$MAIN" > gone.djc
	expect_fail 2 "a missing DataJoint table is named" "gone\.djc:1: table Gone is adopted from DataJoint table $MAIN\.nosuch, which is missing" \
		djc declare gone.djc
	server_sql "CREATE TABLE $(qt "$MAIN" extra) (e int NOT NULL, PRIMARY KEY (e))"
	printf 'Extra (manual)\n    adopted = %s.extra\n    e : int32\n    ---\n    nope : int32\n' "$MAIN" > col.djc
	expect_fail 2 "a missing column is named" "col\.djc:1: table Extra: DataJoint table $MAIN\.extra has no column 'nope'" \
		djc declare col.djc
	expect_out "neither was declared" "" sh -c "'$DJC' tables | grep -E '^(Gone|Extra)$'; true"
	# a table of djc's that an adopted one references is not dropped with it
	printf 'Own (manual)\n    e : int32\n    ---\nExtra2 (manual)\n    adopted = %s.extra\n    -> Own\n    ---\n' "$MAIN" > own2.djc
	expect_rc 0 "an adopted table may reference one of djc's" djc declare own2.djc
	expect_fail 2 "dropping that one would drop the adopted one: refused" \
		"^djc: Extra2 is adopted from DataJoint schema $MAIN: djc does not change its definition$" djc drop Own --yes
	expect_out "DataJoint's table is still there" 0 server_sql "SELECT COUNT(*) FROM $(qt "$MAIN" extra)"
	if [ "$DJC_BACKEND" = mysql ]; then
		expect_fail 2 "a target with a raw column is refused, naming it" \
			"^djc: table Timed: column 'at' \(raw\(time\)\) cannot be written by djc, so Timed cannot be populated by djc$" \
			djc populate Timed
		server_sql "INSERT INTO $(qt "$MAIN" __timed) VALUES (1, '12:30:00')"
		expect_out "a raw column reads as the server's text" '{"subject_id":1,"at":"12:30:00"}' djc fetch Timed --format json
	fi
}
tcase refusals declare

case_bad_blob() {
	[ -n "$FIX" ] || return 0
	server_sql "INSERT INTO $(qt "$MAIN" "#param_set") VALUES (3, 2.5)"
	expect_rc 1 "a make returning no DataJoint blob fails" djc populate Analysis --make ./mk_badblob.sh
	check "the error names the attribute and the header" grep -q "not a DataJoint blob (no mYm/dj0/ZL123 header)" <<< "$OUT$ERR"
	expect_out "nothing written for it" 0 rows Analysis '{"param_id": 3}'
}
tcase bad_blob populate_direct

# djc's own tables take renamed references too (DataJoint's syntax), on
# every backend: the foreign key, the key source, the cascade
case_own_renames() {
	cat > own.djc <<'P'
Visit (manual)
    animal : int32
    visit : int32
    ---
Step (computed)
    -> Visit
    -> Visit.proj(before='visit')
    ---
    gap : int32
    make = ./mk_step.sh
Link (manual)
    -> Visit.proj(from_visit='visit')
    ---
    note : int32
P
	cat > mk_step.sh <<'P'
#!/bin/sh
echo "{\"gap\": $((DJC_KEY_visit - DJC_KEY_before))}"
P
	chmod +x mk_step.sh
	expect_rc 0 "a table with a renamed reference declares" djc declare own.djc
	printf '{"animal": 1, "visit": 1}\n{"animal": 1, "visit": 2}\n{"animal": 2, "visit": 1}\n' | djc insert Visit >/dev/null
	expect_rc 0 "populate it" djc populate Step --reserve-jobs
	expect_out "DataJoint's key source: visit pairs of one animal" 5 count Step
	expect_out "the renamed attribute is the child's" 1 count Step '{"before": 2, "visit": 1}'
	expect_rc 0 "a row whose renamed reference has its parent" djc insert Link <<< '{"animal": 1, "from_visit": 2, "note": 0}'
	expect_fail 2 "the foreign key is on the renamed column, and named" 'no row of Visit with \{"animal": 2, "visit": 7\}' \
		djc insert Link <<< '{"animal": 2, "from_visit": 7, "note": 0}'
	run djc delete Visit --where '{"animal": 1, "visit": 2}' --yes
	check "a cascade follows the renamed reference" [ "$RC" = 0 ]
	expect_out "the pairs with visit 2 on either side went" 2 count Step
	expect_out "and the link to it" 0 rows Link
}
tcase own_renames

finish
