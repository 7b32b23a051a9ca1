#!/bin/bash
# test_adopt.sh - djc adopt / djc unadopt (issue 38, docs/adopt.md): a
# DataJoint-shaped schema made with the server's own client
# (tests/fixtures/datajoint-model/: 0.14 on MariaDB, 2.x on PostgreSQL) is
# read from the catalog, written as djc definitions (the dry run equals
# tests/fixtures/datajoint/*.adopted), declared into djc's own schema (the
# companion: the connection's) with the overlay's makes, populated with a
# per-key program and a serve python make, and unadopted. SQLite has no
# DataJoint schemas: adopt is refused there.
. "$ROOT/tests/cli/lib.sh"
FXM="$ROOT/tests/fixtures/datajoint-model"
FX="$ROOT/tests/fixtures/datajoint"
UP="${DJC_DATABASE_SCHEMA:-c}_aup"
MAIN="${DJC_DATABASE_SCHEMA:-c}_adj"
export PYTHONPATH="$ROOT/python"

# server_sql SQL: run SQL with the backend's own client
subst() { sed -e "s/@UP@/$UP/g" -e "s/@MAIN@/$MAIN/g" "$1"; }
qt() { if [ "$DJC_BACKEND" = mysql ]; then printf '`%s`.`%s`' "$1" "$2"; else printf '"%s"."%s"' "$1" "$2"; fi; }
# fingerprint: rows and a checksum of each DataJoint table djc only reads
# (one connection for the three: server_sql_each)
fingerprint() {
	local t sql=()
	for t in "$UP subject" "$MAIN #param_set" "$MAIN session"; do
		set -- $t
		case $DJC_BACKEND in
		mysql) sql+=("CHECKSUM TABLE $(qt "$1" "$2") EXTENDED") ;;
		postgresql) sql+=("SELECT COUNT(*), md5(COALESCE(string_agg(t::text, '|' ORDER BY t::text), '')) FROM $(qt "$1" "$2") t") ;;
		esac
	done
	server_sql_each "${sql[@]}"
}
# tables_or_none: djc tables, or "no companion" when there is none
tables_or_none() {
	"$DJC" tables 2>/dev/null || { "$DJC" tables 2>&1 | grep -q "^djc: no schema '$DJC_DATABASE_SCHEMA' on " && echo "no companion"; }
}
# companion_tables: djc's tables in the connection's schema
companion_tables() {
	server_sql "SELECT table_name FROM information_schema.tables WHERE table_schema = '$DJC_DATABASE_SCHEMA' AND table_name LIKE '~~%' ORDER BY table_name"
}

case $DJC_BACKEND in
mysql) FIX=dj014-mariadb ;;
postgresql) FIX=dj2-postgres ;;
*) FIX= ;;
esac
if [ -n "$FIX" ]; then
	subst "$FXM/$FIX.sql" > fixture.sql
	case $DJC_BACKEND in
	mysql) mariadb_cli < fixture.sql ;;
	postgresql) psql "${DJC_SERVER_URL:-$DJC_DATABASE_URL}" -q -v ON_ERROR_STOP=1 -f fixture.sql >/dev/null ;;
	esac
	subst "$FX/$FIX.adopted" > expected.djc
	cp "$FX/overlay.djc" ov.djc
fi

# the makes: Analysis copies the session's blob (per key, a shell
# program); Pair counts the gap (serve, python/djc_make.py)
cp "$FX/mk_analysis.sh" "$FX/mk_pair.py" .

case_sqlite_refused() {
	[ "$DJC_BACKEND" = sqlite ] || return 0
	expect_fail 2 "adopt on SQLite is refused" \
		"^djc: adopt: sqlite has no DataJoint schemas \(DataJoint schemas live on MySQL/MariaDB or PostgreSQL\)$" djc adopt ephys
	expect_out "nothing declared" "" djc tables
	# (the SQLite file the open made stays, empty: removing it would race
	# with another process that opened it meanwhile, whose tables would go
	# with the unlinked file)
	expect_fail 2 "adopt into a companion file of its own is refused" "^djc: adopt: sqlite has no DataJoint schemas" \
		djc --schema adoptx adopt ephys
}
tcase sqlite_refused

case_dry_run() {
	[ -n "$FIX" ] || return 0
	expect_rc 0 "adopt --dry-run" djc adopt "$MAIN" --overlay ov.djc --dry-run
	check "the definitions are the expected ones" [ "$OUT" = "$(cat expected.djc)" ]
	[ "$OUT" = "$(cat expected.djc)" ] || diff <(printf '%s\n' "$OUT") expected.djc >&2
	expect_fail 2 "nothing stored: not even the companion" "^djc: no schema '$DJC_DATABASE_SCHEMA' on " djc tables
	expect_fail 2 "a schema that is not there is named" "^djc: adopt: no schema ${MAIN}_nosuch on this server$" \
		djc adopt "${MAIN}_nosuch"
}
tcase dry_run

case_adopt() {
	[ -n "$FIX" ] || return 0
	BEFORE=$(fingerprint)
	expect_rc 0 "adopt the schema with its overlay" djc adopt "$MAIN" --overlay ov.djc
	check "the adopted tables are reported" grep -q "^created Analysis (computed) as __analysis$" <<< "$OUT"
	check "the parent of the other schema too" grep -q "^created $UP.Subject (manual) as subject$" <<< "$OUT"
	check "jobs tables for the computed ones" grep -q "^created Pair jobs table ~~pair$" <<< "$OUT"
	expect_out "adopt again: unchanged" "unchanged: the schema is already adopted" djc adopt "$MAIN" --overlay ov.djc
	run server_sql "SELECT table_name FROM information_schema.tables WHERE table_schema IN ('$MAIN', '$UP') AND table_name LIKE '~%'"
	check "nothing of djc's in DataJoint's schemas" [ -z "$OUT" ]
	expect_out "progress: the key source is session x param_set" "Analysis: Completed 0 of 10" \
		sh -c "'$DJC' progress Analysis | sed 's/ (.*//'"
	check "DataJoint's tables are as they were" [ "$(fingerprint)" = "$BEFORE" ]
}
tcase adopt

case_populate() {
	[ -n "$FIX" ] || return 0
	BEFORE=$(fingerprint)
	expect_rc 0 "populate Analysis directly (the overlay's per-key make)" djc populate Analysis
	expect_out "10 rows in DataJoint's table" 10 server_sql "SELECT COUNT(*) FROM $(qt "$MAIN" __analysis)"
	expect_out "10 part rows in DataJoint's part table" 10 server_sql "SELECT COUNT(*) FROM $(qt "$MAIN" __analysis__item)"
	expect_rc 0 "populate Pair through its jobs table (the overlay's serve python make)" djc populate Pair --reserve-jobs
	expect_out "13 pairs in DataJoint's table" 13 server_sql "SELECT COUNT(*) FROM $(qt "$MAIN" __pair)"
	expect_out "each pair's gap" 5 server_sql "SELECT COUNT(*) FROM $(qt "$MAIN" __pair) WHERE gap = session_idx - prev_idx AND prev_idx = 1"
	expect_out "progress complete" "Pair: Completed 13 of 13" sh -c "'$DJC' progress Pair | sed 's/ (.*//'"
	check "DataJoint's upstream tables are as they were" [ "$(fingerprint)" = "$BEFORE" ]
}
tcase populate adopt

# Pair's second reference to Session, renamed (-> Session.proj(prev_idx=
# 'session_idx')): prev_idx has Session.session_idx's lineage, as in
# DataJoint's ~lineage, so Pair joins and restricts by Session renamed alike
case_renamed_ref() {
	[ -n "$FIX" ] || return 0
	expect_out "Pair * Session renamed as the reference renames it: every pair" 13 \
		sh -c "'$DJC' fetch 'Pair * Session.proj(prev_idx=session_idx, prev_time=session_time)' --format jsonl | wc -l"
	expect_out "Pair & the first sessions, renamed" 5 \
		sh -c "'$DJC' fetch 'Pair & (Session & {\"session_idx\": 1}).proj(prev_idx=session_idx)' --format jsonl | wc -l"
	expect_out "Pair - the first sessions, renamed" 8 \
		sh -c "'$DJC' fetch 'Pair - (Session & {\"session_idx\": 1}).proj(prev_idx=session_idx)' --format jsonl | wc -l"
	expect_fail 2 "the renamed attribute against the parent's other key attribute is refused" "on attribute 'prev_idx'" \
		djc fetch 'Pair * Session.proj(prev_idx=subject_id)'
}
tcase renamed_ref populate

# `like` on an adopted enum attribute (DataJoint's Subject.sex): on
# PostgreSQL DataJoint's enum is a type of its own ("s"."enum_<hash>"),
# which LIKE does not take (before December 2026: exit 1, "operator does
# not exist: ... ~~ unknown"); the column is compared as text there, as
# MariaDB compares its enum
case_enum_like() {
	[ -n "$FIX" ] || return 0
	expect_out "like on an adopted enum" "subject_id,subject_name,sex
1,Ann,F" djc fetch "$UP.Subject & 'sex like \"F%\"'" --format csv
	expect_out "not like on an adopted enum" "subject_id,subject_name,sex
2,Bob,M" djc fetch "$UP.Subject & 'sex not like \"F%\"'" --format csv
	expect_out "like of a join with it" 2 sh -c "'$DJC' fetch 'Session * $UP.Subject & \"sex like \\\"M%\\\"\"' --format jsonl | wc -l"
}
tcase enum_like adopt

case_worker() {
	[ -n "$FIX" ] || return 0
	expect_rc 0 "djc worker with no table named" djc worker --until-empty --json
	check "it serves the tables the overlay gave a make, not DataJoint's others (Review, Timed; Graded)" \
		test "$(printf '%s' "$OUT" | jq -c .tables)" = '["Analysis","Pair"]'
	local nomake=Review
	[ "$DJC_BACKEND" = postgresql ] && nomake=Graded
	expect_fail 2 "naming a table without a make is still an error" "^djc: table $nomake has no make" \
		djc worker $nomake --until-empty
}
tcase worker adopt

case_overlay_refusals() {
	[ -n "$FIX" ] || return 0
	local before
	before=$(tables_or_none)
	printf 'Analysis\n    make = ./x\nNoSuch\n    make = ./y\n' > o1.djc
	expect_fail 2 "an overlay naming an unknown table" \
		"^djc: adopt: o1\.djc:3: no table NoSuch in the adopted schemas" djc adopt "$MAIN" --overlay o1.djc
	printf '# manual\nSession\n    make = ./x\n' > o2.djc
	expect_fail 2 "an overlay naming a manual table" \
		"^djc: adopt: o2\.djc:2: Session is a manual table: djc makes only computed and imported tables$" \
		djc adopt "$MAIN" --overlay o2.djc
	printf 'Pair\n    key_source = {"nope": 1}\n' > o3.djc
	expect_fail 2 "an overlay key_source naming an unknown attribute" \
		"^djc: adopt: o3\.djc:2: key_source of Pair restricts \"nope\", which is not an attribute of its tables" \
		djc adopt "$MAIN" --overlay o3.djc
	printf 'Pair\n    threads = 4\n' > o4.djc
	expect_fail 2 "an overlay line of no known kind" "^djc: o4\.djc:2: 'threads = 4': an overlay block has only make" \
		djc adopt "$MAIN" --overlay o4.djc
	printf '# a join key source naming no table\nPair\n    make = ./x\n    key_source = NoSuch * Session\n' > o6.djc
	expect_fail 2 "an overlay key_source the parser refuses is told at the overlay's line" \
		"^djc: adopt: o6\.djc:4: key_source names unknown table 'NoSuch'" djc adopt "$MAIN" --overlay o6.djc
	expect_fail 2 "so in a dry run" "^djc: adopt: o6\.djc:4: key_source names unknown table 'NoSuch'" \
		djc adopt "$MAIN" --overlay o6.djc --dry-run
	if [ "$DJC_BACKEND" = mysql ]; then
		printf 'Timed\n    make = ./x\n' > o5.djc
		expect_fail 2 "a make for a table with a column djc cannot write" \
			"^djc: adopt: o5\.djc:2: Timed\.column at: a column of a type djc does not have \(time\) cannot be written by djc$" \
			djc adopt "$MAIN" --overlay o5.djc
	fi
	expect_out "nothing changed" "$before" tables_or_none
}
tcase overlay_refusals

# An overlay's key_source restricts by what declare's does: a parent's
# secondary attribute (ParamSet's threshold) and an ancestor's (Subject's
# subject_name, through Session), not only the table's own (it was refused:
# "names attribute 'threshold', which the table does not have")
case_overlay_key_source() {
	[ -n "$FIX" ] || return 0
	local C="${DJC_DATABASE_SCHEMA}_aksc"
	printf 'Analysis\n    make = ./mk_analysis.sh\n    key_source = {"threshold": 1.5, "subject_name": "Ann"}\n' > oks.djc
	expect_rc 0 "adopt --dry-run with a key_source on a parent's and an ancestor's attribute" \
		djc --schema "$C" adopt "$MAIN" --overlay oks.djc --dry-run
	check "the key_source line in Analysis" grep -Fxq '    key_source = {"threshold": 1.5, "subject_name": "Ann"}' <<< "$OUT"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$MAIN" --overlay oks.djc
	# (of 3 whatever case populate made of them already: the rows are DataJoint's)
	expect_out "progress: Ann's 3 sessions with the 1.5 parameter set" "Analysis: of 3" \
		sh -c "'$DJC' --schema '$C' progress Analysis | sed 's/ (.*//; s/Completed [0-9]* of/of/'"
	# a changed key_source is a changed definition: --accept-changes says
	# what changed (it said "(its definition)")
	printf 'Analysis\n    make = ./mk_analysis.sh\n    key_source = {"threshold": 1.5}\n' > oks2.djc
	expect_rc 0 "adopt --accept-changes with another key_source" djc --schema "$C" adopt "$MAIN" --overlay oks2.djc --accept-changes
	check "... the report names the key_source change" grep -Eq \
		'^changed Analysis \(computed\) as [^ ]*analysis: took DataJoint.s definition \(key_source: \{"threshold": 1\.5, "subject_name": "Ann"\} -> \{"threshold": 1\.5\}\); its jobs kept' <<< "$OUT"
}
tcase overlay_key_source

case_unknown_layout() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA:-c}_awd"
	case $DJC_BACKEND in
	mysql) server_sql "CREATE DATABASE \`$W\`; CREATE TABLE \`$W\`.\`session\` (s int NOT NULL, PRIMARY KEY (s)); CREATE TABLE \`$W\`.\`Odd__Name\` (s int NOT NULL, PRIMARY KEY (s))" ;;
	postgresql) server_sql "CREATE SCHEMA \"$W\"; CREATE TABLE \"$W\".\"session\" (s int NOT NULL, PRIMARY KEY (s)); CREATE TABLE \"$W\".\"Odd__Name\" (s int NOT NULL, PRIMARY KEY (s))" ;;
	esac
	expect_fail 2 "a table of no DataJoint tier is refused, named" \
		"^djc: adopt: table $W\.Odd__Name: not a DataJoint table name .*djc does not recognise this layout$" djc adopt "$W"
	if [ "$DJC_BACKEND" = mysql ]; then
		server_sql "DROP TABLE \`$W\`.\`Odd__Name\`; CREATE TABLE \`$W\`.\`_raw\` (s int NOT NULL, v int NOT NULL COMMENT ':graph2:x', PRIMARY KEY (s))"
		expect_fail 2 "a 0.14 marker djc does not know is refused, named" \
			"^djc: adopt: table $W\._raw: column v: unknown DataJoint 0\.14 attribute type :graph2:" djc adopt "$W"
	fi
	expect_out "nothing adopted from it" "" sh -c "'$DJC' tables | grep -i session_x; true"
}
tcase unknown_layout

