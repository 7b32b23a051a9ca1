# djc.bash - bash completion for djc (installed by `make install` as
# PREFIX/share/bash-completion/completions/djc). Commands come from
# `djc --help`, a command's options from `djc help COMMAND`, table names from
# `djc tables` (with the --db and --schema given on the line), so the
# completion follows the installed djc and never goes stale.

_djc_commands()   # the command words of `djc --help` (jobs refresh -> jobs, refresh)
{
	"$1" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)\( \([a-z][a-z]*\)\)\{0,1\}\( .*\)\{0,1\}$/\1 \3/p'
}

_djc()
{
	local cur prev djc=${COMP_WORDS[0]} i w cmd="" sub="" nargs=0
	local -a conn=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	# the command (and subcommand) so far, and the connection options given
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--db|--schema) conn+=("$w" "${COMP_WORDS[i+1]}"); ((i++)); continue ;;
		--db=*|--schema=*) conn+=("$w"); continue ;;
		--make|--make-serve) return 0 ;;   # the rest of the line is the make program's
		-*) continue ;;
		esac
		if [ -z "$cmd" ]; then cmd=$w
		elif [ -z "$sub" ] && [ "$nargs" = 0 ] && _djc_commands "$djc" | grep -qx "$cmd $w"; then sub=$w
		else nargs=$((nargs + 1)); fi
	done
	case $prev in
	--db|--where|--key|--attrs|--order-by|--limit|--offset|--priority|--delay|--stale-timeout|--orphan-timeout|--processes|--max-calls|--interval|--schema|--timeout|--max-jobs|--idle-exit|--deadline|--refresh-interval)
		return 0 ;;
	--format)
		if [ "$cmd" = diagram ]; then COMPREPLY=($(compgen -W "dot svg" -- "$cur"))
		elif [ "$cmd" = insert ]; then COMPREPLY=($(compgen -W "json csv" -- "$cur"))
		elif [ "$cmd" = fetch ]; then COMPREPLY=($(compgen -W "table json jsonl csv tsv" -- "$cur"))
		else COMPREPLY=($(compgen -W "table json csv" -- "$cur")); fi
		return 0 ;;
	--status)
		COMPREPLY=($(compgen -W "pending reserved success error ignore" -- "$cur"))
		return 0 ;;
	--overlay)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0 ;;
	esac
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--db --schema --help --version" -- "$cur"))
		else COMPREPLY=($(compgen -W "$(_djc_commands "$djc" | cut -d' ' -f1 | sort -u)" -- "$cur")); fi
		return 0
	fi
	if [[ $cur == -* ]]; then
		local opts
		opts=$("$djc" help $cmd $sub 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts --db --schema --help" -- "$cur"))
		return 0
	fi
	case $cmd in
	declare|alter) COMPREPLY=($(compgen -f -- "$cur")) ;;
	help)
		if [ "$nargs" = 0 ]; then COMPREPLY=($(compgen -W "$(_djc_commands "$djc" | cut -d' ' -f1 | sort -u)" -- "$cur"))
		else COMPREPLY=($(compgen -W "$(_djc_commands "$djc" | awk -v c="${COMP_WORDS[COMP_CWORD-1]}" '$1 == c && $2 {print $2}')" -- "$cur")); fi ;;
	tables|config|diagram) ;;
	adopt|unadopt) ;;   # DataJoint schemas: names of the server, not djc's tables
	*)
		if [ "$nargs" = 0 ]; then
			local words=$("$djc" "${conn[@]}" tables 2>/dev/null)
			[ -z "$sub" ] && words="$words $(_djc_commands "$djc" | awk -v c="$cmd" '$1 == c && $2 {print $2}')"
			COMPREPLY=($(compgen -W "$words" -- "$cur"))
		elif [ "$cmd" = insert ]; then COMPREPLY=($(compgen -f -- "$cur")); fi ;;
	esac
	return 0
}
complete -F _djc djc
