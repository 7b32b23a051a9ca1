#!/bin/bash
# test_smoke.sh - the README walk-through: declare, insert, fetch, populate.
. "$ROOT/tests/cli/lib.sh"
cat > p.djc <<'P'
Session (manual)
    session_id : int32
    ---
    subject : varchar(64)

Stats (computed)
    -> Session
    ---
    n : int64
P
cat > mk.sh <<'P'
#!/bin/sh
echo "{\"n\": $((DJC_KEY_session_id * 10))}"
P
chmod +x mk.sh
expect_rc 0 "declare" djc declare p.djc
printf '{"session_id":1,"subject":"a"}\n{"session_id":2,"subject":"b"}\n' > rows.jsonl
expect_out "insert" "inserted 2 rows into Session" djc insert Session rows.jsonl
expect_out "populate" "Stats: 2 made, 0 errors, 0 skipped" djc populate Stats --make ./mk.sh
expect_out "fetch json" '{"session_id":1,"n":10}
{"session_id":2,"n":20}' djc fetch Stats --format json
finish