# DataJoint 2.x's singleton table (declared without a key: the hidden key
# column _singleton) is left out, said, and the rest adopted (it used to
# refuse the whole schema)
case_singleton() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA:-c}_asg" C="${DJC_DATABASE_SCHEMA:-c}_asgc"
	case $DJC_BACKEND in
	mysql) server_sql "CREATE DATABASE \`$W\`; CREATE TABLE \`$W\`.\`session\` (s int NOT NULL COMMENT ':int32:', PRIMARY KEY (s)); CREATE TABLE \`$W\`.\`#config\` (\`_singleton\` tinyint NOT NULL DEFAULT 1 COMMENT ':bool:singleton primary key', v int NOT NULL COMMENT ':int32:', PRIMARY KEY (\`_singleton\`)); INSERT INTO \`$W\`.\`session\` VALUES (1), (2)" ;;
	postgresql) server_sql "CREATE SCHEMA \"$W\"; CREATE TABLE \"$W\".\"session\" (s int NOT NULL, PRIMARY KEY (s)); CREATE TABLE \"$W\".\"#config\" (\"_singleton\" boolean NOT NULL DEFAULT TRUE, v int NOT NULL, PRIMARY KEY (\"_singleton\")); INSERT INTO \"$W\".\"session\" VALUES (1), (2)" ;;
	esac
	local NOTE="left out $W.#config (Config): a singleton table (no key but DataJoint 2.x's hidden _singleton), which djc does not adopt"
	expect_rc 0 "a dry run of a schema with a singleton table" djc --schema "$C" adopt "$W" --dry-run
	check "the dry run says it is left out, as a comment" grep -qxF "# $NOTE" <<< "$OUT"
	check "the dry run defines Session" grep -q "^Session (manual)" <<< "$OUT"
	check "the dry run defines no Config" bash -c '! grep -q "^Config" <<< "$1"' _ "$OUT"
	expect_rc 0 "adopt a schema with a singleton table" djc --schema "$C" adopt "$W"
	check "adopt says the singleton is left out" grep -qxF "$NOTE" <<< "$OUT"
	check "Session is adopted" grep -q "^created Session (manual)" <<< "$OUT"
	expect_out "Session's rows are read" 2 sh -c "'$DJC' --schema '$C' fetch Session --format jsonl | wc -l"
	expect_rc 0 "adopt again" djc --schema "$C" adopt "$W"
	check "unchanged, and the singleton still left out" \
		test "$OUT" = "unchanged: the schema is already adopted
$NOTE"
	expect_fail 2 "Config is not a djc table" "Config" djc --schema "$C" fetch Config
	expect_rc 0 "unadopt it" djc --schema "$C" unadopt "$W"
}
tcase singleton

case_unadopt() {
	[ -n "$FIX" ] || return 0
	djc adopt "$MAIN" --overlay ov.djc >/dev/null
	check "djc's jobs tables are in the companion" [ -n "$(companion_tables)" ]
	expect_rc 0 "unadopt the schema" djc unadopt "$MAIN"
	check "each table is reported" grep -q "^unadopted Analysis$" <<< "$OUT"
	check "the parent of the other schema goes with it" grep -q "^unadopted $UP.Subject$" <<< "$OUT"
	expect_out "no table left" "" djc tables
	run companion_tables
	check "djc's jobs and history tables are gone" [ -z "$OUT" ]
	expect_out "DataJoint's tables keep their rows" 2 server_sql "SELECT COUNT(*) FROM $(qt "$UP" subject)"
	expect_fail 2 "unadopt again: nothing adopted" "^djc: unadopt: no table is adopted from DataJoint schema $MAIN$" \
		djc unadopt "$MAIN"
	expect_rc 0 "adopt again after unadopt" djc adopt "$MAIN" --overlay ov.djc
	check "declared anew" grep -q "^created Analysis (computed) as __analysis$" <<< "$OUT"
}
tcase unadopt

# DataJoint 2.x on MariaDB (tests/fixtures/datajoint/dj2-mariadb.sql): the
# markers decide the types, DataJoint's own ~~analysis jobs table is left
# alone (djc's is in the companion), a case-insensitive text key, _job_*
# columns filled; a companion of its own
case_mariadb_2x() {
	[ "$DJC_BACKEND" = mysql ] || return 0
	local U2="${DJC_DATABASE_SCHEMA}_a2up" M2="${DJC_DATABASE_SCHEMA}_a2dj" C2="${DJC_DATABASE_SCHEMA}_a2c"
	sed -e "s/@UP@/$U2/g" -e "s/@MAIN@/$M2/g" "$FX/dj2-mariadb.sql" | mariadb_cli
	sed -e "s/@UP@/$U2/g" -e "s/@MAIN@/$M2/g" "$FX/dj2-mariadb.adopted" > expected2.djc
	sed 's/DJC_KEY_param_id/DJC_KEY_session_idx/; /_part/d' mk_analysis.sh > mk_analysis2.sh
	chmod +x mk_analysis2.sh
	printf 'Analysis\n    make = ./mk_analysis2.sh\n' > ov2.djc
	local before
	before=$(server_sql "CHECKSUM TABLE \`$U2\`.\`subject\`, \`$M2\`.\`#method\`, \`$M2\`.\`session\`, \`$M2\`.\`~~analysis\` EXTENDED")
	expect_rc 0 "adopt --dry-run of a 2.x schema" djc --schema "$C2" adopt "$M2" --overlay ov2.djc --dry-run
	check "the definitions are the expected ones (markers, json, bool, <blob>, a store column raw)" [ "$OUT" = "$(cat expected2.djc)" ]
	[ "$OUT" = "$(cat expected2.djc)" ] || diff <(printf '%s\n' "$OUT") expected2.djc >&2
	printf 'Analysis\n    make = ./mk_analysis2.sh\nArchive\n    make_serve = python3 archive.py\n' > ov3.djc
	expect_fail 2 "a make for a table with an external store column is refused, naming it" \
		"^djc: adopt: ov3\.djc:4: Archive\.column copy: external store column \(<blob@local>\) cannot be written by djc$" \
		djc --schema "$C2" adopt "$M2" --overlay ov3.djc
	expect_fail 2 "nothing was declared: not even the companion" "^djc: no schema '$C2' on " djc --schema "$C2" tables
	expect_rc 0 "adopt it" djc --schema "$C2" adopt "$M2" --overlay ov2.djc
	expect_rc 0 "populate through djc's jobs table" djc --schema "$C2" populate Analysis --reserve-jobs
	check "6 made" grep -q "^Analysis: 6 made, 0 errors" <<< "$OUT"
	expect_out "rows in DataJoint's table, the case-insensitive key as written" 3 \
		server_sql "SELECT COUNT(*) FROM \`$M2\`.\`__analysis\` WHERE method = 'Fast' AND BINARY method = 'Fast'"
	expect_out "_job_* columns filled" 6 server_sql "SELECT COUNT(*) FROM \`$M2\`.\`__analysis\` WHERE _job_start_time IS NOT NULL"
	expect_out "progress complete" "Analysis: Completed 6 of 6" sh -c "'$DJC' --schema '$C2' progress Analysis | sed 's/ (.*//'"
	expect_out "djc's jobs table's key has the target's collation" utf8mb4_unicode_ci \
		server_sql "SELECT collation_name FROM information_schema.columns WHERE table_schema = '$C2' AND table_name = '~~analysis' AND column_name = 'method'"
	check "DataJoint's tables (its own ~~analysis too) are as they were" \
		[ "$(server_sql "CHECKSUM TABLE \`$U2\`.\`subject\`, \`$M2\`.\`#method\`, \`$M2\`.\`session\`, \`$M2\`.\`~~analysis\` EXTENDED")" = "$before" ]
}
tcase mariadb_2x

# A small DataJoint 2.x-shaped schema W made with the server's client:
# mk_dj_schema W SQL... (each SQL a statement, the schema named @W@; the
# type markers as DataJoint 2.3.2 writes them)
# (over one connection: server_sql_each)
mk_dj_schema() {
	local w=$1 st sql=()
	shift
	case $DJC_BACKEND in
	mysql) sql=("CREATE DATABASE \`$w\`") ;;
	postgresql) sql=("CREATE SCHEMA \"$w\"") ;;
	esac
	for st in "$@"; do sql+=("${st//@W@/$w}"); done
	server_sql_each "${sql[@]}"
}
# mk_three_computed NAME [SQL...]: a DataJoint schema NAME of a manual src
# (k: 1, 2, 3) and three computed tables of it, __feat (x), __gone (y) and
# __ok (z), each a double; then the SQL statements (@W@ is NAME)
mk_three_computed() {
	local w=$1 q='"' d='double precision'
	shift
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$w" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__gone$q (k int NOT NULL, y $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__ok$q (k int NOT NULL, z $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2), (3)" "$@"
}
# count_in SCHEMA TABLE [WHERE]: count, in djc's schema SCHEMA
count_in() { local s=$1; shift; DJC_DATABASE_SCHEMA=$s count "$@"; }
# schema_there NAME: the server has a schema (MariaDB: database) NAME
schema_there() {
	[ -n "$(server_sql "SELECT 1 FROM information_schema.schemata WHERE schema_name = '$1'")" ]
}

# A MySQL timestamp column with DataJoint's CURRENT_TIMESTAMP default (a
# 0.14 or 2.x definition's `x = CURRENT_TIMESTAMP : timestamp`) and a time
# column with a default: raw(...) columns, read-only, their defaults the
# server's, kept as written; the schema is adopted (it was refused)
case_raw_defaults() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_ats" C="${DJC_DATABASE_SCHEMA}_atsc"
	case $DJC_BACKEND in
	mysql) mk_dj_schema "$W" "CREATE TABLE \`@W@\`.\`entry\` (entry_id int NOT NULL COMMENT ':int32:', entered timestamp NOT NULL DEFAULT current_timestamp(), at time NOT NULL DEFAULT '12:00:00', PRIMARY KEY (entry_id))" \
		"INSERT INTO \`@W@\`.\`entry\` (entry_id) VALUES (1)" ;;
	postgresql) mk_dj_schema "$W" "CREATE TABLE \"@W@\".\"entry\" (entry_id integer NOT NULL, entered timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP, at time NOT NULL DEFAULT '12:00:00', PRIMARY KEY (entry_id))" \
		"COMMENT ON COLUMN \"@W@\".\"entry\".entry_id IS ':int32:'" "INSERT INTO \"@W@\".\"entry\" (entry_id) VALUES (1)" ;;
	esac
	local ts='entered = CURRENT_TIMESTAMP : raw\(timestamp\)' tm='at = "12:00:00" : raw\(time\)'
	[ "$DJC_BACKEND" = postgresql ] && ts='entered = CURRENT_TIMESTAMP : datetime\(6\)' tm='at = "12:00:00" : raw\(time without time zone\)'
	expect_rc 0 "adopt --dry-run of a schema with server defaults on raw columns" djc --schema "$C" adopt "$W" --dry-run
	check "the CURRENT_TIMESTAMP default kept as written" grep -Eq "^    $ts$" <<< "$OUT"
	check "the time's default kept as written, its type raw" grep -Eq "^    $tm$" <<< "$OUT"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W"
	check "Entry declared" grep -q "^created Entry (manual) as entry$" <<< "$OUT"
	expect_out "its row read, the raw time as the server's text" 12:00:00 \
		sh -c "'$DJC' --schema '$C' fetch Entry --format json | jq -r .at"
	expect_fail 2 "its raw columns stay read-only" "is a raw column of an adopted table|adopted from DataJoint schema" \
		sh -c "echo '{\"entry_id\": 2}' | '$DJC' --schema '$C' insert Entry"
}
tcase raw_defaults

# A computed table of DataJoint's with a raw column the server fills (a
# MySQL timestamp = CURRENT_TIMESTAMP, common in 0.14 schemas; a time with
# a default; a nullable time): djc populates it, its rows leaving those
# columns to the server. A raw column without either still stops a make.
sql_words() { server_sql "$1" | tr '|\t' '  '; }   # its columns apart by spaces
case_raw_server_filled() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_arf" C="${DJC_DATABASE_SCHEMA}_arfc" ts='timestamp NOT NULL DEFAULT current_timestamp()'
	[ "$DJC_BACKEND" = postgresql ] && ts="time NOT NULL DEFAULT '08:00:00'"
	local q='`'
	[ "$DJC_BACKEND" = postgresql ] && q='"'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}session$q (session_idx int NOT NULL, PRIMARY KEY (session_idx))" \
		"CREATE TABLE $q@W@$q.${q}__stamp$q (session_idx int NOT NULL, n int NOT NULL, made_at $ts, at time NOT NULL DEFAULT '12:00:00', note time NULL, PRIMARY KEY (session_idx), FOREIGN KEY (session_idx) REFERENCES $q@W@$q.${q}session$q (session_idx))" \
		"CREATE TABLE $q@W@$q.${q}__clock$q (session_idx int NOT NULL, at time NOT NULL, PRIMARY KEY (session_idx), FOREIGN KEY (session_idx) REFERENCES $q@W@$q.${q}session$q (session_idx))" \
		"INSERT INTO $q@W@$q.${q}session$q VALUES (1), (2), (3)"
	printf '#!/bin/sh\necho "{\\"n\\": $((DJC_KEY_session_idx * 10))}"\n' > mk_stamp.sh
	printf '#!/bin/sh\necho "{\\"n\\": 1, \\"at\\": \\"13:00:00\\"}"\n' > mk_stamp_at.sh
	chmod +x mk_stamp.sh mk_stamp_at.sh
	printf 'Stamp\n    make = ./mk_stamp.sh\n' > ovs.djc
	expect_rc 0 "a computed table whose raw columns the server fills takes a make" \
		"$DJC" --schema "$C" adopt "$W" --overlay ovs.djc
	printf 'Clock\n    make = ./mk_stamp.sh\n' > ovc.djc
	expect_fail 2 "one with a raw column the server cannot fill does not, naming it" \
		"ovc\.djc:2: Clock\.column at: a column of a type djc does not have \(time" \
		"$DJC" --schema "${C}x" adopt "$W" --overlay ovc.djc
	expect_rc 0 "populate it through its jobs table" "$DJC" --schema "$C" populate Stamp --reserve-jobs
	check "3 made" grep -q "^Stamp: 3 made, 0 errors" <<< "$OUT"
	expect_out "the server filled them: made_at set, at its default, note NULL" "3 3 3" \
		sql_words "SELECT COUNT(made_at), SUM(CASE WHEN at = '12:00:00' THEN 1 ELSE 0 END), SUM(CASE WHEN note IS NULL THEN 1 ELSE 0 END) FROM $q$W$q.${q}__stamp$q"
	expect_out "the make's values are there" 20 server_sql "SELECT n FROM $q$W$q.${q}__stamp$q WHERE session_idx = 2"
	server_sql "DELETE FROM $q$W$q.${q}__stamp$q WHERE session_idx = 3"
	expect_rc 1 "a make that writes a raw column fails its key" "$DJC" --schema "$C" populate Stamp --make ./mk_stamp_at.sh
	check "... naming the column" grep -q "'at'.*raw column of an adopted table" <<< "$OUT$ERR"
	expect_out "nothing written for it" 2 server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__stamp$q"
	printf '#!/bin/sh\necho "{\\"n\\": 1, \\"note\\": null}"\n' > mk_stamp_null.sh
	chmod +x mk_stamp_null.sh
	expect_rc 1 "a make that writes null to a raw column (the server's default would replace it) fails" \
		"$DJC" --schema "$C" populate Stamp --make ./mk_stamp_null.sh
	check "... naming the column" grep -q "'note'.*raw column of an adopted table" <<< "$OUT$ERR"
	# what adopt checks against what it stored, a dry run checks too
	server_sql "ALTER TABLE $q$W$q.${q}session$q ADD COLUMN y int NOT NULL DEFAULT 0"
	expect_fail 2 "a dry run refuses a table whose definition changed since it was adopted" \
		"^djc: adopt: table Session is not as adopted: DataJoint table $W\.session changed since it was adopted: column 'y' added; adopt it again: " \
		"$DJC" --schema "$C" adopt "$W" --overlay ovs.djc --dry-run
	expect_fail 2 "as adopt does" "^djc: adopt: table Session is not as adopted: DataJoint table $W\.session changed since it was adopted: column 'y' added" \
		"$DJC" --schema "$C" adopt "$W" --overlay ovs.djc
}
tcase raw_server_filled

