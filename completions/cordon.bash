# bash completion for cordon(1): commands, subcommands, flags, the values of --profile, --home,
# --kind and --restart, session names, and files where an option names a path.
# Every list is asked of the cordon being completed, so it is that version's and cannot drift:
# commands from `cordon --help`, subcommands and flags from `cordon help CMD [SUB]` (the text
# CMD --help prints), sessions from `cordon session list`, profiles from the folders cordon
# reads them from ($CORDON_DATADIR, the data directory beside the binary, the user's, the
# project's .cordon).
# Installed as /usr/share/bash-completion/completions/cordon; needs nothing but bash.

_cordon_commands() {
    "$1" --help 2>/dev/null | sed -n '/^commands:/,/^[^ ]/s/^  \([a-z][a-z-]*\) .*/\1/p'
    echo help
}

# The subcommands of a command whose synopsis is "cordon CMD a|b|c ...".
_cordon_subcommands() {
    "$1" help "$2" 2>/dev/null | sed -n '1s/^usage: cordon [a-z-]* \([a-z|]*|[a-z|]*\).*/\1/p' | tr '|' '\n'
}

# The flags a usage text names, and (with "values") those that take a value ("--flag WORD").
_cordon_flags() {
    local bin=$1
    shift
    "$bin" help "$@" 2>/dev/null | grep -oE -- '(^|[ [,])--[a-z][a-z0-9-]*' | sed 's/^[ [,]//' | sort -u
}
_cordon_value_flags() {
    local bin=$1
    shift
    "$bin" help "$@" 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]* [A-Z[]' | sed 's/ .*//' | sort -u
}

_cordon_sessions() {
    "$1" session list 2>/dev/null | awk 'NR > 1 { print $1 }'
}

_cordon_profiles() {
    local bin dir f
    bin=$(command -v -- "$1" 2>/dev/null) && bin=$(readlink -f -- "$bin" 2>/dev/null)
    for dir in ${CORDON_DATADIR:+"$CORDON_DATADIR/profiles"} "${bin%/*}/share/cordon/profiles" \
        "${bin%/*}/../share/cordon/profiles" "${XDG_CONFIG_HOME:-$HOME/.config}/cordon/profiles" \
        .cordon/profiles; do
        [ -d "$dir" ] || continue
        for f in "$dir"/*.lua; do
            [ -e "$f" ] || continue
            f=${f##*/}
            echo "${f%.lua}"
        done
    done | sort -u
}

_cordon() {
    local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=
    local cmd=${COMP_WORDS[1]} sub= i npos=0 values
    [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$(_cordon_commands "$bin") --help --version" -- "$cur"))
        return
    fi
    if [ "$cmd" = help ]; then
        if [ "$COMP_CWORD" -eq 2 ]; then
            COMPREPLY=($(compgen -W "$(_cordon_commands "$bin")" -- "$cur"))
        elif [ "$COMP_CWORD" -eq 3 ]; then
            COMPREPLY=($(compgen -W "$(_cordon_subcommands "$bin" "${COMP_WORDS[2]}")" -- "$cur"))
        fi
        return
    fi
    # A command with subcommands (session, policy): the second word is one of them.
    local subs
    subs=$(_cordon_subcommands "$bin" "$cmd")
    if [ -n "$subs" ]; then
        if [ "$COMP_CWORD" -eq 2 ]; then
            COMPREPLY=($(compgen -W "$subs --help" -- "$cur"))
            return
        fi
        sub=${COMP_WORDS[2]}
    fi
    # After "--" the words are the command's own (cordon run -- COMMAND ...).
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [ "${COMP_WORDS[i]}" = -- ]; then
            COMPREPLY=($(compgen -c -- "$cur") $(compgen -f -- "$cur"))
            return
        fi
    done
    case $prev in
    --profile)
        COMPREPLY=($(compgen -W "$(_cordon_profiles "$bin")" -- "$cur"))
        return ;;
    --home)
        COMPREPLY=($(compgen -W "overlay readonly tmpfs" -- "$cur"))
        return ;;
    --kind)
        COMPREPLY=($(compgen -W "http connect socks" -- "$cur"))
        return ;;
    --restart)
        COMPREPLY=($(compgen -W "on-failure always" -- "$cur"))
        return ;;
    --session | --fork)
        COMPREPLY=($(compgen -W "$(_cordon_sessions "$bin")" -- "$cur"))
        return ;;
    --workspace | --policy | --allow-write | --hide | --input | --upstream-ca)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    esac
    values=" $(_cordon_value_flags "$bin" "$cmd" $sub | tr '\n' ' ') "
    case $values in *" $prev "*) return ;; esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_cordon_flags "$bin" "$cmd" $sub) --help" -- "$cur"))
        return
    fi
    # The positional words so far (options and their values skipped).
    i=2
    [ -n "$sub" ] && i=3
    for (( ; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) case $values in *" ${COMP_WORDS[i]} "*) ((i++)) ;; esac ;;
        *) ((npos++)) ;;
        esac
    done
    # The first word of the session commands is a session's NAME.
    case "$cmd $sub" in
    "exec " | "jobs " | "logs " | "stop " | "cancel " | "approve " | "publish " | "unpublish " | \
        "grant " | "grants " | "revoke " | "snapshot " | "rollback " | "fork " | \
        "session status" | "session stop")
        [ "$npos" -eq 0 ] && COMPREPLY=($(compgen -W "$(_cordon_sessions "$bin")" -- "$cur"))
        return ;;
    "trust " | "home " | "review " | "apply " | "discard " | "policy check" | "policy test")
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    esac
}
complete -F _cordon cordon
