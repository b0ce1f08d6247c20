#!/usr/bin/env bash
# check-docs-acl.sh -- docs/operations.md's ACL lines and data types stay true on the server under test
# (REDIS_SERVER and REDIS_CLI, as scripts/run-tests.sh sets them for each server of `make test`).
#
# ACL: every indented "ACL SETUSER user ..." line of the page is followed by one or more comments
#   <!-- acl-check servers="redis>=7.4 valkey>=8" grants="all -rl.setstate -rl.reset -rl.clock" -->
# saying on which servers the line holds ("any", or words NAME>=VERSION / NAME<VERSION, any of them) and
# which of the module's commands it grants: terms read left to right, each adding (or, with a leading "-",
# removing) "all" (every command the server lists for the module), "read-only" or "write" (those COMMAND
# INFO flags so), "none", or one command by name. The list of commands comes from the server (COMMAND LIST
# FILTERBY MODULE ratelimit, loaded with test-clock so RL.CLOCK is there too), never from this script: a
# command the module gains is expected wherever a line says "all" or "read-only", and a line that grants by
# name and lacks it fails. For each line that holds here, the user is created afresh with the page's words,
# and for every command of the module ACL DRYRUN must allow it or refuse it to run as expected, on a key
# inside the line's key pattern (~PREFIX* or %R~PREFIX*), and a granted command that takes a key must be
# refused a key outside the pattern. A comment may add key-refused="TERMS": granted commands that must
# still be refused the key inside the pattern (a write command under %R~, read-only key permissions). Each
# verdict is confirmed by running the command for real as that user (AUTH with the line's password):
# NOPERM exactly when refused.
#
# Data types: the comment
#   <!-- types-check: RL.TOKEN k 10 5 1000 = rl-tokens; ...; no type of their own: RL.ALL ... -->
# lists calls and the TYPE of the key each creates (the word k is the key, wherever it stands: RL.CHECK
# policy k; a call without k sets things up, its type none), then the write commands that make no key of a
# type of their own (a command's subcommands with it: RL.POLICY). Every write command of the module must be in one of the two, each call must create a key of
# the type given, and the paragraph before the comment must name each module data type in backquotes and
# say how many the module "registers" ("registers four when it loads").
#
# Prints "docs-acl: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
doc=docs/operations.md
trap server_stop EXIT

CHECK_SUITE=docs-acl
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh
finish() {
    check_summary
    exit
}

if ! server_start --module-arg test-clock >/dev/null; then
    check "start $REDIS_SERVER with the module" false
    finish
fi
cli() { "$REDIS_CLI" -p "$SERVER_PORT" "$@" 2>&1 | tr -d '\r'; }

# --- The server and the module's commands. -----------------------------------------------------------------
info=$(cli INFO server)
server_name=redis
server_version=$(sed -n 's/^redis_version://p' <<<"$info")
if grep -q '^valkey_version:' <<<"$info"; then
    server_name=valkey
    server_version=$(sed -n 's/^valkey_version://p' <<<"$info")
fi
mapfile -t commands < <(cli COMMAND LIST FILTERBY MODULE ratelimit | sort)
check "the server lists the module's commands (got ${#commands[@]})" test "${#commands[@]}" -gt 0

declare -A flags arity
for c in "${commands[@]}"; do
    cmdinfo=$(cli COMMAND INFO "$c")
    arity[$c]=$(sed -n 2p <<<"$cmdinfo")
    flags[$c]=""
    grep -qx write <<<"$cmdinfo" && flags[$c]="write"
    grep -qx readonly <<<"$cmdinfo" && flags[$c]=read-only
done

# version_at_least A B: version A >= version B.
version_at_least() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]; }

# holds_here SPEC: the servers= words of an acl-check name this server. Status 2: a word it cannot read.
holds_here() {
    local word name version
    for word in $1; do
        case $word in
        any) return 0 ;;
        *'>='*) name=${word%%>=*} version=${word#*>=}
            [ "$name" = "$server_name" ] && version_at_least "$server_version" "$version" && return 0 ;;
        *'<'*) name=${word%%<*} version=${word#*<}
            [ "$name" = "$server_name" ] && ! version_at_least "$server_version" "$version" && return 0 ;;
        *) return 2 ;;
        esac
    done
    return 1
}

