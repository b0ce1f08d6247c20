#!/usr/bin/env bash
# Build the Debian package of the module, redis-ratelimit_<version>_<arch>.deb, with Debian's own tools
# only: dpkg-shlibdeps computes Depends from the libraries the .so really links, and dpkg-deb
# --root-owner-group builds the archive (every file owned by root, without fakeroot or debhelper).
#
#   scripts/deb/build.sh MODULE OUTDIR    build OUTDIR/redis-ratelimit_<version>_<arch>.deb from MODULE
#                                         (build/ratelimit.so, as `make` builds it); prints the .deb's path
#   scripts/deb/build.sh --path OUTDIR    print that path only, building nothing
#
# The version is the module's own: RL_MODULE_VERSION in module/ratelimit.c (10500 -> 1.5.0), so the package
# and `MODULE LIST` always agree; the architecture is `dpkg --print-architecture`. A native package: the
# packaging lives in the project, there is no Debian revision.
#
# What goes in (the files come from this directory and the project's docs):
#   /usr/lib/redis/modules/ratelimit.so          the module, stripped as dh_strip strips a shared object,
#                                                mode 0755 (Redis refuses a module it cannot execute)
#   /usr/share/doc/redis-ratelimit/              README.md, docs/*.md and their images, changelog.gz,
#                                                copyright (machine-readable)
#   /usr/share/doc/redis-ratelimit/examples/ratelimit.conf   the loadmodule line
#   /usr/share/lintian/overrides/redis-ratelimit             lintian's overrides, each with its reason
# No -dbgsym package: the stripped .so keeps its GNU build ID, and build/ratelimit.so of the same commit
# (built with -g) is its debug file, for gdb's `symbol-file` or /usr/lib/debug/.build-id/.
#
# Reproducible: file times, the changelog's date and the archive's times come from SOURCE_DATE_EPOCH (by
# default the time of the last git commit), and gzip stores no name or time. Maintainer and changelog
# signature: DEB_MAINTAINER ("Name <email>"), by default the author of the last git commit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
package=redis-ratelimit

usage() {
    echo "usage: $0 MODULE OUTDIR | --path OUTDIR" >&2
    exit 2
}
die() {
    echo "deb: $*" >&2
    exit 1
}

# 10500 -> 1.5.0: major * 10000 + minor * 100 + patch, as the module reports it to Redis.
module_version() {
    local code
    code=$(sed -n 's/^#define RL_MODULE_VERSION \([0-9][0-9]*\)$/\1/p' "$root/module/ratelimit.c")
    [ -n "$code" ] || die "no '#define RL_MODULE_VERSION <number>' line in module/ratelimit.c"
    echo "$((code / 10000)).$((code / 100 % 100)).$((code % 100))"
}

deb_path() { # deb_path OUTDIR
    echo "$1/${package}_$(module_version)_$(dpkg --print-architecture).deb"
}

# A template of this directory without its opening comment block, its @NAME@ fields filled (a value may
# hold any of sed's special characters: a Depends of alternatives holds '|').
fill() { # fill TEMPLATE NAME=VALUE...
    local template=$1 sed_args=() pair value
    shift
    for pair in "$@"; do
        value=$(printf '%s' "${pair#*=}" | sed -e 's/[\\|&]/\\&/g')
        sed_args+=(-e "s|@${pair%%=*}@|${value}|g")
    done
    sed -e '1,/^[^#]/{/^#/d}' "${sed_args[@]}" "$here/$template"
}

# Installed-Size as dpkg-gencontrol counts it: each file's size in KiB rounded up, one per directory.
installed_size() { # installed_size DIR (without its DEBIAN/)
    find "$1" -path "$1/DEBIAN" -prune -o -mindepth 1 \( -type f -printf '%s\n' -o -printf '1024\n' \) |
        awk '{ kib += int(($1 + 1023) / 1024) } END { print kib }'
}

