#!/usr/bin/env bash
# Get one Debian source package (.dsc and its tarballs) into a directory, for scripts/servers.sh and
# scripts/fetch-redismodule-h.sh. apt first: a temporary deb-src list of its own for SUITE, SUITE-updates
# and SUITE-security, with its own list and cache directories, so the machine's apt configuration is
# never read for sources nor written. When apt cannot deliver (no archive, or an index that names a
# revision the pool no longer serves: a 404), the copies kept in ../shared/debian-src/ beside the
# repository (RL_DEBIAN_SRC overrides) are used, after checking them against their SHA256SUMS. Fails with
# a message saying what was tried when neither works.
#
# Usage: scripts/debian-source.sh SUITE PACKAGE VERSION DESTDIR
#   VERSION  a Debian version (7.0.15-1~deb12u10, epoch optional): exactly that one, or else any of the
#            same upstream version; or an upstream series (8.0): the newest 8.0 or 8.0.x.
#   Prints the path of the .dsc in DESTDIR; unpack it with dpkg-source -x.
set -euo pipefail
suite=${1:-}; pkg=${2:-}; want=${3:-}; dest=${4:-}
if [ -z "$suite" ] || [ -z "$pkg" ] || [ -z "$want" ] || [ -z "$dest" ]; then
    echo "usage: $0 SUITE PACKAGE VERSION DESTDIR" >&2
    exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
fallback=$(realpath -m "${RL_DEBIAN_SRC:-$repo/../shared/debian-src}")
log() { echo "debian-source: $*" >&2; }

noepoch() { echo "${1#*:}"; }
# 5:8.0.2-3+deb13u2 -> 8.0.2; 8.1.1+dfsg1-3+deb13u2 -> 8.1.1 (the repack suffix is not the version).
upstream_of() { local v; v=$(noepoch "$1"); v=${v%-*}; echo "${v%%[+~]*}"; }
# Does Debian version $1 fit what was asked for?
fits() {
    local u
    u=$(upstream_of "$1")
    case "$want" in
    *-*) [ "$u" = "$(upstream_of "$want")" ] ;;  # a Debian version: same upstream version (exact preferred)
    *) [ "$u" = "$want" ] || [[ "$u" == "$want".* ]] ;;
    esac
}
# Of the versions on stdin that fit, the exact one asked for, else the newest.
pick() {
    local v best=""
    while read -r v; do
        [ -n "$v" ] && fits "$v" || continue
        if [[ "$want" == *-* ]] && [ "$(noepoch "$v")" = "$(noepoch "$want")" ]; then echo "$v"; return; fi
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
    done
    echo "$best"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# The files a .dsc names (its Checksums-Sha256 section): "sha256 size name" lines.
dsc_files() { sed -n '/^Checksums-Sha256:/,/^[^ ]/{/^ /p}' "$1"; }

try_apt() {
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/parts" "$work/get"
    cat >"$work/sources.list" <<LIST
deb-src http://deb.debian.org/debian ${suite} main
deb-src http://deb.debian.org/debian ${suite}-updates main
deb-src http://deb.debian.org/debian-security ${suite}-security main
LIST
    local apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
                    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
                    -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
    if ! apt-get "${apt_opts[@]}" -qq update >"$work/apt.log" 2>&1; then
        apt_failure="apt-get update of $suite deb-src failed: $(grep -E '^(E|W):' "$work/apt.log" | head -n 2 | tr '\n' ' ')"
        return 1
    fi
    local version
    version=$(apt-cache "${apt_opts[@]}" showsrc "$pkg" 2>/dev/null | awk '/^Version:/ {print $2}' | sort -u | pick)
    if [ -z "$version" ]; then
        # apt-get update exits 0 when an index could not be fetched: say so, it is the likelier cause.
        apt_failure="$suite has no $pkg source of version $want$(grep -E '^(W|E): Failed to fetch' "$work/apt.log" |
            head -n 1 | sed 's/^/ (/; s/$/)/')"
        return 1
    fi
    if ! (cd "$work/get" && apt-get "${apt_opts[@]}" -qq --download-only source "$pkg=$version") \
        >"$work/apt.log" 2>&1; then
        apt_failure="$suite names $pkg $version but it could not be downloaded: $(grep -E '^E:' "$work/apt.log" |
            head -n 1)"
        return 1
    fi
    local dsc
    dsc="$work/get/${pkg}_$(noepoch "$version").dsc"
    [ -f "$dsc" ] || { apt_failure="apt-get source left no $(basename "$dsc")"; return 1; }
    local name
    while read -r _ _ name; do
        cp "$work/get/$name" "$dest/" || { apt_failure="cannot copy $name to $dest"; return 1; }
    done < <(dsc_files "$dsc")
    cp "$dsc" "$dest/" || { apt_failure="cannot copy the .dsc to $dest"; return 1; }
    log "$pkg $version from the $suite archive"
    echo "$dest/$(basename "$dsc")"
}

try_fallback() {
    if [ ! -f "$fallback/SHA256SUMS" ]; then
        fallback_failure="no $fallback/SHA256SUMS"
        return 1
    fi
    local f v best="" best_dsc=""
    for f in "$fallback/${pkg}"_*.dsc; do
        [ -f "$f" ] || continue
        v=$(sed -n 's/^Version: //p' "$f" | head -n 1)
        [ -n "$v" ] && fits "$v" || continue
        if [[ "$want" == *-* ]] && [ "$(noepoch "$v")" = "$(noepoch "$want")" ]; then best=$v; best_dsc=$f; break; fi
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; best_dsc=$f; fi
    done
    if [ -z "$best" ]; then
        fallback_failure="no ${pkg}_*.dsc of version $want in $fallback"
        return 1
    fi
    # Every file, the .dsc included, must match SHA256SUMS (and the tarballs the .dsc's own sums, which
    # dpkg-source checks again when unpacking).
    local names=("$(basename "$best_dsc")") sum name
    while read -r _ _ name; do names+=("$name"); done < <(dsc_files "$best_dsc")
    for name in "${names[@]}"; do
        sum=$(awk -v n="$name" '$2 == n || $2 == "*" n {print $1}' "$fallback/SHA256SUMS")
        if [ -z "$sum" ]; then
            fallback_failure="$name is not listed in $fallback/SHA256SUMS"
            return 1
        fi
        if [ ! -f "$fallback/$name" ] || [ "$(sha256sum <"$fallback/$name" | cut -d' ' -f1)" != "$sum" ]; then
            fallback_failure="$fallback/$name is missing or does not match SHA256SUMS"
            return 1
        fi
    done
    for name in "${names[@]}"; do
        cp "$fallback/$name" "$dest/" || { fallback_failure="cannot copy $name to $dest"; return 1; }
    done
    log "$pkg $best from $fallback (checksums verified)"
    echo "$dest/$(basename "$best_dsc")"
}

apt_failure="" fallback_failure=""
try_apt && exit 0
log "$apt_failure; trying $fallback"
try_fallback && exit 0
log "cannot get the $pkg source package ($want): apt: $apt_failure; fallback: $fallback_failure"
exit 1