# DataJoint 2.3.2 declares and populates an imported table with a key
# attribute of its own (rec_id; make inserts two rows per session) with
# jobs.allow_new_pk_fields_in_computed_tables at its default: it checks
# the setting only when it declares a table. Adopting takes it, and its
# jobs are its parents' keys, as DataJoint's are
case_own_key() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aok" C="${DJC_DATABASE_SCHEMA}_aokc"
	case $DJC_BACKEND in
	mysql) mk_dj_schema "$W" "CREATE TABLE \`@W@\`.\`session\` (session_idx int NOT NULL COMMENT ':int32:', PRIMARY KEY (session_idx))" \
		"CREATE TABLE \`@W@\`.\`_recording\` (session_idx int NOT NULL, rec_id int NOT NULL COMMENT ':int32:', fs double NOT NULL COMMENT ':float64:', PRIMARY KEY (session_idx, rec_id), FOREIGN KEY (session_idx) REFERENCES \`@W@\`.\`session\` (session_idx) ON UPDATE CASCADE ON DELETE RESTRICT)" \
		"INSERT INTO \`@W@\`.\`session\` VALUES (1), (2), (3)" ;;
	postgresql) mk_dj_schema "$W" "CREATE TABLE \"@W@\".\"session\" (session_idx integer NOT NULL, PRIMARY KEY (session_idx))" \
		"CREATE TABLE \"@W@\".\"_recording\" (session_idx integer NOT NULL, rec_id integer NOT NULL, fs double precision NOT NULL, PRIMARY KEY (session_idx, rec_id), FOREIGN KEY (session_idx) REFERENCES \"@W@\".\"session\" (session_idx) ON UPDATE CASCADE ON DELETE RESTRICT)" \
		"INSERT INTO \"@W@\".\"session\" VALUES (1), (2), (3)" ;;
	esac
	printf '#!/bin/sh\necho "{\\"rec_id\\": 0, \\"fs\\": 1000}"\necho "{\\"rec_id\\": 1, \\"fs\\": $DJC_KEY_session_idx}"\n' > mk_rec.sh
	chmod +x mk_rec.sh
	printf 'Recording\n    make = ./mk_rec.sh\n' > ovr.djc
	expect_rc 0 "adopt a schema whose imported table has a key attribute of its own" \
		env DJC_JOBS_ALLOW_NEW_PK_FIELDS_IN_COMPUTED_TABLES=false "$DJC" --schema "$C" adopt "$W" --overlay ovr.djc
	check "Recording declared with its jobs table" grep -q "^created Recording jobs table ~~recording$" <<< "$OUT"
	expect_out "progress: a job per session (its parents' keys)" "Recording: Completed 0 of 3" \
		sh -c "'$DJC' --schema '$C' progress Recording | sed 's/ (.*//'"
	expect_rc 0 "populate it through djc's jobs table" djc --schema "$C" populate Recording --reserve-jobs
	check "3 made" grep -q "^Recording: 3 made, 0 errors" <<< "$OUT"
	expect_out "two rows a session in DataJoint's table" 6 server_sql "SELECT COUNT(*) FROM $(qt "$W" _recording)"
	expect_out "make's rows as it wrote them" 3 \
		server_sql "SELECT COUNT(*) FROM $(qt "$W" _recording) WHERE rec_id = 1 AND fs = session_idx"
	expect_out "progress complete" "Recording: Completed 3 of 3" sh -c "'$DJC' --schema '$C' progress Recording | sed 's/ (.*//'"
	expect_rc 0 "adopt again: unchanged" djc --schema "$C" adopt "$W" --overlay ovr.djc
}
tcase own_key

# DataJoint 2.3.2 with jobs.add_job_metadata gives the parts of an imported
# table (`_master__part`, not those of a computed one) the hidden _job_*
# columns too (its declare tests `name.startswith("_")` only), and never
# fills them there. adopt wrote `job_metadata = true` into the part's
# definition, which a part may not have: the whole schema was refused. The
# part is adopted without it; its _job_* columns stay the server's defaults.
case_imported_part_meta() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aipm" C="${DJC_DATABASE_SCHEMA}_aipmc" q='"' d='double precision' ts=timestamp i=integer
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double' ts='datetime(6)' i=int
	local meta="_job_start_time $ts DEFAULT NULL, _job_duration float DEFAULT NULL, _job_version varchar(64) DEFAULT ''"
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}session$q (k $i NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}_sort$q (k $i NOT NULL, n $i NOT NULL, $meta, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}session$q (k))" \
		"CREATE TABLE $q@W@$q.${q}_sort__unit$q (k $i NOT NULL, unit $i NOT NULL, snr $d NOT NULL, $meta, PRIMARY KEY (k, unit), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}_sort$q (k))" \
		"INSERT INTO $q@W@$q.${q}session$q VALUES (1), (2)"
	printf '#!/bin/sh\necho "{\\"n\\": 2}"\necho "{\\"_part\\": \\"Unit\\", \\"unit\\": 0, \\"snr\\": 1.5}"\necho "{\\"_part\\": \\"Unit\\", \\"unit\\": 1, \\"snr\\": 2.5}"\n' > mk_sort.sh
	chmod +x mk_sort.sh
	printf 'Sort\n    make = ./mk_sort.sh\n' > ovs.djc
	expect_rc 0 "adopt an imported table whose part has DataJoint's _job_* columns" djc --schema "$C" adopt "$W" --overlay ovs.djc
	expect_rc 0 "dry run" djc --schema "$C" adopt "$W" --overlay ovs.djc --dry-run
	check "job_metadata on the imported table only" [ "$(grep -c 'job_metadata = true' <<< "$OUT")" = 1 ]
	expect_rc 0 "populate the master and its part" djc --schema "$C" populate Sort --reserve-jobs
	check "2 made" grep -q "^Sort: 2 made, 0 errors" <<< "$OUT"
	expect_out "the master's _job_* columns filled" 2 server_sql "SELECT COUNT(*) FROM $(qt "$W" _sort) WHERE _job_start_time IS NOT NULL"
	expect_out "the part's rows, their _job_* columns the server's defaults" 4 \
		server_sql "SELECT COUNT(*) FROM $(qt "$W" _sort__unit) WHERE _job_start_time IS NULL AND _job_version = ''"
	expect_rc 0 "adopt again: unchanged" djc --schema "$C" adopt "$W" --overlay ovs.djc
	check "unchanged" grep -q "^unchanged" <<< "$OUT"
}
tcase imported_part_meta

# DataJoint 2.x on PostgreSQL declares `int8` as smallint (no tinyint there)
# and checks no range, so its rows may hold 200 or -300 there. adopt took
# the `:int8:` marker as djc's int8 (-128..127): such a key's make failed
# ("200 is out of range -128..127"), and so did a restriction by it. It is
# adopted as int16, the column's range; a schema adopted before as int8
# keeps working (populate does not call it changed) and takes int16 with
# --accept-changes, its jobs kept (the jobs table's key is smallint either way).
case_pg_int8() {
	[ "$DJC_BACKEND" = postgresql ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_ai8" C="${DJC_DATABASE_SCHEMA}_ai8c"
	mk_dj_schema "$W" "CREATE TABLE \"@W@\".\"chan\" (chan smallint NOT NULL, PRIMARY KEY (chan))" \
		"COMMENT ON COLUMN \"@W@\".\"chan\".\"chan\" IS ':int8:channel'" \
		"CREATE TABLE \"@W@\".\"__chan_stat\" (chan smallint NOT NULL, twice integer NOT NULL, PRIMARY KEY (chan), FOREIGN KEY (chan) REFERENCES \"@W@\".\"chan\" (chan))" \
		"COMMENT ON COLUMN \"@W@\".\"__chan_stat\".\"twice\" IS ':int32:'" \
		"INSERT INTO \"@W@\".\"chan\" VALUES (1), (200), (-300)"
	printf '#!/bin/sh\necho "{\\"twice\\": $((DJC_KEY_chan * 2))}"\n' > mk_twice.sh
	chmod +x mk_twice.sh
	printf 'ChanStat\n    make = ./mk_twice.sh\n' > ovi8.djc
	expect_rc 0 "adopt DataJoint's int8 on PostgreSQL" djc --schema "$C" adopt "$W" --overlay ovi8.djc --dry-run
	check "as int16, the smallint's range" grep -q "^    chan : int16   # channel$" <<< "$OUT"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W" --overlay ovi8.djc
	expect_rc 0 "populate every key, 200 and -300 too" djc --schema "$C" populate ChanStat --reserve-jobs
	check "3 made" grep -q "^ChanStat: 3 made, 0 errors" <<< "$OUT"
	expect_out "make's rows" 3 server_sql "SELECT COUNT(*) FROM \"$W\".\"__chan_stat\" WHERE twice = 2 * chan"
	expect_out "a restriction by 200" $'chan\n200' djc --schema "$C" fetch Chan --where '{"chan": 200}' --format csv --attrs chan
	# what an older djc stored: int8
	server_sql_each "UPDATE \"$C\".\"~djc_pipeline\" SET definition = REPLACE(definition, 'chan : int16', 'chan : int8')" \
		"DELETE FROM \"$W\".\"__chan_stat\" WHERE chan = 1"
	expect_rc 0 "an older adoption still populates (not called changed)" djc --schema "$C" populate ChanStat --reserve-jobs
	expect_rc 0 "adopt --accept-changes takes int16" djc --schema "$C" adopt "$W" --accept-changes
	check "its jobs kept" grep -q "^changed ChanStat (computed) as __chan_stat: took DataJoint's definition (column 'chan' int8 -> int16); its jobs kept" <<< "$OUT"
}
tcase pg_int8

# DataJoint's datetime with a fraction of a second as a key, and written by
# a make: on PostgreSQL DataJoint 2.x declares `datetime` as `timestamp`
# (microseconds), `datetime(3)` as `timestamp(3)`; on MariaDB `datetime(6)`.
# Adopted at the server's precision (a whole-seconds `datetime` refused the
# make's value, and a key cut to whole seconds would lose its row on its way
# through the jobs table and back), read, written and matched exactly.
case_fractional_times() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_afr" C="${DJC_DATABASE_SCHEMA}_afrc" q='"' ty=timestamp ty3='timestamp(3)' m=datetime
	[ "$DJC_BACKEND" = mysql ] && q='`' ty='datetime(6)' ty3='datetime(3)' m='datetime(6)'
	local cm="COMMENT ':$m:'" cm3="COMMENT ':datetime(3):'"
	[ "$DJC_BACKEND" = postgresql ] && cm= cm3=
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}tick$q (t $ty NOT NULL $cm, PRIMARY KEY (t))" \
		"CREATE TABLE $q@W@$q.${q}__echo$q (t $ty NOT NULL, seen $ty NOT NULL $cm, seen3 $ty3 NOT NULL $cm3, PRIMARY KEY (t), FOREIGN KEY (t) REFERENCES $q@W@$q.${q}tick$q (t))" \
		"INSERT INTO $q@W@$q.${q}tick$q VALUES ('2024-01-01 10:00:00.5'), ('2024-01-01 10:00:00.123456'), ('2024-01-01 10:00:00'), ('1999-12-31 23:59:59.999999')"
	if [ "$DJC_BACKEND" = postgresql ]; then
		server_sql_each "COMMENT ON COLUMN $q$W$q.${q}tick$q.t IS ':datetime:'" \
			"COMMENT ON COLUMN $q$W$q.${q}__echo$q.seen IS ':datetime:'" \
			"COMMENT ON COLUMN $q$W$q.${q}__echo$q.seen3 IS ':datetime(3):'"
	fi
	# the make writes the key's time back, and 0.25 s (3 digits) into seen3
	printf '#!/bin/sh\necho "{\\"seen\\": \\"$DJC_KEY_t\\", \\"seen3\\": \\"2024-02-02 02:02:02.25\\"}"\n' > mk_echo.sh
	chmod +x mk_echo.sh
	printf 'Echo\n    make = ./mk_echo.sh\n' > ove.djc
	expect_rc 0 "adopt --dry-run of datetimes with fractions" djc --schema "$C" adopt "$W" --overlay ove.djc --dry-run
	check "the key at the server's precision: microseconds" grep -q "^    t : datetime(6)$" <<< "$OUT"
	check "a datetime(3) stays datetime(3)" grep -q "^    seen3 : datetime(3)$" <<< "$OUT"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W" --overlay ove.djc
	expect_out "the keys read with their microseconds" \
		"1999-12-31 23:59:59.999999 2024-01-01 10:00:00.000000 2024-01-01 10:00:00.123456 2024-01-01 10:00:00.500000" \
		sh -c "'$DJC' --schema '$C' fetch Tick --format json | jq -rs 'map(.t) | sort | join(\" \")'"
	expect_out "a restriction by the exact time matches" 1 count_in "$C" Tick '{"t": "2024-01-01 10:00:00.123456"}'
	expect_out "... a shorter form of it too" 1 count_in "$C" Tick '{"t": "2024-01-01 10:00:00.5"}'
	expect_rc 0 "populate through djc's jobs table" djc --schema "$C" populate Echo --reserve-jobs
	check "4 made" grep -q "^Echo: 4 made, 0 errors" <<< "$OUT"
	expect_out "each row is its key's, the make's time exact" 4 \
		server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__echo$q WHERE seen = t AND seen3 = '2024-02-02 02:02:02.25'"
	expect_out "progress complete" "Echo: Completed 4 of 4" sh -c "'$DJC' --schema '$C' progress Echo | sed 's/ (.*//'"
	expect_rc 0 "populate again through the jobs table: nothing to do" djc --schema "$C" populate Echo --reserve-jobs
	expect_out "still 4" 4 server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__echo$q"
	printf '#!/bin/sh\necho "{\\"seen\\": \\"$DJC_KEY_t\\", \\"seen3\\": \\"2024-02-02 02:02:02.2501\\"}"\n' > mk_echo4.sh
	chmod +x mk_echo4.sh
	server_sql "DELETE FROM $q$W$q.${q}__echo$q"
	expect_rc 1 "more digits than the column keeps fail the key" djc --schema "$C" populate Echo --make ./mk_echo4.sh
	check "... naming the attribute" grep -q "'seen3'.*more fractional digits" <<< "$OUT$ERR"
}
tcase fractional_times

# older_echo W C MAKE: a DataJoint schema W (tick, __echo with a datetime
# column seen of microseconds) adopted into C with Echo's make = ./MAKE,
# its stored definition then edited to what an older djc wrote (seen a
# whole-seconds datetime); sets q
older_echo() {
	local W=$1 C=$2 ty=timestamp m=datetime
	q='"'
	[ "$DJC_BACKEND" = mysql ] && q='`' ty='datetime(6)' m='datetime(6)'
	local cm="COMMENT ':$m:'"
	[ "$DJC_BACKEND" = postgresql ] && cm=
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}tick$q (t INT NOT NULL, PRIMARY KEY (t))" \
		"CREATE TABLE $q@W@$q.${q}__echo$q (t INT NOT NULL, seen $ty NOT NULL $cm, PRIMARY KEY (t), FOREIGN KEY (t) REFERENCES $q@W@$q.${q}tick$q (t))" \
		"INSERT INTO $q@W@$q.${q}tick$q VALUES (1), (2)"
	[ "$DJC_BACKEND" = postgresql ] && server_sql "COMMENT ON COLUMN $q$W$q.${q}__echo$q.seen IS ':datetime:'"
	printf 'Echo\n    make = ./%s\n' "$3" > "ov_$3.djc"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W" --overlay "ov_$3.djc"
	server_sql "UPDATE $q$C$q.$q~djc_pipeline$q SET definition = REPLACE(definition, 'seen : datetime(6)', 'seen : datetime')"
}

