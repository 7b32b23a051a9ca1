# datajoint-python.sh - sourced by the scripts that run the real DataJoint
# beside djc (scripts/check-datajoint*.sh, tests/datajoint/*.sh, bench/dj-*.sh,
# bench/query-dj.sh). `djpy_find`: sets DJPY to an interpreter that can
# import datajoint and numpy, in this order:
#   $DJC_DATAJOINT_PYTHON; python3 when it can (a user's `pip install
#   datajoint numpy`); ROOT/build/realdj/bin/djpython, set up first from
#   ../shared/realdj/setup.sh (REALDJ_SETUP) when it is not there yet.
# Returns 1 (DJPY empty, the reason in DJPY_WHY) when there is none.
# ROOT must be set (the repository).
djpy_find() {
	DJPY= DJPY_WHY=
	if [ -n "${DJC_DATAJOINT_PYTHON:-}" ]; then
		DJPY=$DJC_DATAJOINT_PYTHON
	elif python3 -c 'import datajoint, numpy' >/dev/null 2>&1; then
		DJPY=python3
	else
		if [ ! -x "$ROOT/build/realdj/bin/djpython" ]; then
			local setup=${REALDJ_SETUP:-$ROOT/../shared/realdj/setup.sh}
			[ -x "$setup" ] || setup=/work/shared/realdj/setup.sh
			[ -x "$setup" ] || { DJPY_WHY="no DataJoint: pip install datajoint numpy, or set DJC_DATAJOINT_PYTHON"; return 1; }
			"$setup" "$ROOT/build/realdj" >/dev/null 2>&1 || { DJPY_WHY="$setup build/realdj failed"; return 1; }
		fi
		DJPY=$ROOT/build/realdj/bin/djpython
	fi
	"$DJPY" -c 'import datajoint, numpy' >/dev/null 2>&1 && return 0
	DJPY_WHY="$DJPY cannot import datajoint and numpy"
	DJPY=
	return 1
}
