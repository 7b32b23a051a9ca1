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
	expect_fail 2 "drop of an adopted table is refused, as a drop, pointing to unadopt" \
		"^djc: Session is adopted from DataJoint schema $MAIN: djc does not drop it \(djc unadopt $MAIN forgets djc's side of that schema; DataJoint's tables are DataJoint's to drop\)$" djc drop Session
	expect_fail 2 "delete from an adopted table is refused, as a delete" \
		"^djc: Session is adopted from DataJoint schema $MAIN: djc does not delete its rows \(delete them with DataJoint, whose delete follows its whole schema\)$" djc delete Session
	expect_fail 2 "so is a delete of an adopted computed table's rows" \
		"^djc: Analysis is adopted from DataJoint schema $MAIN: djc does not delete its rows" djc delete Analysis --where '{"param_id": 1}'
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
		"^djc: Extra2 is adopted from DataJoint schema $MAIN and depends on Own: djc does not drop it \(djc unadopt $MAIN first forgets djc's side of that schema\)$" djc drop Own --yes
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

# DataJoint's uuid as a key and as a value a make writes: on MariaDB a
# binary(16) column (`as binary(16)`), whose value djc reads as the text
# form; on PostgreSQL the server's uuid. The key came back from the jobs
# table as text and was bound so to the binary(16) columns of the fence and
# the lapse, which matched nothing: every job lost, and a dead worker's job
# never came back; the make's uuid was checked twice, the second time as
# the bytes the first gave ("expects a string, got bytes").
case_uuid() {
	[ -n "$FIX" ] || return 0
	local ty=uuid i
	[ "$DJC_BACKEND" = mysql ] && ty='binary(16)'
	server_sql "CREATE TABLE $(qt "$MAIN" rec) (rec_uuid $ty NOT NULL, n int NOT NULL, PRIMARY KEY (rec_uuid))"
	server_sql "CREATE TABLE $(qt "$MAIN" __tag) (rec_uuid $ty NOT NULL, u $ty NOT NULL, n2 int NOT NULL, PRIMARY KEY (rec_uuid), FOREIGN KEY (rec_uuid) REFERENCES $(qt "$MAIN" rec) (rec_uuid))"
	for i in 1 2 3; do
		if [ "$DJC_BACKEND" = mysql ]; then
			server_sql "INSERT INTO $(qt "$MAIN" rec) VALUES (UNHEX('0f2d4c1e7b8a4d3c9e1f20a1b2c3d4e$i'), $i)"
		else
			server_sql "INSERT INTO $(qt "$MAIN" rec) VALUES ('0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e$i', $i)"
		fi
	done
	local as=
	[ "$DJC_BACKEND" = mysql ] && as=' as binary(16)'
	cat > uuid.djc <<P
Rec (manual)
    adopted = $MAIN.rec
    rec_uuid : uuid$as
    ---
    n : int32

Tag (computed)
    adopted = $MAIN.__tag
    -> Rec
    ---
    u : uuid$as
    n2 : int32
    make = ./mk_tag.sh
P
	# the make writes a uuid of its own (the key's, its last digit + 5);
	# for the key ending in 2, once, it says so and waits (its worker is
	# killed meanwhile)
	cat > mk_tag.sh <<'P'
#!/bin/sh
last=${DJC_KEY_rec_uuid#${DJC_KEY_rec_uuid%?}}
if [ "$last" = 2 ] && [ -e "$T/hold_once" ]; then rm -f "$T/hold_once"; echo $$ > "$T/held"; sleep 30; exit 1; fi
echo "{\"u\": \"1f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4f$((last + 5))\", \"n2\": $((DJC_KEY_rec_uuid_n))}"
P
	sed -i 's/DJC_KEY_rec_uuid_n/last * 2/' mk_tag.sh
	chmod +x mk_tag.sh
	expect_rc 0 "a table with a uuid key declares" djc declare uuid.djc
	: > hold_once
	T="$T" DJC_JOBS_LEASE_TIMEOUT=1 setsid "$DJC" populate Tag --reserve-jobs > w.out 2>&1 &
	local w=$!
	for i in $(seq 600); do [ -s held ] && break; nap 0.05; done
	check "the make of the second key runs" [ -s held ]
	{ kill -KILL -- "-$w"; wait $w; } 2>/dev/null
	kill -KILL -- "-$(cat held)" 2>/dev/null   # the make leads a group of its own
	expect_out "the killed worker made the key before, its reservation not lost" 1 count Tag
	expect_out "its job is left reserved" "Tag jobs: pending 1, reserved 1, success 0, error 0, ignore 0, total 2" djc jobs Tag
	# the dead worker's job comes back once its lease (1 s) lapses
	for i in $(seq 60); do
		[ "$(count Tag)" = 3 ] && break
		nap 0.2
		T="$T" DJC_JOBS_LEASE_TIMEOUT=1 "$DJC" populate Tag --reserve-jobs --no-refresh >/dev/null 2>&1
	done
	expect_out "the dead worker's job came back and was made" 3 count Tag
	expect_out "no job left" "Tag jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0" djc jobs Tag
	expect_out "the key's row, restricted by its uuid" 1 count Tag '{"rec_uuid": "0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e2", "n2": 4}'
	# a uuid in condition text matches as in JSON (on MariaDB the 16 bytes
	# DataJoint stores, in any form of the text)
	expect_out "restricted by its uuid in condition text" 1 count Tag "rec_uuid = '0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e2'"
	expect_out "... upper case, without dashes" 1 count Tag 'rec_uuid = "0F2D4C1E7B8A4D3C9E1F20A1B2C3D4E2" and n2 = 4'
	expect_out "... in a list" 2 count Rec "rec_uuid in ('0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e1', '0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e3')"
	expect_out "... the make's uuid, not a key" 1 count Tag "u = '1f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4f7'"
	expect_out "... !=" 2 count Rec "rec_uuid != '0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e2'"
	expect_out "... restricting the key source" "Tag: Completed 1 of 1 (100.0%), 0 remaining" \
		djc progress Tag --where "rec_uuid = '0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e2'"
	expect_out "... by Rec's attribute beyond the key" "Tag: Completed 2 of 2 (100.0%), 0 remaining" \
		djc progress Tag --where "rec_uuid != '0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e2' and n > 0"
	expect_out "the make's uuid reads as it was written" '"1f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4f7"' \
		sh -c "'$DJC' fetch Tag --where '{\"n2\": 4}' --format json | sed 's/.*\"u\": *\\(\"[^\"]*\"\\).*/\\1/'"
	case $DJC_BACKEND in
	mysql) expect_out "stored as DataJoint stores it: the 16 bytes" 1F2D4C1E7B8A4D3C9E1F20A1B2C3D4F7 \
		server_sql "SELECT HEX(u) FROM $(qt "$MAIN" __tag) WHERE n2 = 4" ;;
	postgresql) expect_out "stored as the server's uuid" 1f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4f7 \
		server_sql "SELECT u FROM $(qt "$MAIN" __tag) WHERE n2 = 4" ;;
	esac
	server_sql "DELETE FROM $(qt "$MAIN" __tag) WHERE n2 = 6"
	expect_rc 0 "a job keyed by a uuid is ignored by its key" djc jobs ignore Tag '{"rec_uuid": "0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e3"}'
	expect_out "... and listed so" '{"rec_uuid": "0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e3"}  status=ignore' \
		sh -c "'$DJC' jobs Tag --status ignore | cut -c1-67"
	expect_rc 0 "populate skips it" djc populate Tag --reserve-jobs
	expect_out "still 2" 2 count Tag
	djc jobs clear Tag --status ignore >/dev/null
	server_sql "DELETE FROM $(qt "$MAIN" __tag)"
	expect_rc 0 "populate directly: the uuid written too" djc populate Tag
	expect_out "3 rows" 3 count Tag
}
tcase uuid declare

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
