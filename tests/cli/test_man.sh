#!/bin/bash
# test_man.sh - the manual pages and bash completion: djc.1 has one section
# per command of the CLI's table (djc --help) naming exactly the options of
# that command's usage (djc help COMMAND); libdjc.3 lists every function
# djc.h declares; both format without groff warnings; bash completion
# offers commands, subcommands, options and the database's table names; make
# install puts the three under PREFIX/share.
. "$ROOT/tests/cli/lib.sh"
MAN1=$ROOT/man/djc.1
MAN3=$ROOT/man/libdjc.3

# the commands of `djc --help` ("jobs refresh" is one), as the table has them
# (shared: djc1 checks them against djc.1, completion against bash's)
djc --help | sed -n 's/^  \([a-z][a-z]*\)\( \([a-z][a-z]*\)\)\{0,1\}\( .*\)\{0,1\}$/\1 \3/p' | sed 's/ $//' > cli.cmds

case_djc1() {
# ------------------------------------------------------- djc.1 vs the CLI
sed -n 's/^\.\\" command: \([a-z].*\)$/\1/p' "$MAN1" > man.cmds
check "djc.1 has a section for each command of djc --help, in its order" eval 'diff cli.cmds man.cmds >&2'
check "the CLI has commands ($(wc -l < cli.cmds))" test "$(wc -l < cli.cmds)" -ge 15

# options of a command: those on its usage lines (the "usage:" line and the
# lines under it, but not another command's line, e.g. jobs refresh's under jobs)
cli_opts() {
	djc help $1 | awk -v cmd="djc $1" '
		NR == 1 { on = 1 }
		/^[^ ]/ && NR > 1 { on = 0 }
		on && /djc [a-z]/ { line = $0; sub(/^(usage:)? *djc /, "djc ", line)
			mine = (substr(line, 1, length(cmd) + 1) == cmd " " || line == cmd)
			if (mine && length(line) > length(cmd)) { rest = substr(line, length(cmd) + 2); if (rest ~ /^[a-z]/) mine = 0 } }
		on && mine { print }' | grep -o -- '--[a-z][a-z-]*' | sort -u
}
man_opts() {  # the options a section of djc.1 names
	awk -v c="$1" '/^\.\\" command: / { on = (substr($0, 14) == c); next } on' "$MAN1" |
		sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z-]*' | sort -u
}
while read -r c; do
	cli_opts "$c" > o.cli
	man_opts "$c" > o.man
	check "djc.1 section '$c' names exactly the options of djc help $c ($(tr '\n' ' ' < o.cli))" eval 'diff o.cli o.man >&2'
done < cli.cmds
man_opts "(global)" > o.man
{ djc --help | head -1 | grep -o -- '--[a-z][a-z-]*'; echo --help; echo --version; } | sort -u > o.cli
check "djc.1's global options: --db, --schema (djc --help), --help, --version" eval 'diff o.cli o.man >&2'
expect_rc 0 "djc --version works" djc --version
check "djc.1 carries djc's version" grep -q "^\.TH DJC 1 .*\"djc $(djc --version | cut -d' ' -f2 | cut -d. -f1,2)" "$MAN1"

# the test can fail: a page missing an option of the CLI is caught
sed 's/\\-\\-skip\\-duplicates/--skip-dupes/' "$MAN1" > bad.1
MAN1_SAVE=$MAN1; MAN1=bad.1
man_opts insert > o.man; cli_opts insert > o.cli
check "a djc.1 whose insert section lacks --skip-duplicates differs" eval '! diff o.cli o.man >/dev/null'
MAN1=$MAN1_SAVE
}
tcase djc1 @nodb

case_libdjc3() {
# ---------------------------------------------------- libdjc.3 vs djc.h
# only declarations: names that start a prototype line's function
sed -n 's/^[a-z][^(]*[ *]\(djc_[a-z0-9_]*\)(.*/\1/p' "$ROOT/include/djc.h" | sort -u > h.fns
sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$MAN3" | sed 's/\\-/-/g' | grep -o '\bdjc_[a-z0-9_]*(' | tr -d '(' | sort -u > m.fns
check "libdjc.3's synopsis lists every function of djc.h, and only those ($(wc -l < h.fns))" eval 'diff h.fns m.fns >&2'
check "djc.h declares functions" test "$(wc -l < h.fns)" -ge 70
}
tcase libdjc3 @nodb

case_formatting() {
# --------------------------------------------------------- formatting
for m in "$MAN1" "$MAN3"; do
	run groff -man -ww -z "$m"
	check "$(basename "$m") formats without warnings" test "$RC" = 0 -a -z "$ERR"
done
}
tcase formatting @nodb

case_completion() {
# --------------------------------------------------------- completion
cat > p.djc <<'P'
Subject (manual)
    subject : varchar(32)
    ---
Stats (computed)
    -> Subject
    ---
    n : int32
P
djc declare p.djc >/dev/null
mkdir -p bin && ln -sf "$DJC" bin/djc
comp() {  # WORDS...: the completions of the last word
	PATH="$T/bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _djc; [ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
		_ "$ROOT/completion/djc.bash" "$@"
}
check "completion: commands" test "$(comp djc "")" = "$(cut -d' ' -f1 cli.cmds | sort -u | tr '\n' ' ')"
check "completion: a prefix" test "$(comp djc pop)" = "populate "
check "completion: table names and subcommands after jobs" \
	test "$(comp djc jobs "")" = "$({ echo Stats; echo Subject; awk '$1 == "jobs" && $2 {print $2}' cli.cmds; } | sort | tr '\n' ' ')"
check "completion: table names after fetch" test "$(comp djc fetch S)" = "Stats Subject "
check "completion: a command's options" eval 'comp djc populate Stats --re | grep -qx "[-]-refresh --reserve-jobs "'
check "completion: a subcommand's options" eval 'test "$(comp djc jobs refresh --or)" = "--orphan-timeout "'
check "completion: option values" test "$(comp djc jobs Stats --status e)" = "error "
check "completion: diagram formats" test "$(comp djc diagram --format "")" = "dot svg "
check "completion: nothing after --make" test "$(comp djc populate Stats --make "")" = ""
check "completion: --db on the line names the database for table names" \
	test "$(comp djc --db "sqlite:$T/none.db" fetch "")" = ""
}
tcase completion

case_install() {
# ------------------------------------------------------------ install
B=${BUILD#"$ROOT"/}
expect_rc 0 "make install into a DESTDIR" make --no-print-directory -C "$ROOT" BUILD="$B" DESTDIR="$T/dest" PREFIX=/usr install
check "djc.1 installed" cmp "$MAN1" "$T/dest/usr/share/man/man1/djc.1"
check "libdjc.3 installed" cmp "$MAN3" "$T/dest/usr/share/man/man3/libdjc.3"
check "bash completion installed" cmp "$ROOT/completion/djc.bash" "$T/dest/usr/share/bash-completion/completions/djc"
expect_rc 0 "make uninstall" make --no-print-directory -C "$ROOT" BUILD="$B" DESTDIR="$T/dest" PREFIX=/usr uninstall
check "uninstall removed them" sh -c 'test -z "$(find "$1" ! -type d)"' _ "$T/dest"
}
tcase install completion

finish
