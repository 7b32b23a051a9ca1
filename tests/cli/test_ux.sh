#!/bin/bash
# test_ux.sh - inspecting a pipeline from the command line: the text error
# listing with each error's stack.
. "$ROOT/tests/cli/lib.sh"

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
printf '{"id": 1}\n{"id": 2}\n' | djc insert A >/dev/null
cat > fail.sh <<'S'
#!/bin/sh
cat >/dev/null
echo "first line of stderr" >&2
printf 'second\tline\n\n' >&2
exit 3
S
chmod +x fail.sh
expect_rc 1 "populate with a failing make" djc populate B --reserve-jobs --suppress-errors --make ./fail.sh

# ------------------------------------------------------ the error listing
run djc jobs B --status error
check "one line per job starts with its key" test "$(printf '%s\n' "$OUT" | grep -c '^{')" = 2
check "the message is on the job's line" eval 'printf "%s\n" "$OUT" | grep -q "^{\"id\": 1}.*error_message=make exited with status 3"'
check "the stack follows, indented, line by line" eval 'printf "%s\n" "$OUT" | grep -A3 "^{\"id\": 1}" | sed -n 2,4p | tr -d "\n" | grep -qx "    stack:      first line of stderr      second line"'
check "no stack lines for jobs without a stack" eval 'djc jobs B --status pending | grep -vc "^{" | grep -qx 0'
run djc jobs B --status error
key=$(printf '%s\n' "$OUT" | grep '^{' | head -1 | sed 's/}  .*/}/')
expect_rc 0 "the listed key pastes into jobs ignore" djc jobs ignore B "$key"

finish