# A schema adopted by an older djc keeps working: its stored definition may
# give a column at another precision than adopt gives it now (PostgreSQL's
# plain timestamp was a whole-seconds datetime, now datetime(6); its floats
# had no `as float8`), which is not a change DataJoint made to the table:
# populate does not refuse it as "not as adopted". (The stored text is
# edited here to what the older djc wrote.)
case_older_adoption() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aold" C="${DJC_DATABASE_SCHEMA}_aoldc" q
	printf '#!/bin/sh\necho "{\\"seen\\": \\"2024-01-01 10:00:01\\"}"\n' > mk_old.sh
	chmod +x mk_old.sh
	older_echo "$W" "$C" mk_old.sh
	expect_out "the stored definition is an older djc's" 1 \
		server_sql "SELECT COUNT(*) FROM $q$C$q.$q~djc_pipeline$q WHERE definition LIKE '%seen : datetime%' AND definition NOT LIKE '%seen : datetime(6)%'"
	expect_rc 0 "populate is not refused" djc --schema "$C" populate Echo --reserve-jobs
	check "2 made" grep -q "^Echo: 2 made, 0 errors" <<< "$OUT"
}
tcase older_adoption

# NaN and infinities in DataJoint's floats: PostgreSQL's double precision
# and real keep them (DataJoint 2.x stores NaN and inf there as given), so
# adopt writes `as float8` / `as float4` and djc stores them too (JSON
# carries them as "NaN", "Infinity", "-Infinity"); MariaDB's double keeps
# none: there such a value fails the key, naming the attribute.
case_nonfinite_floats() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_anf" C="${DJC_DATABASE_SCHEMA}_anfc" q='"' d='double precision' r=real
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double' r='float'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__val$q (k int NOT NULL, f $d NOT NULL, g $r NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2), (3)"
	cat > mk_val.sh <<'P'
#!/bin/sh
case $DJC_KEY_k in
1) echo '{"f": "NaN", "g": "NaN"}' ;;
2) echo '{"f": "Infinity", "g": "-Infinity"}' ;;
3) echo '{"f": 2.5, "g": null}' ;;
esac
P
	chmod +x mk_val.sh
	printf 'Val\n    make = ./mk_val.sh\n' > ovv.djc
	local as8=' as float8' as4=' as float4'
	[ "$DJC_BACKEND" = mysql ] && as8= as4=
	expect_rc 0 "adopt --dry-run of a table of floats" djc --schema "$C" adopt "$W" --overlay ovv.djc --dry-run
	check "PostgreSQL's double precision is float64 as float8, MariaDB's double float64" grep -q "^    f : float64$as8$" <<< "$OUT"
	check "real is float32 as float4, MariaDB's float float32" grep -q "^    g = null : float32$as4$" <<< "$OUT"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W" --overlay ovv.djc
	if [ "$DJC_BACKEND" = mysql ]; then
		expect_rc 1 "MariaDB keeps no NaN: the keys fail" djc --schema "$C" populate Val --suppress-errors
		check "... naming the attribute" grep -q "'f' (float64): NaN and infinities are not stored" <<< "$OUT$ERR"
		expect_out "only the finite row made" 1 server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__val$q"
		return 0
	fi
	expect_rc 0 "populate through djc's jobs table" djc --schema "$C" populate Val --reserve-jobs
	check "3 made" grep -q "^Val: 3 made, 0 errors" <<< "$OUT"
	expect_out "stored as PostgreSQL's NaN and infinities" "1 NaN NaN|2 Infinity -Infinity|3 2.5 " \
		sh -c "psql '${DJC_SERVER_URL:-$DJC_DATABASE_URL}' -XAt -F' ' -c 'SELECT k, f, g FROM \"$W\".\"__val\" ORDER BY k' | tr '\n' '|' | sed 's/|$//'"
	expect_out "fetch gives them as JSON text" '{"k":1,"f":"NaN","g":"NaN"} {"k":2,"f":"Infinity","g":"-Infinity"}' \
		sh -c "'$DJC' --schema '$C' fetch Val --format json | jq -c 'select(.k < 3)' | sort | tr '\n' ' ' | sed 's/ $//'"
	expect_out "a restriction by NaN matches it (PostgreSQL's NaN equals NaN)" 1 count_in "$C" Val '{"f": "NaN"}'
	expect_out "... by -Infinity too" 1 count_in "$C" Val '{"g": "-Infinity"}'
}
tcase nonfinite_floats

# Two DataJoint schemas, B's computed table depending on A's (a DataJoint
# pipeline spread over schemas): mk_two_schemas A B makes A.raw (3 rows),
# A.__filt (computed, filled), B.__feat (computed) and its part
# B.__feat__bit. Cross-schema: MariaDB and PostgreSQL only (SQLite has
# no DataJoint schemas).
mk_two_schemas() {
	local q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d=double
	mk_dj_schema "$1" "CREATE TABLE $q@W@$q.${q}raw$q (raw_id int NOT NULL, x $d NOT NULL, PRIMARY KEY (raw_id))" \
		"CREATE TABLE $q@W@$q.${q}__filt$q (raw_id int NOT NULL, y $d NOT NULL, PRIMARY KEY (raw_id), FOREIGN KEY (raw_id) REFERENCES $q@W@$q.${q}raw$q (raw_id))" \
		"INSERT INTO $q@W@$q.${q}raw$q VALUES (1, 1), (2, 2), (3, 3)" \
		"INSERT INTO $q@W@$q.${q}__filt$q VALUES (1, 2), (2, 4), (3, 6)"
	mk_dj_schema "$2" "CREATE TABLE $q@W@$q.${q}__feat$q (raw_id int NOT NULL, z $d NOT NULL, PRIMARY KEY (raw_id), FOREIGN KEY (raw_id) REFERENCES $q$1$q.${q}__filt$q (raw_id))" \
		"CREATE TABLE $q@W@$q.${q}__feat__bit$q (raw_id int NOT NULL, b smallint NOT NULL, w $d NOT NULL, PRIMARY KEY (raw_id, b), FOREIGN KEY (raw_id) REFERENCES $q@W@$q.${q}__feat$q (raw_id))"
}

# A part of a computed table of the second schema adopted (its master
# B.Feat, schema-qualified): a make's "_part": "Bit" (what
# python/djc_datajoint.py sends for DataJoint's own make's self.Bit.insert)
# finds B.Feat.Bit, per key and served; "Feat.Bit" and the whole name too
case_part_qualified() {
	[ -n "$FIX" ] || return 0
	local A="${DJC_DATABASE_SCHEMA}_apa" B="${DJC_DATABASE_SCHEMA}_apb" C="${DJC_DATABASE_SCHEMA}_apc"
	mk_two_schemas "$A" "$B"
	cat > mk_feat.sh <<'P'
#!/bin/sh
echo "{\"z\": $DJC_KEY_raw_id.5}"
echo "{\"_part\": \"Bit\", \"b\": 0, \"w\": 1.0}"
echo "{\"_part\": \"Feat.Bit\", \"b\": 1, \"w\": 2.0}"
echo "{\"_part\": \"$DJC_B.Feat.Bit\", \"b\": 2, \"w\": 3.0}"
P
	cat > mk_feat.py <<'P'
import djc_make

def make(key, fetch):
    y = fetch("Filt", key)[0]["y"]
    return [{"z": y + 1}] + [{"_part": "Bit", "b": i, "w": y * i} for i in range(2)]

djc_make.run(make)
P
	chmod +x mk_feat.sh
	printf '%s.Feat\n    make = ./mk_feat.sh\n' "$B" > ovp.djc
	expect_rc 0 "adopt both schemas, A first: B's tables are schema-qualified" \
		djc --schema "$C" adopt "$A" "$B" --overlay ovp.djc
	check "B's part is $B.Feat.Bit" grep -q "^created $B\.Feat\.Bit (part)" <<< "$OUT"
	expect_rc 0 "a per-key make's \"_part\": \"Bit\" (and Feat.Bit, $B.Feat.Bit) fills B's part" \
		env DJC_B="$B" "$DJC" --schema "$C" populate "$B.Feat" --where '{"raw_id": 1}'
	expect_out "its 3 part rows" 3 server_sql "SELECT COUNT(*) FROM $(qt "$B" __feat__bit)"
	printf '#!/bin/sh\necho "{\\"z\\": 1}"\necho "{\\"_part\\": \\"Nope\\", \\"b\\": 0, \\"w\\": 1}"\n' > mk_nope.sh
	chmod +x mk_nope.sh
	expect_fail 1 "a \"_part\" that names none is refused, naming the parts" "must name a part table of $B\.Feat \(\"Bit\"\); a part DataJoint declared since the adoption needs: djc adopt $B --accept-changes\$" \
		djc --schema "$C" populate "$B.Feat" --where '{"raw_id": 2}' --make ./mk_nope.sh
	expect_rc 0 "a served python make's \"_part\": \"Bit\" too" \
		djc --schema "$C" populate "$B.Feat" --reserve-jobs --make-serve python3 mk_feat.py
	expect_out "every key made" 3 server_sql "SELECT COUNT(*) FROM $(qt "$B" __feat)"
	expect_out "with 2 part rows each" 7 server_sql "SELECT COUNT(*) FROM $(qt "$B" __feat__bit)"
}
tcase part_qualified

# Two schemas, each with a computed table Stats (B's depending on A's):
# every adopted computed table's jobs table is in the one companion; the
# first named schema's keeps DataJoint's name ~~stats, the other's gets
# ~~schema__stats (docs/adopt.md). Cross-schema: MariaDB and PostgreSQL
# only (SQLite has no DataJoint schemas).
case_same_class() {
	[ -n "$FIX" ] || return 0
	local A="${DJC_DATABASE_SCHEMA}_asa" B="${DJC_DATABASE_SCHEMA}_asb" C="${DJC_DATABASE_SCHEMA}_asc" q='"'
	[ "$DJC_BACKEND" = mysql ] && q='`'
	mk_dj_schema "$A" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__stats$q (k int NOT NULL, n int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2)"
	mk_dj_schema "$B" "CREATE TABLE $q@W@$q.${q}__stats$q (k int NOT NULL, m int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q$A$q.${q}__stats$q (k))"
	printf '#!/bin/sh\necho "{\\"n\\": $DJC_KEY_k}"\n' > mk_sa.sh
	printf '#!/bin/sh\necho "{\\"m\\": $((DJC_KEY_k * 10))}"\n' > mk_sb.sh
	chmod +x mk_sa.sh mk_sb.sh
	printf 'Stats\n    make = ./mk_sb.sh\n' > ovsb.djc
	expect_rc 0 "adopt B alone: its Stats and A's (a parent, $A.Stats)" djc --schema "$C" adopt "$B" --overlay ovsb.djc
	check "B's Stats keeps DataJoint's jobs name" grep -q "^created Stats jobs table ~~stats$" <<< "$OUT"
	check "A's gets one qualified by its schema" grep -q "^created $A\.Stats jobs table ~~${A}__stats$" <<< "$OUT"
	expect_rc 0 "adopt again: unchanged" djc --schema "$C" adopt "$B" --overlay ovsb.djc
	expect_rc 0 "populate A's Stats through its jobs table" djc --schema "$C" populate "$A.Stats" --reserve-jobs --make ./mk_sa.sh
	expect_rc 0 "then B's" djc --schema "$C" populate Stats --reserve-jobs
	expect_out "A's made" 2 count_in "$C" "$A.Stats"
	expect_out "B's made from them" 1 count_in "$C" Stats '{"m": 20}'
	printf '%s.Stats\n    make = ./mk_sb.sh\n' "$B" > ovsab.djc
	expect_rc 0 "adopt both, A first: A's keeps ~~stats" djc --schema "${C}2" adopt "$A" "$B" --overlay ovsab.djc --dry-run
	expect_rc 0 "... declared" djc --schema "${C}2" adopt "$A" "$B" --overlay ovsab.djc
	check "A's Stats keeps ~~stats" grep -q "^created Stats jobs table ~~stats$" <<< "$OUT"
	check "B's is qualified" grep -q "^created $B\.Stats jobs table ~~${B}__stats$" <<< "$OUT"
}
tcase same_class

# DataJoint's nullable references (-> [nullable] Subject.proj(mate=...),
# -> [nullable] Rig): adopted as `-> [nullable] ...` lines, plain nullable
# attributes with the parent's lineage (DataJoint's ~lineage gives them
# the parent's), so Visit joins and restricts by the parent as in DataJoint
case_nullable_ref() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_anr" C="${DJC_DATABASE_SCHEMA}_anrc" q='"'
	[ "$DJC_BACKEND" = mysql ] && q='`'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}subject$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}rig$q (r int NOT NULL, PRIMARY KEY (r))" \
		"CREATE TABLE $q@W@$q.${q}visit$q (v int NOT NULL, buddy int NOT NULL, mate int NULL, r int NULL, PRIMARY KEY (v), FOREIGN KEY (buddy) REFERENCES $q@W@$q.${q}subject$q (k), FOREIGN KEY (mate) REFERENCES $q@W@$q.${q}subject$q (k), FOREIGN KEY (r) REFERENCES $q@W@$q.${q}rig$q (r))" \
		"INSERT INTO $q@W@$q.${q}subject$q VALUES (1), (2), (3)" "INSERT INTO $q@W@$q.${q}rig$q VALUES (1), (2)" \
		"INSERT INTO $q@W@$q.${q}visit$q VALUES (1, 2, 3, 1), (2, 1, NULL, NULL)"
	expect_rc 0 "adopt --dry-run" djc --schema "$C" adopt "$W" --dry-run
	check "a nullable renamed reference is written as DataJoint writes it" grep -q "^    -> \[nullable\] Subject.proj(mate='k')$" <<< "$OUT"
	check "... and a nullable one not renamed" grep -q "^    -> \[nullable\] Rig$" <<< "$OUT"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W"
	expect_out "join on the nullable renamed reference's attribute" '{"v":1,"mate":3}' \
		djc --schema "$C" fetch 'Visit.proj(mate) * Subject.proj(mate=k)' --format jsonl
	expect_out "restriction by the nullable reference's parent" '{"v":1,"r":1}' \
		djc --schema "$C" fetch 'Visit.proj(r) & Rig' --format jsonl
	expect_out "the NULLs stay NULL" '{"v":2,"buddy":1,"mate":null,"r":null}' \
		djc --schema "$C" fetch 'Visit & "mate is null"' --format jsonl
	expect_fail 2 "namesakes from different parents are still refused" "on attribute 'mate': it comes from Subject.k in one and from Rig.r in the other" \
		djc --schema "$C" fetch 'Visit * Rig.proj(mate=r)'
	expect_out "adopt again: unchanged" "unchanged: the schema is already adopted" djc --schema "$C" adopt "$W"
}
tcase nullable_ref

# Schemas that reference each other adopted one at a time into one
# companion: the second adopt names the first's tables schema.Class (they
# were Class): refused, saying to adopt them in one call. Cross-schema:
# MariaDB and PostgreSQL only.
case_two_adopts() {
	[ -n "$FIX" ] || return 0
	local A="${DJC_DATABASE_SCHEMA}_ata" B="${DJC_DATABASE_SCHEMA}_atb" C="${DJC_DATABASE_SCHEMA}_atc"
	mk_two_schemas "$A" "$B"
	expect_rc 0 "adopt A" djc --schema "$C" adopt "$A"
	expect_fail 2 "then B: refused, saying what to do" \
		"table $A\.Raw is DataJoint's $A\.raw, adopted before as Raw .*adopt schemas that reference each other in one call, naming every schema" \
		djc --schema "$C" adopt "$B"
	expect_rc 0 "in one call they adopt" djc --schema "${C}2" adopt "$B" "$A"
}
tcase two_adopts