# Depends from the .so's DT_NEEDED libraries, by dpkg-shlibdeps. It wants a debian/control naming the
# package, and the package's tree at debian/<package>/, as a source package would have them.
shlib_depends() { # shlib_depends WORKDIR SO (SO under WORKDIR/debian/<package>/)
    printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$package" "$package" >"$1/debian/control"
    (cd "$1" && dpkg-shlibdeps -O "${2#"$1"/}") | sed -n 's/^shlibs:Depends=//p'
}

# Policy 12.3: documentation over 4 KiB is gzipped (-9n: no name, no time), images are not.
install_doc() { # install_doc SOURCE DEST
    install -D -m 0644 "$1" "$2"
    case "$2" in *.png) return ;; esac
    [ "$(stat -c %s "$2")" -le 4096 ] || gzip -9nf "$2"
}

[ $# -eq 2 ] || usage
if [ "$1" = --path ]; then
    deb_path "$2"
    exit 0
fi
module=$1 outdir=$2
[ -f "$module" ] || die "module $module is missing (run make)"
for tool in dpkg dpkg-deb dpkg-shlibdeps strip; do
    command -v "$tool" >/dev/null || die "$tool is missing (run scripts/deps.sh deb)"
done
version=$(module_version)
arch=$(dpkg --print-architecture)
deb=$(deb_path "$outdir")
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
maintainer=${DEB_MAINTAINER:-$(git -C "$root" log -1 --format='%an <%ae>' 2>/dev/null || true)}
[ -n "$maintainer" ] || die "no maintainer: set DEB_MAINTAINER='Name <email>' (no git history here)"

work="$outdir/deb"
tree="$work/debian/$package"
docdir="$tree/usr/share/doc/$package"
rm -rf "$work"
mkdir -p "$tree/DEBIAN" "$docdir"

# The module, stripped of what a debugger alone needs (the options dh_strip uses for a shared object), and
# executable: Redis 7.0 and later refuse to load a module file without the execute permission (the reason
# of the lintian override).
install -d "$tree/usr/lib/redis/modules"
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
    -o "$tree/usr/lib/redis/modules/ratelimit.so" "$module"
chmod 0755 "$tree/usr/lib/redis/modules/ratelimit.so"

install_doc "$root/README.md" "$docdir/README.md"
for doc in "$root"/docs/*.md "$root"/docs/*.png; do
    install_doc "$doc" "$docdir/docs/${doc##*/}"
done
install -D -m 0644 "$here/ratelimit.conf" "$docdir/examples/ratelimit.conf"
install -D -m 0644 "$here/lintian-overrides" "$tree/usr/share/lintian/overrides/$package"
fill copyright >"$docdir/copyright"
fill changelog VERSION="$version" MAINTAINER="$maintainer" \
    DATE="$(date -u -R -d "@$SOURCE_DATE_EPOCH")" >"$docdir/changelog"
gzip -9nf "$docdir/changelog"
chmod 0644 "$docdir/copyright" "$docdir/changelog.gz"

depends=$(shlib_depends "$work" "$tree/usr/lib/redis/modules/ratelimit.so")
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependency for the module"
fill control VERSION="$version" ARCH="$arch" MAINTAINER="$maintainer" \
    INSTALLED_SIZE="$(installed_size "$tree")" DEPENDS="$depends" >"$tree/DEBIAN/control"
(cd "$tree" && find usr -type f | LC_ALL=C sort | xargs -d '\n' md5sum) >"$tree/DEBIAN/md5sums"
chmod 0644 "$tree/DEBIAN/control" "$tree/DEBIAN/md5sums"

# Directories 0755 and files as installed above, whatever the umask; one time for every file.
find "$tree" -type d -exec chmod 0755 {} +
find "$tree" -exec touch --no-dereference -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$outdir"
dpkg-deb --root-owner-group -Zxz --build "$tree" "$deb" >/dev/null
echo "$deb"
