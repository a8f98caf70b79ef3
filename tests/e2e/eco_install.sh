#!/usr/bin/env bash
# make install into a temporary DESTDIR: binary, libraries (soname and
# symlinks), header, pkg-config file, man page. A small program built with
# `pkg-config --cflags --libs eh2sframe` against the installed copy (shared,
# then static) converts /bin/ls through the public API; its counts must
# match readelf's. The man page renders without warnings. make uninstall
# removes everything again.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d /tmp/eco_install.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
P=/opt/eh2sframe-test D=$T/root
# The version and soname, from the one place that states them.
ver() { sed -n "s/^#define EH2S_VERSION_$1 \([0-9]*\)$/\1/p" include/eh2sframe.h; }
MAJ=$(ver MAJOR) V=$(ver MAJOR).$(ver MINOR).$(ver PATCH)
[ -n "$MAJ" ] && ok || fail "no version in include/eh2sframe.h"
# The Debian packaging's changelog names the same version (check-distro
# builds the package from it).
cv=$(dpkg-parsechangelog -l contrib/debian/package/debian/changelog -S Version 2>/dev/null)
[ "$cv" = "$V" ] && ok || fail "contrib/debian/package/debian/changelog says '$cv', the header $V"
make --no-print-directory -s install PREFIX=$P DESTDIR="$D" >"$T/make.log" 2>&1 ||
  { cat "$T/make.log"; echo "FAIL: make install"; exit 1; }
for f in bin/eh2sframe lib/libeh2sframe.a lib/libeh2sframe.so.$V include/eh2sframe.h \
         share/man/man1/eh2sframe.1 lib/pkgconfig/eh2sframe.pc; do
  [ -f "$D$P/$f" ] && ok || fail "missing $f"
done
[ "$(readlink "$D$P/lib/libeh2sframe.so.$MAJ")" = "libeh2sframe.so.$V" ] && ok || fail "soname link"
[ "$(readlink "$D$P/lib/libeh2sframe.so")" = "libeh2sframe.so.$MAJ" ] && ok || fail "dev link"
readelf -d "$D$P/lib/libeh2sframe.so.$V" | grep -q "SONAME.*\[libeh2sframe.so.$MAJ\]" && ok || fail "SONAME"
# Only the public API is exported.
if nm -D --defined-only "$D$P/lib/libeh2sframe.so.$MAJ" | awk '$2 == "T" {print $3}' | grep -v '^eh2s_' | grep -q .; then
  fail "non-API symbols exported"; else ok; fi
"$D$P/bin/eh2sframe" --version | grep -qx "eh2sframe $V" && ok || fail "installed binary"
# The man page names no version of its own (the binary says it).
grep -q '^\.TH EH2SFRAME 1 ' "$D$P/share/man/man1/eh2sframe.1" && ok || fail "man page .TH"

export PKG_CONFIG_PATH=$D$P/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
[ "$(pkg-config --modversion eh2sframe)" = "$V" ] && ok || fail "pkg-config --modversion"
cat > "$T/use.c" <<'C'
#include <eh2sframe.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	eh2s_file *f;
	eh2s_error err;
	eh2s_summary s;
	eh2s_verify_result v;
	eh2s_summary_init(&s);
	eh2s_verify_result_init(&v);
	if (eh2s_open(argv[1], &f, &err) || eh2s_convert(f, NULL, &err) ||
	    eh2s_get_summary(f, &s, &err) || eh2s_verify(f, &v, &err) ||
	    eh2s_write(f, argv[2], -1, &err)) {
		fprintf(stderr, "use: %s: %s\n", argv[1], err.message);
		return 1;
	}
	printf("%s functions=%zu converted=%zu match=%zu mismatch=%zu\n",
	       eh2s_version(), s.functions, s.converted, v.match, v.mismatch);
	eh2s_close(f);
	return argc > 3 ? 0 : 0;
}
C
# shellcheck disable=SC2046
gcc -Wall -Werror -o "$T/use" "$T/use.c" $(pkg-config --cflags --libs eh2sframe) || fail "build against the shared library"
readelf -d "$T/use" | grep -q "NEEDED.*libeh2sframe.so.$MAJ\]" && ok || fail "not linked to libeh2sframe.so.$MAJ"
out=$(LD_LIBRARY_PATH=$D$P/lib "$T/use" /bin/ls "$T/ls.sf") && ok || fail "run shared: $out"
fdes=$(readelf --debug-dump=frames /bin/ls | grep -c ' FDE cie=')
echo "shared: $out (readelf FDEs: $fdes)"
echo "$out" | grep -q "^$V functions=$fdes converted=[0-9]* match=[0-9]* mismatch=0" && ok || fail "counts: $out"
conv=$(echo "$out" | sed 's/.*converted=\([0-9]*\).*/\1/')
echo "$out" | grep -q "match=$conv " && ok || fail "match != converted"
"$D$P/bin/eh2sframe" --verify "$T/ls.sf" >/dev/null && ok || fail "CLI --verify of the API output"
"$D$P/bin/eh2sframe" -q /bin/ls -o "$T/ls.cli" && cmp -s "$T/ls.cli" "$T/ls.sf" && ok || fail "API and CLI outputs differ"
gcc -Wall -Werror -static -o "$T/use-static" "$T/use.c" $(pkg-config --static --cflags --libs eh2sframe) 2>"$T/static.err"
if [ -x "$T/use-static" ]; then
  out2=$("$T/use-static" /bin/ls "$T/ls2.sf") && [ "$out2" = "$out" ] && ok || fail "static: $out2"
else
  echo "note: no fully static link (libz static archive missing?): $(head -c 200 "$T/static.err")"
  gcc -Wall -Werror -o "$T/use-a" "$T/use.c" -I"$D$P/include" "$D$P/lib/libeh2sframe.a" $(pkg-config --libs-only-l --static zlib liblzma) &&
    out2=$("$T/use-a" /bin/ls "$T/ls2.sf") && [ "$out2" = "$out" ] && ok || fail "libeh2sframe.a: $out2"
fi

# The man page, installed copy: renders without warnings.
w=$(MANWIDTH=80 man --warnings -l "$D$P/share/man/man1/eh2sframe.1" 2>&1 >/dev/null)
[ -z "$w" ] && ok || fail "man warnings: $w"
w=$(groff -ww -z -man "$D$P/share/man/man1/eh2sframe.1" 2>&1)
[ -z "$w" ] && ok || fail "groff warnings: $w"
# Every long option of --help is documented in the man page.
for opt in $("$D$P/bin/eh2sframe" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
  grep -qF -- "${opt//-/\\-}" "$D$P/share/man/man1/eh2sframe.1" && ok || fail "man page lacks $opt"
done

make --no-print-directory -s uninstall PREFIX=$P DESTDIR="$D" >/dev/null 2>&1
left=$(find "$D" -type f -o -type l)
[ -z "$left" ] && ok || fail "uninstall left: $left"
echo "eco_install: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