# Unadopting one schema of a companion that holds two: the other schema's
# tables stay (its computed table and its jobs too), and so does a parent
# schema's table the other still references, through a nullable reference
# alone. (unadopt took every adopted table nothing referenced, of any
# schema, and the nullable-only parent, leaving a stored pipeline that did
# not parse: every command of the companion failed.) MariaDB, PostgreSQL.
case_unadopt_other() {
	[ -n "$FIX" ] || return 0
	local U="${DJC_DATABASE_SCHEMA}_auu" M1="${DJC_DATABASE_SCHEMA}_au1" M2="${DJC_DATABASE_SCHEMA}_au2"
	local C="${DJC_DATABASE_SCHEMA}_auc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$U" "CREATE TABLE $q@W@$q.${q}subject$q (sid int NOT NULL, PRIMARY KEY (sid))" \
		"INSERT INTO $q@W@$q.${q}subject$q VALUES (1), (2)"
	mk_dj_schema "$M1" "CREATE TABLE $q@W@$q.${q}sess$q (sid int NOT NULL, s int NOT NULL, PRIMARY KEY (sid, s), FOREIGN KEY (sid) REFERENCES $q$U$q.${q}subject$q (sid))"
	mk_dj_schema "$M2" "CREATE TABLE $q@W@$q.${q}visit$q (v int NOT NULL, sid int NULL, PRIMARY KEY (v), FOREIGN KEY (sid) REFERENCES $q$U$q.${q}subject$q (sid))" \
		"CREATE TABLE $q@W@$q.${q}__obs$q (v int NOT NULL, x $d NOT NULL, PRIMARY KEY (v), FOREIGN KEY (v) REFERENCES $q@W@$q.${q}visit$q (v))" \
		"INSERT INTO $q@W@$q.${q}visit$q VALUES (1, 1), (2, NULL)"
	printf '#!/bin/sh\necho "{\\"x\\": 1}"\n' > mk_obs.sh
	chmod +x mk_obs.sh
	printf 'Obs\n    make = ./mk_obs.sh\n' > ovobs.djc
	expect_rc 0 "adopt the first schema" djc --schema "$C" adopt "$M1"
	expect_rc 0 "adopt the second into the same companion" djc --schema "$C" adopt "$M2" --overlay ovobs.djc
	expect_rc 0 "its computed table has jobs" djc --schema "$C" jobs refresh Obs
	expect_rc 0 "unadopt the first" djc --schema "$C" unadopt "$M1"
	check "... its own table goes" grep -q "^unadopted Sess$" <<< "$OUT"
	check "... nothing of the second schema" test "$(grep -c "Visit\|Obs" <<< "$OUT")" = 0
	expect_rc 0 "the companion still reads" djc --schema "$C" tables
	check "... with the second schema's tables" grep -q "Obs" <<< "$OUT"
	check "... and the parent it references (nullable)" grep -q "$U\.Subject" <<< "$OUT"
	expect_rc 0 "the second schema's computed table is made" djc --schema "$C" populate Obs --reserve-jobs
	check "2 made" grep -q "^Obs: 2 made, 0 errors" <<< "$OUT"
}
tcase unadopt_other

# --accept-changes where the changed table now depends on a table stored
# after it (a new table DataJoint declared, referenced through a nullable
# reference; or a table adopted later): the stored tables are read in
# order, so it is refused, naming the table, by the dry run too, and the
# companion is left as it was. (It stored a pipeline that did not parse:
# every command of the companion failed, unadopt included.)
case_accept_order() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aor" C="${DJC_DATABASE_SCHEMA}_aorc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}visit$q (vid int NOT NULL, n int NOT NULL, PRIMARY KEY (vid))" \
		"CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__b$q (k int NOT NULL, y $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))"
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W"
	local before
	before=$(server_sql "SELECT definition FROM $q$C$q.$q~djc_pipeline$q ORDER BY position")
	# DataJoint: a new table rig, and visit references it (nullable)
	server_sql_each "CREATE TABLE $q$W$q.${q}rig$q (rig int NOT NULL, PRIMARY KEY (rig))" \
		"ALTER TABLE $q$W$q.${q}visit$q ADD COLUMN rig int NULL" \
		"ALTER TABLE $q$W$q.${q}visit$q ADD FOREIGN KEY (rig) REFERENCES $q$W$q.${q}rig$q (rig)"
	local msg="^djc: adopt: table Visit now depends on Rig, which is adopted only now: its new definition cannot take the place of the stored one; djc unadopt $W, then djc adopt it again$"
	expect_fail 2 "--accept-changes refuses it" "$msg" djc --schema "$C" adopt "$W" --accept-changes
	expect_fail 2 "... the dry run too" "$msg" djc --schema "$C" adopt "$W" --accept-changes --dry-run
	expect_rc 0 "the companion still reads" djc --schema "$C" tables
	expect_out "... its stored definitions as they were" "$before" \
		server_sql "SELECT definition FROM $q$C$q.$q~djc_pipeline$q ORDER BY position"
	# two tables stored one after the other: DataJoint redeclares the one
	# stored first to reference the other
	local W2="${DJC_DATABASE_SCHEMA}_aos" C2="${DJC_DATABASE_SCHEMA}_aosc"
	mk_dj_schema "$W2" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__b$q (k int NOT NULL, y $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))"
	expect_rc 0 "adopt two computed tables" djc --schema "$C2" adopt "$W2"
	local first=__feat later=__b later_cls=B first_cls=Feat
	grep -q "B (computed)" <<< "$(grep -A100 "Feat (computed)" <<< "$OUT")" || { first=__b later=__feat later_cls=Feat first_cls=B; }
	server_sql_each "DROP TABLE $q$W2$q.$q$first$q" \
		"CREATE TABLE $q$W2$q.$q$first$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q$W2$q.$q$later$q (k))"
	expect_fail 2 "a table stored after it: refused" \
		"^djc: adopt: table $first_cls now depends on $later_cls, which is stored after it: .*djc unadopt $W2, then djc adopt it again$" \
		djc --schema "$C2" adopt "$W2" --accept-changes
	expect_rc 0 "the companion still reads" djc --schema "$C2" tables
	expect_rc 0 "and unadopts" djc --schema "$C2" unadopt "$W2"
}
tcase accept_order

# A computed table's string defaults as the server stores them: a quote
# and an apostrophe, a backslash (MariaDB's catalog escapes it: \\), a
# trailing backslash, a number-like ' 5': adopt writes each exactly (\"
# and \\ in djc's syntax), and djc's rows take the server's values, as a
# row the server filled itself has them (a make that leaves them out, as
# DataJoint's make() that inserts only some attributes). A default no djc
# line can hold (a line break) is refused, naming the table and column.
case_string_defaults() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_asd" C="${DJC_DATABASE_SCHEMA}_asdc" q='"' bs='\' nl="E'a\\nb'"
	[ "$DJC_BACKEND" = mysql ] && q='`' bs='\\' nl="'a\\nb'"
	local cols="note varchar(64) NOT NULL DEFAULT 'it''s \"q\"', bs varchar(64) NOT NULL DEFAULT 'back${bs}slash', sp varchar(8) NOT NULL DEFAULT ' 5', tl varchar(8) NOT NULL DEFAULT 'end${bs}'"
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}session$q (s int NOT NULL, PRIMARY KEY (s))" \
		"CREATE TABLE $q@W@$q.${q}__select$q (s int NOT NULL, n int NOT NULL, $cols, PRIMARY KEY (s), FOREIGN KEY (s) REFERENCES $q@W@$q.${q}session$q (s))" \
		"INSERT INTO $q@W@$q.${q}session$q VALUES (1), (2), (3), (4)" \
		"INSERT INTO $q@W@$q.${q}__select$q (s, n) VALUES (4, 0)"
	printf '#!/bin/sh\necho "{\\"n\\": 1}"\n' > mk_sel.sh
	chmod +x mk_sel.sh
	printf 'Select\n    make = ./mk_sel.sh\n' > ovsd.djc
	expect_rc 0 "adopt --dry-run of string defaults" djc --schema "$C" adopt "$W" --overlay ovsd.djc --dry-run
	check "quotes escaped, none dropped" grep -Fq '    note = "it'"'"'s \"q\"" : varchar(64)' <<< "$OUT"
	check "one backslash, written \\\\" grep -Fq '    bs = "back\\slash" : varchar(64)' <<< "$OUT"
	check "a trailing backslash" grep -Fq '    tl = "end\\" : varchar(8)' <<< "$OUT"
	check "a number-like string stays a string" grep -Fq '    sp = " 5" : varchar(8)' <<< "$OUT"
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W" --overlay ovsd.djc
	expect_rc 0 "populate: the make gives n alone" djc --schema "$C" populate Select --reserve-jobs
	check "3 made" grep -q "^Select: 3 made, 0 errors" <<< "$OUT"
	expect_out "djc's rows hold the server's own defaults, byte for byte" 4 \
		server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__select$q r JOIN $q$W$q.${q}__select$q d ON d.s = 4 WHERE md5(concat(r.note, '|', r.bs, '|', r.sp, '|', r.tl)) = md5(concat(d.note, '|', d.bs, '|', d.sp, '|', d.tl))"
	expect_out "... the number-like one with its space" 4 \
		server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__select$q WHERE sp = ' 5' AND length(sp) = 2 AND length(bs) = 10"
	expect_out "fetch reads them back as stored" '"it'"'"'s \"q\"" "back\\slash" " 5" "end\\"' \
		sh -c "'$DJC' --schema '$C' fetch Select --format json | jq -c 'select(.s == 1) | [.note, .bs, .sp, .tl]' | jq -r '.[] | tojson' | tr '\n' ' ' | sed 's/ \$//'"
	server_sql "CREATE TABLE $q$W$q.${q}__lines$q (s int NOT NULL, t varchar(8) NOT NULL DEFAULT $nl, PRIMARY KEY (s), FOREIGN KEY (s) REFERENCES $q$W$q.${q}session$q (s))"
	expect_fail 2 "a default holding a line break is refused, naming the table and column" \
		"^djc: adopt: table $W\.__lines: column t: its default cannot be adopted: it holds a line break, which a djc definition line cannot hold$" \
		djc --schema "${C}x" adopt "$W" --dry-run
}
tcase string_defaults

# Adopting again without --overlay (to take a table DataJoint added) keeps
# the makes the earlier overlay gave, and says so: it removed them all,
# silently, and every djc worker stopped serving the schema
case_readopt_keeps_makes() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_ark" C="${DJC_DATABASE_SCHEMA}_arkc" q='"'
	[ "$DJC_BACKEND" = mysql ] && q='`'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}session$q (s int NOT NULL, PRIMARY KEY (s))" \
		"CREATE TABLE $q@W@$q.${q}__first$q (s int NOT NULL, n int NOT NULL, PRIMARY KEY (s), FOREIGN KEY (s) REFERENCES $q@W@$q.${q}session$q (s))" \
		"INSERT INTO $q@W@$q.${q}session$q VALUES (1), (2), (3)"
	printf '#!/bin/sh\necho "{\\"n\\": 1}"\n' > mk_first.sh
	chmod +x mk_first.sh
	printf 'First\n    make = ./mk_first.sh\n    timeout = 1h\n    key_source = {"s": [1, 2]}\n' > ovk.djc
	expect_rc 0 "adopt with an overlay" djc --schema "$C" adopt "$W" --overlay ovk.djc
	expect_out "adopt again without --overlay: unchanged, the makes kept and said" \
		"unchanged: the schema is already adopted
kept the makes the stored overlay gave First (no --overlay given; --overlay FILE replaces them)" \
		djc --schema "$C" adopt "$W"
	server_sql "CREATE TABLE $q$W$q.${q}__second$q (s int NOT NULL, m int NOT NULL, PRIMARY KEY (s), FOREIGN KEY (s) REFERENCES $q$W$q.${q}session$q (s))"
	expect_rc 0 "adopt again without --overlay to take a table DataJoint added" djc --schema "$C" adopt "$W"
	check "the new table declared" grep -q "^created Second (computed) as __second$" <<< "$OUT"
	check "the makes kept, and said" grep -qx "kept the makes the stored overlay gave First (no --overlay given; --overlay FILE replaces them)" <<< "$OUT"
	expect_rc 0 "a worker given no table" djc --schema "$C" worker --until-empty --json
	check "still serves First (its make kept), not Second" test "$(printf '%s' "$OUT" | jq -c .tables)" = '["First"]'
	expect_out "its key_source kept too: 2 made" 2 server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__first$q"
	expect_out "the dry run shows them" "    make = ./mk_first.sh|    timeout = 1h|    key_source = {\"s\": [1, 2]}" \
		sh -c "'$DJC' --schema '$C' adopt '$W' --dry-run | grep -E '^    (make|timeout|key_source) =' | tr '\n' '|' | sed 's/|\$//'"
}
tcase readopt_keeps_makes

# What adopting refuses, a dry run refuses: a column djc cannot name
# (DataJoint never declares one, a hand-made table may); the message names
# the DataJoint table and the column, not a line of the generated text;
# the companion that adopt created is gone again
case_refused_whole() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_abd" C="${DJC_DATABASE_SCHEMA}_abdc"
	case $DJC_BACKEND in
	mysql) mk_dj_schema "$W" "CREATE TABLE \`@W@\`.\`session\` (s int NOT NULL, Bad int NOT NULL, PRIMARY KEY (s))" ;;
	postgresql) mk_dj_schema "$W" "CREATE TABLE \"@W@\".\"session\" (s int NOT NULL, \"Bad\" int NOT NULL, PRIMARY KEY (s))" ;;
	esac
	local msg="^djc: adopt: table $W\.session \(Session\), column Bad: invalid attribute name 'Bad'"
	expect_fail 2 "a dry run refuses what adopt refuses, naming the table and the column" "$msg" \
		djc --schema "$C" adopt "$W" --dry-run
	check "the dry run left no companion" eval '! schema_there "$C"'
	expect_fail 2 "adopt refuses it, naming the table and the column" "$msg" djc --schema "$C" adopt "$W"
	check "the failed adopt left no companion" eval '! schema_there "$C"'
	expect_rc 0 "a successful dry run leaves no companion either" djc --schema "$C" adopt "$UP" --dry-run
	check "no companion after the dry run" eval '! schema_there "$C"'
	expect_rc 0 "adopting into an existing companion" djc --schema "$C" adopt "$UP"
	expect_fail 2 "then failing" "$msg" djc --schema "$C" adopt "$W"
	check "leaves the companion it did not create, with its tables" eval 'schema_there "$C" && [ "$("$DJC" --schema "$C" tables)" ]'
}
tcase refused_whole

