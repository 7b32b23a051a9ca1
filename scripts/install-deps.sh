#!/bin/sh
# install-deps.sh - install what djc needs, from the one list of it,
# scripts/deps.txt (programs, pkg-config modules and files, each with its
# Debian and Fedora/RHEL package).
#
#   scripts/install-deps.sh [GROUP]          install the packages of every
#        missing entry of GROUP (default check) with apt-get or dnf, then
#        verify that every entry is present. Quick when nothing is missing.
#   scripts/install-deps.sh --check [GROUP]  install nothing; name the missing
#        entries (and their packages) on stderr and exit 1 if any
#   scripts/install-deps.sh --bin DIR [GROUP]  as --check, then fill DIR with
#        a symbolic link to each program of GROUP: a PATH of DIR alone offers
#        exactly the declared programs (scripts/run-tests.sh does this)
#
# Groups include the ones before them: build < demo < check < bench, stress, fuzz.
# Programs are looked up in the system directories ($DJC_DEPS_PATH, default
# /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin), not in a
# personal PATH (pyenv, ~/bin, ...): what a fresh machine has is what counts.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
LIST=$HERE/deps.txt
SYSPATH=${DJC_DEPS_PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}

MODE=install
BIN=""
case ${1:-} in
--check) MODE=check; shift ;;
--bin) MODE=bin; BIN=${2:?--bin needs a directory}; shift 2 ;;
-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
esac
GROUP=${1:-check}
case $GROUP in
build) GROUPS_IN="build" ;;
demo) GROUPS_IN="build demo" ;;
check) GROUPS_IN="build demo check" ;;
bench) GROUPS_IN="build demo check bench" ;;
stress) GROUPS_IN="build demo check stress" ;;
fuzz) GROUPS_IN="build demo check fuzz" ;;
*) echo "install-deps: unknown group '$GROUP' (build, demo, check, bench, stress or fuzz)" >&2; exit 2 ;;
esac

# the entries of the selected groups: "kind name debian rpm" per line
entries() {
	awk -v groups=" $GROUPS_IN " '
		/^[ \t]*(#|$)/ { next }
		NF != 5 { printf "install-deps: %s:%d: expected 5 columns: group kind name debian-package rpm-package\n", FILENAME, FNR > "/dev/stderr"; bad = 1; next }
		$2 != "prog" && $2 != "pc" && $2 != "file" { printf "install-deps: %s:%d: unknown kind %s (prog, pc or file)\n", FILENAME, FNR, $2 > "/dev/stderr"; bad = 1; next }
		index(groups, " " $1 " ") { print $2, $3, $4, $5 }
		END { exit bad }' "$LIST"
}

# the program's path in the system directories (never a shell builtin)
find_prog() {
	_ifs=$IFS; IFS=:
	for _d in $SYSPATH; do
		if [ -f "$_d/$1" ] && [ -x "$_d/$1" ]; then IFS=$_ifs; echo "$_d/$1"; return 0; fi
	done
	IFS=$_ifs
	return 1
}

# The program to link for a test run: find_prog's, except that where it is
# Debian's pg_wrapper (psql: a Perl program choosing a version, ~40 ms a
# start) the newest server version's own binary
link_target() {
	_p=$(find_prog "$1") || return 1
	case $(readlink -f "$_p") in
	*/pg_wrapper)
		for _d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
			[ -x "$_d/$1" ] && { echo "$_d/$1"; return 0; }
		done ;;
	esac
	echo "$_p"
}

present() {  # kind name
	case $1 in
	prog) find_prog "$2" >/dev/null ;;
	pc) _pc=$(find_prog pkg-config) && "$_pc" --exists "$2" ;;
	file)
		for f in $2; do [ -e "$f" ] && return 0; done
		return 1 ;;
	esac
}

# "kind name debian rpm" lines of the missing entries
missing() {
	entries | while read -r kind name deb rpm; do
		present "$kind" "$name" || echo "$kind $name $deb $rpm"
	done
}

describe() {  # kind name -> words for a message
	case $1 in
	prog) echo "program '$2'" ;;
	pc) echo "library '$2' (pkg-config module, with headers)" ;;
	file) echo "file $2" ;;
	esac
}

report_missing() {  # lines of missing entries on stdin; prints them, returns 1 if any
	n=0
	while read -r kind name deb rpm; do
		n=$((n + 1))
		echo "  $(describe "$kind" "$name"): Debian package $deb, Fedora/RHEL package $rpm" >&2
	done
	[ "$n" = 0 ]
}

LIST_OK=$(entries) || exit 2
MISS=$(missing)

if [ "$MODE" != install ]; then
	if [ -n "$MISS" ]; then
		echo "djc: missing for '$GROUP' (run scripts/install-deps.sh $GROUP, or make deps):" >&2
		printf '%s\n' "$MISS" | report_missing || true
		exit 1
	fi
	if [ "$MODE" = bin ]; then
		mkdir -p "$BIN"
		printf '%s\n' "$LIST_OK" | while read -r kind name deb rpm; do
			[ "$kind" = prog ] || continue
			ln -sf "$(link_target "$name")" "$BIN/$name"
		done
	fi
	exit 0
fi

[ -z "$MISS" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
if APT=$(find_prog apt-get); then
	PKGS=$(printf '%s\n' "$MISS" | awk '{ print $3 }' | sort -u | tr '\n' ' ')
	echo "djc: installing Debian packages for '$GROUP': $PKGS" >&2
	export DEBIAN_FRONTEND=noninteractive
	# Services must not start at install time: the tests start their own servers.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
		$SUDO chmod +x /usr/sbin/policy-rc.d
		trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	$SUDO "$APT" update -qq
	# shellcheck disable=SC2086  # a list of package names
	$SUDO "$APT" install -y -qq --no-install-recommends $PKGS >/dev/null
elif DNF=$(find_prog dnf); then
	PKGS=$(printf '%s\n' "$MISS" | awk '$4 != "-" { print $4 }' | sort -u | tr '\n' ' ')
	echo "djc: installing packages for '$GROUP' with dnf: $PKGS" >&2
	# shellcheck disable=SC2086
	$SUDO "$DNF" install -y -q $PKGS
else
	echo "djc: neither apt-get nor dnf found; install these yourself, then run make again:" >&2
	printf '%s\n' "$MISS" | report_missing || true
	exit 1
fi

MISS=$(missing)
if [ -n "$MISS" ]; then
	echo "djc: still missing after installing their packages (is scripts/deps.txt right for this system?):" >&2
	printf '%s\n' "$MISS" | report_missing || true
	exit 1
fi
