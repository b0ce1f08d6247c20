#!/usr/bin/env bash
# Get one Debian source package (.dsc and its tarballs) into a directory, for scripts/servers.sh and
# scripts/fetch-redismodule-h.sh.
#
# The archive first. apt-get update fetches the Sources indexes of SUITE, SUITE-updates and SUITE-security
# into list and cache directories of this script's own (the machine's apt configuration is never read for
# sources nor written), and apt checks them against the archive's signed Release files. An index names one
# revision per package, and the pool does not always serve it (a point release can name a revision the
# pool has not got yet: a 404), while another suite's index may name another revision. So every revision
# any of these indexes names for PACKAGE is tried, newest first (the exact VERSION asked for first), each
# downloaded with apt's own downloader (apt-helper) and every file checked against the SHA256 and size
# that index publishes: a file that does not match is refused, and the next revision is tried.
#
# Then the fallback: the copies kept in ../shared/debian-src/ beside the repository (RL_DEBIAN_SRC
# overrides), checked against their SHA256SUMS.
#
# Usage: scripts/debian-source.sh SUITE PACKAGE VERSION DESTDIR
#   VERSION  a Debian version (7.0.15-1~deb12u10, epoch optional): exactly that one, or else any of the
#            same upstream version; or an upstream series (8.0): the newest 8.0 or 8.0.x.
#   Prints the path of the .dsc in DESTDIR; unpack it with dpkg-source -x.
#   Exit status: 0 done; 3 neither the archive nor a fallback had it and the fallback folder does not
#   exist (the last line on stderr, "debian-source: unavailable: REASON", says why: scripts/servers.sh
#   may then skip that server); 1 any other failure, among them a fallback folder that exists but does
#   not hold the package or does not match its SHA256SUMS; 2 a usage error.
# scripts/debian-source.sh --fallback-dir prints the fallback folder it would use.
#
# RL_DEBIAN_MIRROR  the archive's host, holding debian/ and debian-security/ (default http://deb.debian.org)
# RL_DEBIAN_UNSIGNED=1  take the mirror's indexes unsigned: only for the tests' fake archive, so only
#                   accepted with a mirror on http://127.0.0.1
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
fallback=$(realpath -m "${RL_DEBIAN_SRC:-$repo/../shared/debian-src}")
if [ "${1:-}" = --fallback-dir ]; then
    echo "$fallback"
    exit 0
fi
suite=${1:-}; pkg=${2:-}; want=${3:-}; dest=${4:-}
if [ -z "$suite" ] || [ -z "$pkg" ] || [ -z "$want" ] || [ -z "$dest" ]; then
    echo "usage: $0 SUITE PACKAGE VERSION DESTDIR | --fallback-dir" >&2
    exit 2