# DataJoint drops an adopted table, or drops it and declares it again with
# another heading: djc's stored definition no longer says what the table
# is. populate and a worker naming it refuse it (one line naming the table
# and what differs, and the fix); a worker serving every table leaves it
# out, said on stderr, and serves the others; adopt again refuses it
# instead of finding it unchanged. Adopted again, it is populated.
case_stale() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_ast" C="${DJC_DATABASE_SCHEMA}_astc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_three_computed "$W"
	printf '#!/bin/sh\necho "{\\"$1\\": 1.5}"\n' > mk_st.sh
	printf '#!/bin/sh\necho "{\\"x\\": \\"a\\", \\"w2\\": 2}"\n' > mk_st2.sh
	chmod +x mk_st.sh mk_st2.sh
	printf 'Feat\n    make = ./mk_st.sh x\nGone\n    make = ./mk_st.sh y\nOk\n    make = ./mk_st.sh z\n' > ovs.djc
	expect_rc 0 "adopt three computed tables" djc --schema "$C" adopt "$W" --overlay ovs.djc
	# DataJoint drops Gone, and drops Feat and declares it with another heading
	server_sql_each "DROP TABLE $q$W$q.${q}__gone$q" \
		"DROP TABLE $q$W$q.${q}__feat$q" \
		"CREATE TABLE $q$W$q.${q}__feat$q (k int NOT NULL, x varchar(16) NOT NULL, w2 $d NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q$W$q.${q}src$q (k))"
	local fix="; adopt it again: djc adopt $W --accept-changes \(keeps its jobs while its key is the same\)$"
	local forget="; forget it: djc adopt $W --accept-changes \(drops its jobs\)$"
	expect_fail 2 "populate of the redeclared table is refused, naming what differs" \
		"^djc: table Feat is not as adopted: DataJoint table $W\.__feat changed since it was adopted: column 'w2' added, column 'x' float64.* -> varchar\(16\).*$fix" \
		djc --schema "$C" populate Feat
	expect_fail 2 "... with --reserve-jobs too" "^djc: table Feat is not as adopted: " djc --schema "$C" populate Feat --reserve-jobs
	expect_fail 2 "populate of the dropped table is refused" \
		"^djc: table Gone is not as adopted: DataJoint table $W\.__gone is missing \(dropped since it was adopted\)$forget" \
		djc --schema "$C" populate Gone
	expect_out "nothing written into the redeclared table" 0 server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__feat$q"
	expect_fail 2 "a worker naming it refuses it" "^djc: table Feat is not as adopted: " djc --schema "$C" worker Feat --until-empty
	expect_rc 0 "a worker of every table serves the others" djc --schema "$C" worker --until-empty --json
	check "... Ok alone" test "$(printf '%s' "$OUT" | jq -c .tables)" = '["Ok"]'
	check "... its keys made" test "$(printf '%s' "$OUT" | jq -c .success_count)" = 3
	check "... the tables left out said on stderr" \
		grep -q "^djc: warning: worker leaves out table Feat, which is not as adopted: DataJoint table $W\.__feat changed" <<< "$ERR"
	check "... both" grep -q "^djc: warning: worker leaves out table Gone, which is not as adopted: DataJoint table $W\.__gone is missing" <<< "$ERR"
	expect_fail 2 "adopt again refuses, not unchanged" "^djc: adopt: table Feat is not as adopted: DataJoint table $W\.__feat changed" \
		djc --schema "$C" adopt "$W" --overlay ovs.djc
	expect_rc 0 "unadopt" djc --schema "$C" unadopt "$W"
	printf 'Feat\n    make = ./mk_st2.sh\nOk\n    make = ./mk_st.sh z\n' > ovs2.djc
	expect_rc 0 "adopt again" djc --schema "$C" adopt "$W" --overlay ovs2.djc
	expect_rc 0 "populate the redeclared table" djc --schema "$C" populate Feat
	expect_out "its rows with the new heading" 3 server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__feat$q WHERE x = 'a' AND w2 = 2"
}
tcase stale

# Keys the lab marked ignore in DataJoint 2.x's own jobs tables (`~~feat`
# of __feat, `~~rec` of the imported _rec: the name without its leading
# `_`s; keyed by the parents' attributes, a status enum) are ignore jobs
# of djc's after adopt: djc's workers do not make them, the others are
# made. DataJoint's `error` marks are not carried (djc makes those keys).
# Adopting again carries marks DataJoint added for keys djc has no job
# of; a job djc has (an error) stays as it is. A `~~` table not keyed as
# DataJoint's jobs table would be is refused, nothing stored.
keys_of() { server_sql "SELECT k FROM $(qt "$1" "$2") ORDER BY k" | tr '\n' ' ' | sed 's/ $//'; }
case_dj_ignored() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aig" C="${DJC_DATABASE_SCHEMA}_aigc" q='"' d='double precision'
	# DataJoint's status: a MySQL enum, a PostgreSQL enum type (datajoint/jobs.py)
	local labels="'pending', 'reserved', 'success', 'error', 'ignore'" jst='"@W@"."enum_jobst"'
	local st=("CREATE TYPE $jst AS ENUM ($labels)")
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double' st=() jst="enum($labels)"
	mk_dj_schema "$W" "${st[@]}" \
		"CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}_rec$q (k int NOT NULL, y $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}~~feat$q (k int NOT NULL, status $jst NOT NULL, priority smallint NOT NULL DEFAULT 5, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}~~rec$q (k int NOT NULL, status $jst NOT NULL, PRIMARY KEY (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2), (3), (4), (5), (6)" \
		"INSERT INTO $q@W@$q.${q}~~feat$q (k, status) VALUES (2, 'ignore'), (3, 'error'), (4, 'ignore'), (5, 'pending')" \
		"INSERT INTO $q@W@$q.${q}~~rec$q (k, status) VALUES (1, 'ignore')"
	# a make that fails for key 6: djc's own error
	printf '#!/bin/sh\n[ "$DJC_KEY_k$1" = 6x ] && { echo broken >&2; exit 1; }\necho "{\\"$1\\": 1.5}"\n' > mk_ig.sh
	chmod +x mk_ig.sh
	printf 'Feat\n    make = ./mk_ig.sh x\nRec\n    make = ./mk_ig.sh y\n' > ovig.djc
	expect_rc 0 "adopt: the keys DataJoint ignores are carried" djc --schema "$C" adopt "$W" --overlay ovig.djc
	check "... said, per table" grep -qx "ignored 2 keys of Feat that DataJoint's $W\.~~feat marks ignore" <<< "$OUT"
	check "... the imported table's too (~~rec)" grep -qx "ignored 1 key of Rec that DataJoint's $W\.~~rec marks ignore" <<< "$OUT"
	local ign="'$DJC' --schema '$C' jobs Feat --status ignore --json | jq -c '[.jobs[].k]'"
	expect_out "djc jobs shows them ignore" "[2,4]" sh -c "$ign"
	expect_out "... saying where the mark came from" "ignored in DataJoint ($W.~~feat), carried by djc adopt" \
		sh -c "'$DJC' --schema '$C' jobs Feat --status ignore --json | jq -r '.jobs[0].error_message'"
	expect_out "DataJoint's error and pending marks are not carried" 0 \
		sh -c "'$DJC' --schema '$C' jobs Feat --all --json | jq '[.jobs[] | select(.status != \"ignore\")] | length'"
	expect_rc 1 "populate through djc's jobs table (key 6 fails)" \
		djc --schema "$C" populate Feat --reserve-jobs --suppress-errors
	check "the other keys made: 3, key 6 an error" grep -q "^Feat: 3 made, 1 error" <<< "$OUT"
	expect_out "the ignored keys are not in DataJoint's table, the others are" "1 3 5" keys_of "$W" __feat
	expect_rc 0 "a worker does not make the ignored key of Rec" djc --schema "$C" worker Rec --until-empty
	expect_out "... Rec's other keys made" "2 3 4 5 6" keys_of "$W" _rec
	expect_out "adopt again, nothing new: unchanged" "unchanged: the schema is already adopted" \
		djc --schema "$C" adopt "$W" --overlay ovig.djc
	expect_out "... no key ignored twice" "[2,4]" sh -c "$ign"
	# the lab marks key 6 (djc's error) ignore in DataJoint, and key 7, new
	server_sql_each "UPDATE $q$W$q.${q}~~feat$q SET status = 'ignore' WHERE k = 6" \
		"INSERT INTO $q$W$q.${q}src$q VALUES (7)" \
		"INSERT INTO $q$W$q.${q}~~feat$q (k, status) VALUES (7, 'ignore')"
	expect_rc 0 "adopt again: the mark of a key djc has no job of is carried" djc --schema "$C" adopt "$W" --overlay ovig.djc
	check "... said" grep -qx "ignored 1 key of Feat that DataJoint's $W\.~~feat marks ignore" <<< "$OUT"
	expect_out "... key 7 ignore" "[2,4,7]" sh -c "$ign"
	expect_out "djc's own error of key 6 stays an error" "[6]" \
		sh -c "'$DJC' --schema '$C' jobs Feat --status error --json | jq -c '[.jobs[].k]'"
	expect_rc 0 "populate again" djc --schema "$C" populate Feat --reserve-jobs
	check "... makes nothing: key 7 ignored, key 6 djc's error" grep -q "^Feat: 0 made, 0 errors" <<< "$OUT"
	expect_out "... DataJoint's table as it was" "1 3 5" keys_of "$W" __feat
	# a ~~ table not keyed as DataJoint's jobs table is: refused, whole
	local W2="${DJC_DATABASE_SCHEMA}_aig2" C2="${DJC_DATABASE_SCHEMA}_aig2c"
	mk_dj_schema "$W2" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}~~feat$q (k int NOT NULL, j int NOT NULL, status varchar(8) NOT NULL, PRIMARY KEY (k, j))"
	local bad="^djc: adopt: table Feat: DataJoint's jobs table $W2\.~~feat is not the jobs table DataJoint 2\.x makes for $W2\.__feat \(its primary key is \(k, j\), Feat's jobs are keyed by \(k\)\): the keys it marks ignore cannot be told; drop it with DataJoint \(Feat\.jobs\.drop\(\), after noting its ignored keys\) and adopt again$"
	expect_fail 2 "a ~~ table of another key is refused, naming it" "$bad" djc --schema "$C2" adopt "$W2" --dry-run
	expect_fail 2 "... by adopt too" "$bad" djc --schema "$C2" adopt "$W2"
	check "... which stored nothing, not even the companion" eval '! schema_there "$C2"'
}
tcase dj_ignored

# djc progress of every table reports the others and leaves out, with one
# line on stderr, an adopted table DataJoint dropped or redeclared, as a
# worker of every table does (exit 0); naming such a table is refused, as
# populate refuses it. (It stopped at the dropped table with the server's
# message, exit 1.)
case_stale_progress() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_asp" C="${DJC_DATABASE_SCHEMA}_aspc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_three_computed "$W" "INSERT INTO $q@W@$q.${q}__ok$q VALUES (1, 0.5)"
	printf 'Feat\n    make = ./x\nGone\n    make = ./x\nOk\n    make = ./x\n' > ovp.djc
	expect_rc 0 "adopt three computed tables" djc --schema "$C" adopt "$W" --overlay ovp.djc
	server_sql_each "DROP TABLE $q$W$q.${q}__gone$q" \
		"DROP TABLE $q$W$q.${q}__feat$q" \
		"CREATE TABLE $q$W$q.${q}__feat$q (k int NOT NULL, x varchar(16) NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q$W$q.${q}src$q (k))"
	local fix="; forget it: djc adopt $W --accept-changes \(drops its jobs\)$"
	expect_rc 0 "progress of every table reports the others" djc --schema "$C" progress
	check "... Ok's line" grep -q "^Ok .* 1/3 " <<< "$OUT"
	check "... no line of the others" test "$(grep -c -e '^Feat' -e '^Gone' <<< "$OUT")" = 0
	check "... the dropped table told on stderr, once" test "$(grep -cE "^djc: warning: progress leaves out table Gone, which is not as adopted: DataJoint table $W\.__gone is missing \(dropped since it was adopted\)$fix" <<< "$ERR")" = 1
	check "... the redeclared one" \
		grep -q "^djc: warning: progress leaves out table Feat, which is not as adopted: DataJoint table $W\.__feat changed since it was adopted: column 'x' float64.* -> varchar(16)" <<< "$ERR"
	check "... nothing but the two warnings" test "$(wc -l <<< "$ERR")" = 2
	expect_rc 0 "progress --json too" djc --schema "$C" progress --json
	check "... Ok alone" test "$(printf '%s' "$OUT" | jq -c '[.tables[].table]')" = '["Ok"]'
	expect_fail 2 "progress naming the dropped table is refused, as populate refuses it" \
		"^djc: table Gone is not as adopted: DataJoint table $W\.__gone is missing \(dropped since it was adopted\)$fix" \
		djc --schema "$C" progress Gone
	expect_fail 2 "... the redeclared one too" "^djc: table Feat is not as adopted: DataJoint table $W\.__feat changed" \
		djc --schema "$C" progress Feat
	expect_out "progress naming a table as adopted" "Ok: Completed 1 of 3 (33.3%), 2 remaining" djc --schema "$C" progress Ok
}
tcase stale_progress

# DataJoint drops a table an adopted computed table reads (its parent,
# the foreign key dropped with it): populate, worker, progress and jobs
# refresh of the computed table say so in one line naming both tables and
# the fix, as for the computed table itself (they failed with the server's
# "doesn't exist"); a worker and progress of every table serve and report
# the others.
case_parent_dropped() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_apd" C="${DJC_DATABASE_SCHEMA}_apdc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}base$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__ok$q (k int NOT NULL, z $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}base$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2), (3)" "INSERT INTO $q@W@$q.${q}base$q VALUES (1), (2)"
	printf '#!/bin/sh\necho "{\\"$1\\": 1.5}"\n' > mk_pd.sh
	chmod +x mk_pd.sh
	printf 'Feat\n    make = ./mk_pd.sh x\nOk\n    make = ./mk_pd.sh z\n' > ovd.djc
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W" --overlay ovd.djc
	# the parent goes, the foreign key that held it with it
	case $DJC_BACKEND in
	mysql) server_sql "SET foreign_key_checks = 0; DROP TABLE \`$W\`.\`src\`" ;;
	postgresql) server_sql "SET client_min_messages = warning; DROP TABLE \"$W\".\"src\" CASCADE" ;;
	esac
	local fix="; adopt it again: djc adopt $W --accept-changes \(keeps its jobs while its key is the same\)$"
	local line="^djc: table Feat is not as adopted: its upstream table Src: DataJoint table $W\.src is missing \(dropped since it was adopted\)$fix"
	expect_fail 2 "populate names the dropped parent" "$line" djc --schema "$C" populate Feat
	check "... in one line" test "$(wc -l <<< "$ERR")" = 1
	expect_fail 2 "... with --reserve-jobs too" "$line" djc --schema "$C" populate Feat --reserve-jobs
	expect_fail 2 "a worker naming it" "$line" djc --schema "$C" worker Feat --until-empty
	expect_fail 2 "progress naming it" "$line" djc --schema "$C" progress Feat
	expect_fail 2 "jobs refresh of it" "$line" djc --schema "$C" jobs refresh Feat
	expect_rc 0 "a worker of every table serves the others" djc --schema "$C" worker --until-empty --json
	check "... Ok alone" test "$(printf '%s' "$OUT" | jq -c .tables)" = '["Ok"]'
	check "... its keys made" test "$(printf '%s' "$OUT" | jq -c .success_count)" = 2
	check "... Feat left out, said" \
		grep -q "^djc: warning: worker leaves out table Feat, which is not as adopted: its upstream table Src: DataJoint table $W\.src is missing" <<< "$ERR"
	expect_rc 0 "progress of every table reports the others" djc --schema "$C" progress
	check "... Ok complete" grep -q "^Ok .* 2/2 " <<< "$OUT"
	check "... Feat left out, said" grep -q "^djc: warning: progress leaves out table Feat, which is not as adopted: its upstream table Src" <<< "$ERR"
}
tcase parent_dropped

# The dry run shows exactly the definitions adopt stores, for tables with
# DataJoint's secondary indexes too (index, unique index): adopt reads no
# index (djc never writes DDL on DataJoint's tables, and the server keeps
# enforcing them), so neither holds an index line. (Reported as a dry run
# leaving out index lines the adoption stored: not so; this guards it.)
case_dry_run_is_stored() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_adx" C="${DJC_DATABASE_SCHEMA}_adxc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}session$q (k int NOT NULL, u int NOT NULL, v int NOT NULL, PRIMARY KEY (k))" \
		"CREATE INDEX ${q}su$q ON $q@W@$q.${q}session$q (u)" "CREATE UNIQUE INDEX ${q}svu$q ON $q@W@$q.${q}session$q (v, u)" \
		"CREATE TABLE $q@W@$q.${q}__stat$q (k int NOT NULL, s $d NOT NULL, r int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}session$q (k))" \
		"CREATE UNIQUE INDEX ${q}str$q ON $q@W@$q.${q}__stat$q (r)"
	printf 'Stat\n    make = ./x\n' > ovx.djc
	expect_rc 0 "adopt --dry-run" djc --schema "$C" adopt "$W" --overlay ovx.djc --dry-run
	local dry=$OUT
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W" --overlay ovx.djc
	local stored
	case $DJC_BACKEND in
	mysql) stored=$(mariadb_cli -N -B -r -e "SELECT definition FROM \`$C\`.\`~djc_pipeline\`") ;;
	postgresql) stored=$(server_sql "SELECT definition FROM \"$C\".\"~djc_pipeline\"") ;;
	esac
	check "the stored definitions are the dry run's, line for line" \
		test "$(grep -v '^ *$' <<< "$dry" | sort)" = "$(grep -v '^ *$' <<< "$stored" | sort)"
	check "... of both tables" test "$(grep -c ' (manual)$\| (computed)$' <<< "$stored")" = 2
	check "... no index line in either" test "$(grep -ci 'index' <<< "$dry$stored")" = 0
}
tcase dry_run_is_stored