# granted_set TERMS: the commands TERMS grant, one a line; status 1 (and the bad term on stderr) for a term
# that is neither a class nor one of the module's commands.
granted_set() {
    local term op name c
    declare -A chosen=()
    for term in $1; do
        op=+ name=$term
        [[ "$term" == -* ]] && op=- name=${term#-}
        local members=()
        case $name in
        all) members=("${commands[@]}") ;;
        none) ;;
        read-only | write) for c in "${commands[@]}"; do [ "${flags[$c]}" = "$name" ] && members+=("$c"); done ;;
        *) [ -n "${arity[$name]+x}" ] || { echo "$name" >&2; return 1; }
            members=("$name") # and its subcommands (rl.policy: rl.policy|set ...), as +rl.policy grants them
            for c in "${commands[@]}"; do [[ "$c" != "$name|"* ]] || members+=("$c"); done ;;
        esac
        for c in "${members[@]}"; do
            if [ "$op" = + ]; then chosen[$c]=1; else unset "chosen[$c]"; fi
        done
    done
    printf '%s\n' "${!chosen[@]}"
}

# call_args CMD KEY: the arguments (one a line) of a call of CMD whose one key is KEY, checked with COMMAND
# GETKEYS; if CMD takes no key, the padding its arity needs (at least one word, which COMMAND GETKEYS needs
# to answer). Status 1 if no such call was found.
call_args() {
    local cmd=$1 key=$2 need shape words got
    local -a name
    read -ra name <<<"${cmd//|/ }" # a subcommand (rl.policy|set) is called as its two words, its arity both
    need=$((${arity[$cmd]} < 0 ? -${arity[$cmd]} - ${#name[@]} : ${arity[$cmd]} - ${#name[@]}))
    for shape in "$key" "1 $key" ""; do
        read -ra words <<<"$shape"
        while [ "${#words[@]}" -lt "$need" ] || [ $((${#words[@]} + ${#name[@]})) -eq 1 ]; do words+=(1); done
        got=$(cli COMMAND GETKEYS "${name[@]}" "${words[@]}")
        if [ -n "$shape" ] && [ "$got" = "$key" ]; then printf '%s\n' "${words[@]}"; return 0; fi
        if [ -z "$shape" ] && [[ "$got" == *"no key arguments"* ]]; then printf '%s\n' "${words[@]}"; return 0; fi
    done
    return 1
}

# verdict USER CMD ARGS...: what ACL DRYRUN says: ok, no-command, no-key, or its answer.
verdict() {
    local user=$1 got
    shift
    got=$(cli ACL DRYRUN "$user" "$@")
    case $got in
    OK) echo ok ;;
    *"permissions to run"*) echo no-command ;;
    *"permissions to access"*) echo no-key ;;
    *) echo "$got" ;;
    esac
}

# check_line N LINE: one ACL SETUSER line of the page (line N) against each of its acl-check comments.
lines_run=0
check_line() {
    local n=$1 line=$2 spec=$3 words user password="" pattern="" inside outside="" held
    read -ra words <<<"$line"
    user=${words[2]}
    local w
    for w in "${words[@]:3}"; do
        case $w in
        '>'*) [ -n "$password" ] || password=${w#>} ;;
        '~'*) [ -n "$pattern" ] || pattern=${w#\~} ;;
        '%R~'*) [ -n "$pattern" ] || pattern=${w#%R~} ;;
        allkeys) [ -n "$pattern" ] || pattern='*' ;;
        esac
    done
    local at="$doc:$n ($user)"
    # The key pattern: a prefix and a final *, so that a key inside it and one outside are easy to name.
    if [ -z "$password" ] || [ -z "$pattern" ] || [[ "${pattern%\*}" == *[][*?\\]* ]] || [[ "$pattern" != *'*' ]]; then
        check "$at: the line sets a password and a key pattern PREFIX* (%R~ or ~) this test can use" false
        return
    fi
    inside="${pattern%\*}acl-check"
    [ "$pattern" = '*' ] || outside="outside-of-the-pattern"

    # Which comment holds here: one at most (two would make the page say two things).
    local grants="" key_refused="" any=0 c_servers c_grants c_key_refused status
    while IFS=$'\t' read -r c_servers c_grants c_key_refused; do
        any=1
        holds_here "$c_servers"
        status=$?
        if [ "$status" -eq 2 ]; then
            check "$at: acl-check servers=\"$c_servers\" is readable (any, NAME>=VERSION, NAME<VERSION)" false
        elif [ "$status" -eq 0 ] && [ -n "$grants" ]; then
            check "$at: one acl-check comment at most holds on $server_name $server_version (servers=\"$c_servers\" too)" false
        elif [ "$status" -eq 0 ]; then
            grants=${c_grants:-none} key_refused=${c_key_refused:-none}
        fi
    done <<<"$spec"
    if [ "$any" -eq 0 ] || [ -z "$spec" ]; then
        check "$at: the line has an acl-check comment under it" false
        return
    fi
    [ -n "$grants" ] || return 0 # about other servers
    lines_run=$((lines_run + 1))

    local expected refused_key
    if ! expected=$(granted_set "$grants" 2>"$SERVER_DIR/bad-term"); then
        check "$at: acl-check grants=\"$grants\" names '$(cat "$SERVER_DIR/bad-term")', not a class (all, read-only, write, none) nor a command of the module" false
        return
    fi
    if ! refused_key=$(granted_set "$key_refused" 2>"$SERVER_DIR/bad-term"); then
        check "$at: acl-check key-refused=\"$key_refused\" names '$(cat "$SERVER_DIR/bad-term")', not a class (all, read-only, write, none) nor a command of the module" false
        return
    fi
    cli ACL DELUSER "$user" >/dev/null
    held=$(cli ACL SETUSER "${words[@]:2}")
    check "$at: $line answers OK on $server_name $server_version (got: $held)" test "$held" = OK
    [ "$held" = OK ] || return

    local cmd argtext args want got real
    local -a name
    for cmd in "${commands[@]}"; do
        # A container of subcommands (rl.policy) is no call of its own: its subcommands are listed apart.
        [ -z "$(printf '%s\n' "${commands[@]}" | grep -F -- "$cmd|")" ] || continue
        read -ra name <<<"${cmd//|/ }"
        if ! argtext=$(call_args "$cmd" "$inside"); then
            check "$at: a call of $cmd with the one key $inside (COMMAND GETKEYS)" false
            continue
        fi
        args=()
        [ -z "$argtext" ] || mapfile -t args <<<"$argtext" # (no words: none, not one empty one)
        if grep -qx -- "$cmd" <<<"$expected"; then
            want=ok
            grep -qx -- "$cmd" <<<"$refused_key" && [[ " ${args[*]} " == *" $inside "* ]] && want=no-key
        else
            want=no-command
        fi
        got=$(verdict "$user" "${name[@]}" "${args[@]}")
        check "$at: $cmd ${args[*]}: ACL DRYRUN says $got, the page says $want" test "$got" = "$want"
        # The same call for real, as the user: refused with NOPERM exactly when the page says so.
        real=$("$REDIS_CLI" -p "$SERVER_PORT" --user "$user" --pass "$password" --no-auth-warning "${name[@]}" "${args[@]}" 2>&1 | head -n 1)
        cli FLUSHALL >/dev/null # what it wrote, so that the next command finds no key of another type
        if [ "$want" = ok ]; then
            check "$at: $cmd ${args[*]} run as $user is not refused (got: $real)" test "${real#NOPERM}" = "$real"
        else
            check "$at: $cmd ${args[*]} run as $user is refused (got: $real)" test "${real#NOPERM}" != "$real"
        fi
        # Outside the key pattern: refused for its key.
        if [ "$want" = ok ] && [ -n "$outside" ] && [[ " ${args[*]} " == *" $inside "* ]]; then
            local out_args=("${args[@]/#$inside/$outside}")
            got=$(verdict "$user" "${name[@]}" "${out_args[@]}")
            check "$at: $cmd on $outside, outside $pattern: ACL DRYRUN says $got, refused for its key expected" test "$got" = no-key
        fi
    done
    cli ACL DELUSER "$user" >/dev/null
}

# --- Every ACL SETUSER line with the acl-check comments under it (up to the next line or heading). -----------
# Records: line number, the line, then the comments' servers, grants and key-refused (tab-separated, one
# comment a line).
nlines=0
while IFS= read -r -d $'\x1e' record; do
    n=${record%%$'\x1f'*}
    rest=${record#*$'\x1f'}
    line=${rest%%$'\x1f'*}
    spec=${rest#*$'\x1f'}
    if [ "$n" = 0 ]; then
        check "$doc: $line" false
        continue
    fi
    nlines=$((nlines + 1))
    check_line "$n" "$line" "$spec"
done < <(awk '
    function flush() { if (n) printf "%s\x1f%s\x1f%s\x1e", n, line, spec; n = 0 }
    function attr(s, name,   m) { if (match(s, name "=\"[^\"]*\"")) return substr(s, RSTART + length(name) + 2, RLENGTH - length(name) - 3); return "" }
    /^[[:space:]]*ACL SETUSER / { flush(); n = NR; line = $0; sub(/^[[:space:]]+/, "", line); spec = ""; next }
    /<!-- acl-check / { if (!n) { printf "0\x1fan acl-check under no ACL SETUSER line (line %d)\x1f\x1e", NR; next }
                        spec = spec (spec == "" ? "" : "\n") attr($0, "servers") "\t" attr($0, "grants") "\t" attr($0, "key-refused"); next }
    /^#/ { flush() }
    END { flush() }
' "$doc")
check "$doc has ACL SETUSER lines (found $nlines)" test "$nlines" -gt 0
check "some of them hold on $server_name $server_version (ran $lines_run)" test "$lines_run" -gt 0

# --- Data types. --------------------------------------------------------------------------------------------
types_line=$(grep -n '<!-- types-check: ' "$doc" | head -n 1)
check "$doc has a types-check comment" test -n "$types_line"
if [ -n "$types_line" ]; then
    types_at=${types_line%%:*}
    list=$(sed -E 's/.*<!-- types-check: (.*) -->.*/\1/' <<<"${types_line#*:}")
    declare -A listed=() module_types=()
    i=0
    while IFS= read -r item; do
        [ -n "${item// /}" ] || continue
        if [[ "$item" == *"no type of their own:"* ]]; then
            for c in ${item#*:}; do listed[${c,,}]=1; done
            for c in "${commands[@]}"; do [ -z "${listed[${c%%|*}]+x}" ] || listed[$c]=1; done # their subcommands
            continue
        fi
        call=${item%=*} type=${item##*=}
        type=${type// /}
        read -ra words <<<"$call"
        i=$((i + 1))
        key="types-check:$i"
        listed[${words[0],,}]=1
        [ "${words[0],,}" != rl.policy ] || listed[rl.policy\|${words[1],,}]=1
        call_words=() # the word k is the key, wherever it is (RL.CHECK policy k)
        for w in "${words[@]}"; do if [ "$w" = k ]; then call_words+=("$key"); else call_words+=("$w"); fi; done
        cli "${call_words[@]}" >/dev/null
        got=$(cli TYPE "$key")
        check "$doc:$types_at: ${words[*]} makes a key of type $type (TYPE: $got)" test "$got" = "$type"
        case $type in zset | string | hash | list | set | stream | none) ;; *) module_types[$type]=1 ;; esac
    done < <(tr ';' '\n' <<<"$list")
    for c in "${commands[@]}"; do
        [ "${flags[$c]}" = write ] || continue
        check "$doc:$types_at: the types-check lists the write command $c" test -n "${listed[$c]+x}"
    done
    # The paragraph right above the comment: names every module type and says how many.
    paragraph=$(awk -v at="$types_at" 'NR < at { if ($0 == "") { if (p != "") last = p; p = "" } else p = p " " $0 }
                                       NR == at { print (p != "" ? p : last); exit }' "$doc")
    for t in "${!module_types[@]}"; do
        check "the paragraph above $doc:$types_at names \`$t\`" grep -qF "\`$t\`" <<<"$paragraph"
    done
    numbers=(zero one two three four five six seven eight nine ten)
    said=$(grep -oE 'registers [a-z]+' <<<"$paragraph" | head -n 1)
    check "the paragraph above $doc:$types_at says the module registers ${numbers[${#module_types[@]}]} data types (it says: '$said')" \
        test "$said" = "registers ${numbers[${#module_types[@]}]}"
fi

server_stop
finish