fi
mirror=${RL_DEBIAN_MIRROR:-http://deb.debian.org}
mirror=${mirror%/}
unsigned=${RL_DEBIAN_UNSIGNED:-0}
log() { echo "debian-source: $*" >&2; }
if [ "$unsigned" = 1 ] && ! [[ "$mirror" =~ ^http://127\.0\.0\.1(:[0-9]+)?$ ]]; then
    log "RL_DEBIAN_UNSIGNED=1 is only for a test archive on http://127.0.0.1, not RL_DEBIAN_MIRROR=$mirror"
    exit 2
fi

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
is_exact() { [[ "$want" == *-* ]] && [ "$(noepoch "$1")" = "$(noepoch "$want")" ]; }
# Should version $1 be tried before version $2? The exact one asked for first, then newest first.
before() {
    if is_exact "$1"; then return 0; fi
    if is_exact "$2"; then return 1; fi
    dpkg --compare-versions "$1" gt "$2"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# The files a .dsc names (its Checksums-Sha256 section): "sha256 size name" lines.
dsc_files() { sed -n '/^Checksums-Sha256:/,/^[^ ]/{/^ /p}' "$1"; }
sha256_of() { sha256sum <"$1" | cut -d' ' -f1; }

apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
          -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
          -o "Acquire::http::Proxy::127.0.0.1=DIRECT")

# Fetch the three suites' Sources indexes (apt verifies them against the signed Release files).
update_indexes() {
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/parts"
    local opts=""
    [ "$unsigned" = 1 ] && opts="[trusted=yes] "
    cat >"$work/sources.list" <<LIST
deb-src ${opts}${mirror}/debian ${suite} main
deb-src ${opts}${mirror}/debian ${suite}-updates main
deb-src ${opts}${mirror}/debian-security ${suite}-security main
LIST
    if ! apt-get "${apt_opts[@]}" -qq update >"$work/update.log" 2>&1; then
        archive_failure="apt-get update of $suite deb-src failed: $(grep -E '^(E|W):' "$work/update.log" |
            head -n 2 | tr '\n' ' ')"
        return 1
    fi
}

# Every revision of $pkg the fetched indexes name, one "version<TAB>release<TAB>pool URL<TAB>id" line
# each, with its files (the index's Checksums-Sha256: "sha256 size name") in $work/cand/id.
list_candidates() {
    mkdir -p "$work/cand"
    local file repo release trusted
    while IFS=$'\t' read -r file repo release trusted; do
        [ -f "$file" ] || continue
        # apt marks an index it could not verify; unsigned ones are only taken in the tests' mode.
        [ "$trusted" = yes ] || [ "$unsigned" = 1 ] || continue
        /usr/lib/apt/apt-helper cat-file "$file" | awk -v pkg="$pkg" -v out="$work/cand/$release" '
            function flush() {
                if (name == pkg && version != "" && dir != "" && files != "") {
                    n++
                    print version "\t" dir "\t" n
                    printf "%s", files > (out "." n)
                    close(out "." n)
                }
                name = ""; version = ""; dir = ""; files = ""; insums = 0
            }
            /^$/ { flush(); next }
            /^[^ \t]/ { insums = 0 }
            /^Package:/ { name = $2 }
            /^Version:/ { version = $2 }
            /^Directory:/ { dir = $2 }
            /^Checksums-Sha256:/ { insums = 1; next }
            insums && /^[ \t]/ { files = files $1 " " $2 " " $3 "\n" }
            END { flush() }' |
            while IFS=$'\t' read -r version dir k; do
                printf '%s\t%s\t%s%s\t%s\n' "$version" "$release" "$repo" "$dir" "$release.$k"
            done
    done < <(apt-get "${apt_opts[@]}" indextargets \
        --format '$(FILENAME)	$(REPO_URI)	$(RELEASE)	$(TRUSTED)' 'Created-By: Sources')
}

# The candidates that fit, in the order to try them: exact first, then newest first (a few lines at most).
order_candidates() {
    local line sorted=() placed i
    while IFS= read -r line; do
        fits "${line%%$'\t'*}" || continue
        placed=0
        for i in "${!sorted[@]}"; do
            if before "${line%%$'\t'*}" "${sorted[$i]%%$'\t'*}"; then
                sorted=("${sorted[@]:0:$i}" "$line" "${sorted[@]:$i}")
                placed=1
                break
            fi
        done
        [ "$placed" -eq 1 ] || sorted+=("$line")
    done
    [ ${#sorted[@]} -eq 0 ] || printf '%s\n' "${sorted[@]}"
}

# Download one candidate's files into $work/get, each checked against the index's SHA256 and size.
# Sets why (one short reason) when it cannot.
fetch_candidate() {
    local version=$1 pool=$2 id=$3 dsc sum size name got
    dsc="${pkg}_$(noepoch "$version").dsc"
    rm -rf "$work/get"
    mkdir -p "$work/get"
    if [ -z "$(awk -v n="$dsc" '$3 == n' "$work/cand/$id")" ]; then
        why="the index lists no $dsc"
        return 1
    fi
    # The .dsc first: the likeliest 404, and the smallest.
    while read -r sum size name; do
        if ! /usr/lib/apt/apt-helper "${apt_opts[@]}" download-file "$pool/$name" "$work/get/$name" \
            >"$work/fetch.log" 2>&1; then
            why="$name: $(grep -E '^E: Failed to fetch' "$work/fetch.log" | head -n 1 |
                sed -E 's/^E: Failed to fetch [^ ]+ +//; s/ *\[IP:.*//' | tr -s ' ')"
            [ "$why" != "$name: " ] || why="$name: $(grep -E '^E:' "$work/fetch.log" | head -n 1)"
            return 1
        fi
        got=$(sha256_of "$work/get/$name")
        if [ "$got" != "$sum" ] || [ "$(stat -c %s "$work/get/$name")" != "$size" ]; then
            why="$name does not match the SHA256 and size the index publishes (refused)"
            return 1
        fi
    done < <(awk -v n="$dsc" '$3 == n' "$work/cand/$id"; awk -v n="$dsc" '$3 != n' "$work/cand/$id")
    fetched_dsc="$work/get/$dsc"
}

try_archive() {
    update_indexes || return 1
    local candidates version release pool id tried=()
    candidates=$(list_candidates | order_candidates)
    if [ -z "$candidates" ]; then
        archive_failure="no $suite index names a $pkg source of version $want$(
            grep -E '^(W|E): Failed to fetch' "$work/update.log" | head -n 1 | sed 's/^/ (/; s/$/)/')"
        return 1
    fi
    while IFS=$'\t' read -r version release pool id; do
        # The same file in two suites' indexes (one pool) is tried once.
        [[ " ${tried[*]} " == *" $pool/$version "* ]] && continue
        tried+=("$pool/$version")
        if fetch_candidate "$version" "$pool" "$id"; then
            local name
            while read -r _ _ name; do
                cp "$work/get/$name" "$dest/" || { archive_failure="cannot copy $name to $dest"; return 1; }
            done <"$work/cand/$id"
            log "$pkg $version from the $release index's pool (SHA256 verified against that index)"
            echo "$dest/$(basename "$fetched_dsc")"
            return 0
        fi
        log "$pkg $version ($release): $why"
        attempts+="${attempts:+; }$version ($release): $why"
    done <<<"$candidates"
    archive_failure="no revision the $suite indexes name could be had: $attempts"
    return 1
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
        if is_exact "$v"; then best=$v; best_dsc=$f; break; fi
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
        if [ ! -f "$fallback/$name" ] || [ "$(sha256_of "$fallback/$name")" != "$sum" ]; then
            fallback_failure="$fallback/$name is missing or does not match SHA256SUMS (refused)"
            return 1
        fi
    done
    for name in "${names[@]}"; do
        cp "$fallback/$name" "$dest/" || { fallback_failure="cannot copy $name to $dest"; return 1; }
    done
    log "$pkg $best from $fallback (checksums verified)"
    echo "$dest/$(basename "$best_dsc")"
}

archive_failure="" fallback_failure="" attempts=""
try_archive && exit 0
log "archive: $archive_failure"
if [ ! -d "$fallback" ]; then
    log "unavailable: Debian's archive gave no $pkg $want source (${attempts:-$archive_failure}), and there is no fallback folder $fallback"
    exit 3
fi
log "trying $fallback"
try_fallback && exit 0
log "cannot get the $pkg source package ($want): archive: $archive_failure; fallback: $fallback_failure"
exit 1