# --accept-changes: DataJoint altered an adopted table (Table.alter() adds
# a secondary attribute, changes one's type). Adopt refuses it, naming the
# flag; with it, the table takes DataJoint's definition and keeps its jobs
# table with every row (an error, an ignore mark, the history): the
# remaining keys are made with the new heading. Other tables' jobs are
# untouched. (The fix was unadopt + adopt: every table's jobs lost.)
jobs_rows() { server_sql "SELECT COUNT(*) FROM $(qt "$1" "$2")${3:+ WHERE $3}"; }
case_accept_changes() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aac" C="${DJC_DATABASE_SCHEMA}_aacc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, note varchar(8) NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__other$q (k int NOT NULL, z $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2), (3)"
	# key 2 fails (an error job), key 1 is made
	printf '#!/bin/sh\n[ "$DJC_KEY_k" = 2 ] && { echo no >&2; exit 1; }\necho "{\\"x\\": 1.5, \\"note\\": \\"a\\"}"\n' > mk_ac.sh
	printf '#!/bin/sh\n[ "$DJC_KEY_k" = 1 ] && exit 3\necho "{\\"z\\": 1}"\n' > mk_ao.sh
	printf '#!/bin/sh\necho "{\\"x\\": 2.5, \\"note\\": \\"longer note\\", \\"w2\\": 2}"\n' > mk_ac2.sh
	chmod +x mk_ac.sh mk_ao.sh mk_ac2.sh
	printf 'Feat\n    make = ./mk_ac.sh\nOther\n    make = ./mk_ao.sh\n' > ovac.djc
	printf 'Feat\n    make = ./mk_ac2.sh\nOther\n    make = ./mk_ao.sh\n' > ovac2.djc
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W" --overlay ovac.djc
	expect_rc 0 "ignore key 3 of Feat" djc --schema "$C" jobs ignore Feat '{"k": 3}'
	expect_rc 1 "populate Feat: key 2 fails" djc --schema "$C" populate Feat --reserve-jobs --suppress-errors
	expect_rc 1 "populate Other: key 1 fails" djc --schema "$C" populate Other --reserve-jobs --suppress-errors
	local hist
	hist=$(jobs_rows "$C" "~~feat__history")
	check "Feat's history has rows ($hist)" test "$hist" -gt 0
	# DataJoint adds keys, and alters Feat: w2 added, note varchar(8) -> varchar(16)
	server_sql_each "INSERT INTO $q$W$q.${q}src$q VALUES (4), (5)" \
		"ALTER TABLE $q$W$q.${q}__feat$q ADD COLUMN w2 $d NULL"
	case $DJC_BACKEND in
	mysql) server_sql "ALTER TABLE \`$W\`.\`__feat\` MODIFY note varchar(16) NOT NULL" ;;
	postgresql) server_sql "ALTER TABLE \"$W\".\"__feat\" ALTER COLUMN note TYPE varchar(16)" ;;
	esac
	expect_fail 2 "populate refuses the altered table, naming the flag" \
		"^djc: table Feat is not as adopted: DataJoint table $W\.__feat changed since it was adopted: column 'w2' added.*; adopt it again: djc adopt $W --accept-changes \(keeps its jobs while its key is the same\)$" \
		djc --schema "$C" populate Feat --reserve-jobs
	expect_fail 2 "adopt without the flag refuses it" "^djc: adopt: table Feat is not as adopted: .*djc adopt $W --accept-changes" \
		djc --schema "$C" adopt "$W" --overlay ovac2.djc
	expect_out "... and changed nothing: the error job is there" 1 jobs_rows "$C" "~~feat" "status = 'error'"
	expect_rc 0 "adopt --accept-changes" djc --schema "$C" adopt "$W" --overlay ovac2.djc --accept-changes
	check "the table took DataJoint's definition, its jobs kept, said" \
		grep -Eq "^changed Feat \(computed\) as __feat: took DataJoint's definition \(column 'note' varchar\(8\).* -> varchar\(16\).*, column 'w2' added\); its jobs kept \(2 in ~~feat\)$" <<< "$OUT"
	check "Other unchanged" grep -q "^exists  Other (computed) as __other$" <<< "$OUT"
	expect_out "Feat's error job kept" 1 jobs_rows "$C" "~~feat" "status = 'error'"
	expect_out "Feat's ignore mark kept" 1 jobs_rows "$C" "~~feat" "status = 'ignore'"
	expect_out "Feat's history kept" "$hist" jobs_rows "$C" "~~feat__history"
	expect_out "Other's error job untouched" 1 jobs_rows "$C" "~~other" "status = 'error'"
	expect_rc 0 "adopt --accept-changes again: unchanged" djc --schema "$C" adopt "$W" --accept-changes
	check "... said so" grep -q "^unchanged: the schema is already adopted" <<< "$OUT"
	expect_rc 0 "populate Feat makes the remaining keys with the new heading" djc --schema "$C" populate Feat --reserve-jobs
	check "2 made" grep -q "^Feat: 2 made, 0 errors" <<< "$OUT"
	expect_out "... writing the new column" 2 server_sql "SELECT COUNT(*) FROM $q$W$q.${q}__feat$q WHERE w2 = 2 AND note = 'longer note'"
	expect_out "key 2 stays an error" 1 jobs_rows "$C" "~~feat" "status = 'error' AND k = 2"
	expect_out "key 3 stays ignored" 1 jobs_rows "$C" "~~feat" "status = 'ignore' AND k = 3"
}
tcase accept_changes

# --accept-changes when DataJoint redeclared a table with another key (here
# its parent's key int -> bigint, so both are redeclared): the jobs table
# cannot keep its rows: it is made anew, its jobs dropped, said per table
case_accept_key_changed() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_akc" C="${DJC_DATABASE_SCHEMA}_akcc" q='"'
	[ "$DJC_BACKEND" = mysql ] && q='`'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__kc$q (k int NOT NULL, v int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}same$q (s int NOT NULL, v int NOT NULL, PRIMARY KEY (s))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2)"
	printf '#!/bin/sh\n[ "$DJC_KEY_k" = 2 ] && exit 1\necho "{\\"v\\": 1}"\n' > mk_kc.sh
	printf '#!/bin/sh\necho "{\\"v\\": 1}"\n' > mk_kc2.sh
	chmod +x mk_kc.sh mk_kc2.sh
	printf 'Kc\n    make = ./mk_kc.sh\n' > ovkc.djc
	printf 'Kc\n    make = ./mk_kc2.sh\n' > ovkc2.djc
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W" --overlay ovkc.djc
	expect_rc 1 "populate: key 2 fails" djc --schema "$C" populate Kc --reserve-jobs --suppress-errors
	expect_out "an error job" 1 jobs_rows "$C" "~~kc" "status = 'error'"
	server_sql_each "DROP TABLE $q$W$q.${q}__kc$q" \
		"DROP TABLE $q$W$q.${q}src$q" \
		"CREATE TABLE $q$W$q.${q}src$q (k bigint NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q$W$q.${q}__kc$q (k bigint NOT NULL, v int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q$W$q.${q}src$q (k))" \
		"INSERT INTO $q$W$q.${q}src$q VALUES (1), (2), (3)"
	expect_fail 2 "adopt without the flag refuses it" "^djc: adopt: table (Src|Kc) is not as adopted: .*djc adopt $W --accept-changes" \
		djc --schema "$C" adopt "$W" --overlay ovkc2.djc
	expect_rc 0 "adopt --accept-changes" djc --schema "$C" adopt "$W" --overlay ovkc2.djc --accept-changes
	check "the parent took its new definition" grep -q "^changed Src (manual) as src: took DataJoint's definition (column 'k' int32 -> int64)$" <<< "$OUT"
	check "the table's jobs table made anew, its jobs dropped, said" \
		grep -q "^changed Kc (computed) as __kc: took DataJoint's definition (column 'k' int32 -> int64); its jobs table ~~kc made anew, its key (k int32) -> (k int64): 1 jobs dropped$" <<< "$OUT"
	expect_out "no job left" 0 jobs_rows "$C" "~~kc"
	expect_out "its key column is the new one" bigint \
		server_sql "SELECT data_type FROM information_schema.columns WHERE table_schema = '$C' AND table_name = '~~kc' AND column_name = 'k'"
	expect_rc 0 "populate makes every key" djc --schema "$C" populate Kc --reserve-jobs
	check "3 made" grep -q "^Kc: 3 made, 0 errors" <<< "$OUT"
}
tcase accept_key_changed

# --accept-changes when DataJoint dropped adopted tables (a computed table,
# its part, a table that depends on it): they are forgotten as unadopt
# forgets them, their jobs tables dropped, said; the others are kept
case_accept_dropped() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_adr" C="${DJC_DATABASE_SCHEMA}_adrc" q='"'
	[ "$DJC_BACKEND" = mysql ] && q='`'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__a$q (k int NOT NULL, v int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__a__item$q (k int NOT NULL, i int NOT NULL, PRIMARY KEY (k, i), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}__a$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__b$q (k int NOT NULL, w int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}__a$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__keep$q (k int NOT NULL, u int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2)"
	printf '#!/bin/sh\nexit 1\n' > mk_fail.sh
	chmod +x mk_fail.sh
	printf 'A\n    make = ./mk_fail.sh\nKeep\n    make = ./mk_fail.sh\n' > ovdr.djc
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W" --overlay ovdr.djc
	expect_rc 1 "populate A: errors" djc --schema "$C" populate A --reserve-jobs --suppress-errors
	expect_rc 1 "populate Keep: errors" djc --schema "$C" populate Keep --reserve-jobs --suppress-errors
	server_sql_each "DROP TABLE $q$W$q.${q}__b$q" \
		"DROP TABLE $q$W$q.${q}__a__item$q" \
		"DROP TABLE $q$W$q.${q}__a$q"
	expect_fail 2 "adopt without the flag refuses it, naming the flag" \
		"^djc: adopt: table A is not as adopted: .*DataJoint table $W\.__a is missing \(dropped since it was adopted\)(; its part A\.Item: .*)?; forget it: djc adopt $W --accept-changes \(drops its jobs\)$" \
		djc --schema "$C" adopt "$W"
	expect_rc 0 "adopt --accept-changes" djc --schema "$C" adopt "$W" --accept-changes
	check "A forgotten, its jobs dropped, said" \
		grep -q "^forgot A (computed) as __a: DataJoint dropped $W\.__a; its jobs table ~~a dropped (2 jobs)$" <<< "$OUT"
	check "its part too" grep -q "^forgot A.Item (part) as __a__item: DataJoint dropped $W\.__a__item$" <<< "$OUT"
	check "the table that depended on it too" grep -q "^forgot B (computed) as __b: DataJoint dropped $W\.__b; its jobs table ~~b dropped (0 jobs)$" <<< "$OUT"
	expect_out "djc's tables: the others" "Keep Src" sh -c "'$DJC' --schema '$C' tables | awk '{print \$1}' | sort | tr '\n' ' ' | sed 's/ \$//'"
	expect_out "their jobs tables are gone, Keep's stays" "~~keep ~~keep__history" sh -c "$(declare -f server_sql mariadb_cli companion_tables); DJC_DATABASE_SCHEMA='$C' companion_tables | tr '\n' ' ' | sed 's/ \$//'"
	expect_out "Keep's errors kept" 2 jobs_rows "$C" "~~keep" "status = 'error'"
	expect_rc 0 "adopt --accept-changes again: unchanged" djc --schema "$C" adopt "$W" --accept-changes
	check "... said so" grep -q "^unchanged: the schema is already adopted" <<< "$OUT"
}
tcase accept_dropped

# An adoption an older djc stored (a datetime where adopt now writes
# datetime(6), see older_adoption) is refused when adopted again, naming
# --accept-changes; with it, the new definition is taken, the jobs kept
case_accept_older() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aao" C="${DJC_DATABASE_SCHEMA}_aaoc" q
	printf '#!/bin/sh\n[ "$DJC_KEY_t" = 2 ] && exit 1\necho "{\\"seen\\": \\"2024-01-01 10:00:01\\"}"\n' > mk_ao2.sh
	chmod +x mk_ao2.sh
	older_echo "$W" "$C" mk_ao2.sh
	expect_rc 1 "populate: key 2 fails" djc --schema "$C" populate Echo --reserve-jobs --suppress-errors
	expect_fail 2 "adopt again is refused, naming the flag" \
		"Echo is adopted from DataJoint schema $W: djc does not change its definition \(its stored definition differs from this text; djc adopt $W --accept-changes takes the new one, keeping its jobs\)" \
		djc --schema "$C" adopt "$W"
	expect_rc 0 "adopt --accept-changes" djc --schema "$C" adopt "$W" --accept-changes
	check "the new definition taken, the jobs kept, said" \
		grep -q "^changed Echo (computed) as __echo: took DataJoint's definition (column 'seen' datetime -> datetime(6)); its jobs kept (1 in ~~echo)$" <<< "$OUT"
	expect_out "the error job kept" 1 jobs_rows "$C" "~~echo" "status = 'error' AND t = 2"
	expect_out "the stored definition is the new one" 1 \
		server_sql "SELECT COUNT(*) FROM $q$C$q.$q~djc_pipeline$q WHERE definition LIKE '%seen : datetime(6)%'"
	expect_rc 0 "adopt again: unchanged" djc --schema "$C" adopt "$W"
	check "... said so" grep -q "^unchanged: the schema is already adopted" <<< "$OUT"
}
tcase accept_older

# --accept-changes is all or nothing: here the change of Feat (its key now
# (k, j): its jobs table made anew) is made, then Late's new definition is
# refused (it references a table adopted only now, which its stored place
# in the pipeline cannot); everything is undone: Feat's stored definition
# and its jobs table with its rows are as they were (on MariaDB, whose DDL
# is not transactional, the jobs table is renamed back), no table added.
# (stored_defs: the stored definitions, line breaks left out: MariaDB's
# undo stores a table's text as parsed, which may end in one more)
stored_defs() { server_sql "SELECT name, position, definition FROM $(qt "$1" "~djc_pipeline") ORDER BY position" | tr -d '\n' | sed 's/\\n//g' | md5sum; }
case_accept_atomic() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_aat" C="${DJC_DATABASE_SCHEMA}_aatc" q='"'
	[ "$DJC_BACKEND" = mysql ] && q='`'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}par$q (j int NOT NULL, PRIMARY KEY (j))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__late$q (k int NOT NULL, y int NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2)" "INSERT INTO $q@W@$q.${q}par$q VALUES (7)"
	printf '#!/bin/sh\nexit 1\n' > mk_at.sh
	chmod +x mk_at.sh
	printf 'Feat\n    make = ./mk_at.sh\n' > ovat.djc
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W" --overlay ovat.djc
	expect_rc 1 "populate Feat: errors" djc --schema "$C" populate Feat --reserve-jobs --suppress-errors
	local before
	before=$(stored_defs "$C")
	server_sql_each "DROP TABLE $q$W$q.${q}__feat$q" \
		"CREATE TABLE $q$W$q.${q}__feat$q (k int NOT NULL, j int NOT NULL, x int NOT NULL, PRIMARY KEY (k, j), FOREIGN KEY (k) REFERENCES $q$W$q.${q}src$q (k), FOREIGN KEY (j) REFERENCES $q$W$q.${q}par$q (j))" \
		"CREATE TABLE $q$W$q.${q}zz$q (z int NOT NULL, PRIMARY KEY (z))" \
		"DROP TABLE $q$W$q.${q}__late$q" \
		"CREATE TABLE $q$W$q.${q}__late$q (k int NOT NULL, z int NOT NULL, y int NOT NULL, PRIMARY KEY (k, z), FOREIGN KEY (k) REFERENCES $q$W$q.${q}src$q (k), FOREIGN KEY (z) REFERENCES $q$W$q.${q}zz$q (z))"
	expect_fail 2 "adopt --accept-changes refuses Late, naming why" \
		"^djc: adopt: table Late now depends on Zz, which is adopted only now: its new definition cannot take the place of the stored one; djc unadopt $W, then djc adopt it again$" \
		djc --schema "$C" adopt "$W" --accept-changes
	check "the stored definitions are as they were" \
		test "$(stored_defs "$C")" = "$before"
	expect_out "Feat's jobs table is back with its rows" 2 jobs_rows "$C" "~~feat" "status = 'error'"
	expect_out "... its key the old one" "k" \
		server_sql "SELECT column_name FROM information_schema.columns WHERE table_schema = '$C' AND table_name = '~~feat' AND column_name IN ('k', 'j') ORDER BY column_name"
	expect_out "no table left behind" "~~feat ~~feat__history ~~late ~~late__history" \
		sh -c "$(declare -f server_sql mariadb_cli companion_tables); DJC_DATABASE_SCHEMA='$C' companion_tables | tr '\n' ' ' | sed 's/ \$//'"
	expect_fail 2 "Feat is still refused as not as adopted" "^djc: table Feat is not as adopted: " djc --schema "$C" populate Feat
}
tcase accept_atomic

# An older adoption whose datetime is a key (a PostgreSQL timestamp an
# older djc adopted as a whole-seconds datetime, its jobs table's key
# column too): --accept-changes widens the jobs and history tables' key
# columns in place (ALTER), keeping the jobs, instead of making them anew
key_precisions() {   # of column t of ~~echo and ~~echo__history in schema $1
	server_sql "SELECT datetime_precision FROM information_schema.columns WHERE table_schema = '$1' AND table_name IN ('~~echo', '~~echo__history') AND column_name = 't'" | tr '\n' ' ' | sed 's/ $//'
}
case_accept_widen_key() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_awk" C="${DJC_DATABASE_SCHEMA}_awkc" q='"' ty=timestamp m=datetime
	[ "$DJC_BACKEND" = mysql ] && q='`' ty='datetime(6)' m='datetime(6)'
	local cm="COMMENT ':$m:'"
	[ "$DJC_BACKEND" = postgresql ] && cm=
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}tick$q (t $ty NOT NULL $cm, PRIMARY KEY (t))" \
		"CREATE TABLE $q@W@$q.${q}__echo$q (t $ty NOT NULL, v int NOT NULL, PRIMARY KEY (t), FOREIGN KEY (t) REFERENCES $q@W@$q.${q}tick$q (t))" \
		"INSERT INTO $q@W@$q.${q}tick$q VALUES ('2024-01-01 10:00:00'), ('2024-01-01 10:00:01')"
	[ "$DJC_BACKEND" = postgresql ] && server_sql "COMMENT ON COLUMN $q$W$q.${q}tick$q.t IS ':datetime:'"
	printf '#!/bin/sh\nexit 1\n' > mk_wk.sh
	printf '#!/bin/sh\necho "{\\"v\\": 1}"\n' > mk_wk2.sh
	chmod +x mk_wk.sh mk_wk2.sh
	printf 'Echo\n    make = ./mk_wk.sh\n' > ovwk.djc
	printf 'Echo\n    make = ./mk_wk2.sh\n' > ovwk2.djc
	expect_rc 0 "adopt it" djc --schema "$C" adopt "$W" --overlay ovwk.djc
	# what an older djc stored and made: a whole-seconds key, in the jobs tables too
	server_sql "UPDATE $q$C$q.$q~djc_pipeline$q SET definition = REPLACE(definition, 't : datetime(6)', 't : datetime')"
	local h
	for h in "~~echo" "~~echo__history"; do
		case $DJC_BACKEND in
		mysql) server_sql "ALTER TABLE \`$C\`.\`$h\` MODIFY t datetime NOT NULL" ;;
		postgresql) server_sql "ALTER TABLE \"$C\".\"$h\" ALTER COLUMN t TYPE timestamp(0)" ;;
		esac
	done
	expect_rc 1 "populate: errors" djc --schema "$C" populate Echo --reserve-jobs --suppress-errors
	expect_out "2 error jobs" 2 jobs_rows "$C" "~~echo" "status = 'error'"
	expect_rc 0 "adopt --accept-changes" djc --schema "$C" adopt "$W" --overlay ovwk2.djc --accept-changes
	check "the key columns widened in place, the jobs kept, said" \
		grep -q "^changed Echo (computed) as __echo: took DataJoint's definition (column 't' datetime -> datetime(6)); its jobs kept (2 in ~~echo), its key columns widened to (t datetime(6))$" <<< "$OUT"
	expect_out "the error jobs kept" 2 jobs_rows "$C" "~~echo" "status = 'error'"
	expect_out "the jobs and history tables' key columns keep microseconds" "6 6" key_precisions "$C"
	expect_rc 0 "clear the errors" djc --schema "$C" jobs clear Echo --status error
	expect_rc 0 "populate through the widened jobs table" djc --schema "$C" populate Echo --reserve-jobs
	check "2 made" grep -q "^Echo: 2 made, 0 errors" <<< "$OUT"
}
tcase accept_widen_key


# djc fetch and the jobs commands of an adopted table DataJoint dropped
# (Gone), changed (Feat: its column x gone) or whose parent it dropped
# (Kid: par): one line naming the table, what differs and the fix, exit 2,
# as populate, progress and jobs refresh tell it (they gave the server's
# message, exit 1). Told only when a statement fails: Kid's own rows
# still read.
case_stale_commands() {
	[ -n "$FIX" ] || return 0
	local W="${DJC_DATABASE_SCHEMA}_asx" C="${DJC_DATABASE_SCHEMA}_asxc" q='"' d='double precision'
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$W" "CREATE TABLE $q@W@$q.${q}src$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}par$q (k int NOT NULL, grp int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__gone$q (k int NOT NULL, y $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}src$q (k))" \
		"CREATE TABLE $q@W@$q.${q}__kid$q (k int NOT NULL, z $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}par$q (k))" \
		"INSERT INTO $q@W@$q.${q}src$q VALUES (1), (2), (3)" "INSERT INTO $q@W@$q.${q}par$q VALUES (1, 1), (2, 1), (3, 2)"
	# key 3 fails: an error job
	printf '#!/bin/sh\n[ "$DJC_KEY_k" = 3 ] && { echo broken >&2; exit 1; }\necho "{\\"$1\\": 1.5}"\n' > mk_sc.sh
	chmod +x mk_sc.sh
	printf 'Feat\n    make = ./mk_sc.sh x\nGone\n    make = ./mk_sc.sh y\nKid\n    make = ./mk_sc.sh z\n' > ovc.djc
	expect_rc 0 "adopt" djc --schema "$C" adopt "$W" --overlay ovc.djc
	local t
	for t in Feat Gone Kid; do
		expect_rc 1 "populate $t: keys 1 and 2 made, key 3 an error" djc --schema "$C" populate "$t" --reserve-jobs --suppress-errors
	done
	# DataJoint drops Gone, declares Feat again without x, drops Kid's parent
	server_sql_each "DROP TABLE $q$W$q.${q}__gone$q" \
		"DROP TABLE $q$W$q.${q}__feat$q" \
		"CREATE TABLE $q$W$q.${q}__feat$q (k int NOT NULL, w $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q$W$q.${q}src$q (k))"
	case $DJC_BACKEND in
	mysql) server_sql "SET foreign_key_checks = 0; DROP TABLE \`$W\`.\`par\`" ;;
	postgresql) server_sql "SET client_min_messages = warning; DROP TABLE \"$W\".\"par\" CASCADE" ;;
	esac
	local again="; adopt it again: djc adopt $W --accept-changes \(keeps its jobs while its key is the same\)$"
	local gone="^djc: table Gone is not as adopted: DataJoint table $W\.__gone is missing \(dropped since it was adopted\); forget it: djc adopt $W --accept-changes \(drops its jobs\)$"
	local kid="^djc: table Kid is not as adopted: its upstream table Par: DataJoint table $W\.par is missing \(dropped since it was adopted\)$again"
	local feat="^djc: table Feat is not as adopted: DataJoint table $W\.__feat changed since it was adopted: column 'x' removed, column 'w' added$again"
	expect_fail 2 "fetch of the dropped table" "$gone" djc --schema "$C" fetch Gone
	expect_fail 2 "... as an expression too (jsonl)" "$gone" djc --schema "$C" fetch Gone --format jsonl
	expect_fail 2 "fetch of the redeclared table, its column gone" "$feat" djc --schema "$C" fetch Feat
	expect_fail 2 "jobs clear of the dropped table's errors" "$gone" djc --schema "$C" jobs clear Gone --status error
	expect_fail 2 "jobs ignore of the dropped table, every key" "$gone" djc --schema "$C" jobs ignore Gone --all
	expect_fail 2 "jobs of a table whose parent was dropped, restricted by the parent" "$kid" \
		djc --schema "$C" jobs Kid --where '{"grp": 1}'
	expect_fail 2 "... its listing" "$kid" djc --schema "$C" jobs Kid --status error --where '{"grp": 2}'
	expect_fail 2 "jobs clear of it, restricted by the parent" "$kid" djc --schema "$C" jobs clear Kid --where '{"grp": 2}'
	expect_fail 2 "jobs ignore of it, every key" "$kid" djc --schema "$C" jobs ignore Kid --all
	expect_out "told only when a statement fails: Kid's rows read" 2 \
		sh -c "'$DJC' --schema '$C' fetch Kid --format json | grep -c ."
	expect_out "... its jobs counted" "Kid jobs: pending 0, reserved 0, success 0, error 1, ignore 0, total 1" \
		djc --schema "$C" jobs Kid
}
tcase stale_commands

# djc unadopt while a djc worker serves the schema's tables: the worker
# finds the table gone from the stored pipeline when its step fails,
# leaves it out with one line on stderr (and "leave out Feat: unadopted"
# in DJC_WORKER_LOG), never commits the make it had in flight (counted
# lost, not an error), and serves the other tables; with no table left it
# stops cleanly, "empty", exit 0. With --processes 2 the line is told
# once. (The worker stopped with the server's message, "claim.peek: ...
# ~~feat doesn't exist", exit 1, the make in flight an error.)
case_unadopt_worker() {
	[ -n "$FIX" ] || return 0
	local W1="${DJC_DATABASE_SCHEMA}_auw1" W2="${DJC_DATABASE_SCHEMA}_auw2" C="${DJC_DATABASE_SCHEMA}_auwc"
	local q='"' d='double precision' pid
	[ "$DJC_BACKEND" = mysql ] && q='`' d='double'
	mk_dj_schema "$W1" "CREATE TABLE $q@W@$q.${q}raw$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__feat$q (k int NOT NULL, x $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}raw$q (k))" \
		"INSERT INTO $q@W@$q.${q}raw$q VALUES (1), (2), (3)"
	mk_dj_schema "$W2" "CREATE TABLE $q@W@$q.${q}base$q (k int NOT NULL, PRIMARY KEY (k))" \
		"CREATE TABLE $q@W@$q.${q}__ok$q (k int NOT NULL, z $d NOT NULL, PRIMARY KEY (k), FOREIGN KEY (k) REFERENCES $q@W@$q.${q}base$q (k))" \
		"INSERT INTO $q@W@$q.${q}base$q VALUES (1), (2), (3)"
	# Feat's makes say they started, then wait for ./go (bounded)
	cat > mk_uw.sh <<'P'
#!/bin/sh
if [ "$1" = x ]; then
	echo "$DJC_KEY_k" >> feat.started
	i=0
	while [ ! -e go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
fi
echo "{\"$1\": 1.5}"
P
	chmod +x mk_uw.sh
	printf 'Feat\n    make = ./mk_uw.sh x\n' > ovuf.djc
	printf 'Ok\n    make = ./mk_uw.sh z\n' > ovuo.djc
	local line="^djc: warning: worker leaves out table Feat, which was unadopted \(it is no longer in the stored pipeline\): its job in hand is not committed, the other tables are served$"
	local ok_rows="SELECT COUNT(*) FROM $q$W2$q.${q}__ok$q" feat_rows="SELECT COUNT(*) FROM $q$W1$q.${q}__feat$q"
	local procs
	for procs in 1 2; do
		rm -f go feat.started uw.log
		expect_rc 0 "adopt Feat's schema ($procs process(es))" djc --schema "$C" adopt "$W1" --overlay ovuf.djc
		expect_rc 0 "... and Ok's, into the same companion" djc --schema "$C" adopt "$W2" --overlay ovuo.djc
		server_sql "DELETE FROM $q$W2$q.${q}__ok$q"
		DJC_WORKER_LOG="$T/uw.log" "$DJC" --schema "$C" worker --processes "$procs" --until-empty --json > uw.out 2> uw.err &
		pid=$!
		check "a worker of both tables makes Feat's keys ($procs)" wait_lines . feat.started "$procs" 1200
		expect_rc 0 "unadopt Feat's schema meanwhile" djc --schema "$C" unadopt "$W1"
		: > go
		wait "$pid"
		RC=$? OUT=$(< uw.out) ERR=$(< uw.err)
		check "the worker goes on and stops as asked (exit 0)" [ "$RC" = 0 ]
		_nonempty_lines "$ERR"
		check "... one line on stderr, naming Feat, unadopted" [ "$lines" = 1 ]
		check "... this one" grep -qE "$line" <<< "$ERR"
		check "... Ok's keys made" test "$(jq -c .success_count <<< "$OUT")" = 3
		check "... no error" test "$(jq -c .error_count <<< "$OUT")" = 0
		check "... the makes Feat had in flight lost (their jobs went with it)" test "$(jq -c .lost_count <<< "$OUT")" = "$procs"
		check "... stopped: empty" test "$(jq -c '.stopped | keys' <<< "$OUT")" = '["empty"]'
		expect_out "... Ok's rows in DataJoint's table" 3 server_sql "$ok_rows"
		expect_out "... nothing of Feat committed" 0 server_sql "$feat_rows"
		matching "^[0-9]+ leave out Feat: unadopted$" uw.log
		check "... the log says each process left Feat" [ "$MATCHED" = "$procs" ]
		expect_rc 0 "unadopt Ok's schema" djc --schema "$C" unadopt "$W2"
	done
	# no table left: the worker stops cleanly, as one that ran out of work
	rm -f go feat.started uw.log
	expect_rc 0 "adopt Feat's schema again" djc --schema "$C" adopt "$W1" --overlay ovuf.djc
	DJC_WORKER_LOG="$T/uw.log" "$DJC" --schema "$C" worker --idle-exit 600 --json > uw.out 2> uw.err &
	pid=$!
	check "a worker of Feat alone makes a key" wait_lines . feat.started 1 1200
	expect_rc 0 "unadopt its schema" djc --schema "$C" unadopt "$W1"
	: > go
	wait "$pid"
	RC=$? OUT=$(< uw.out) ERR=$(< uw.err)
	check "the worker stops cleanly (exit 0)" [ "$RC" = 0 ]
	_nonempty_lines "$ERR"
	check "... one line on stderr" [ "$lines" = 1 ]
	check "... naming Feat, unadopted" grep -qE "$line" <<< "$ERR"
	check "... stopped: empty, nothing left to serve" test "$(jq -c '.stopped' <<< "$OUT")" = '{"empty":1}'
	check "... no error, its make lost" test "$(jq -c '[.success_count, .error_count, .lost_count]' <<< "$OUT")" = '[0,0,1]'
	expect_out "... nothing of Feat committed" 0 server_sql "$feat_rows"
}
tcase unadopt_worker

finish
