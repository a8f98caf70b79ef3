#!/usr/bin/env bash
# -o OUT where OUT is not a plain new or regular file, as cp treats it:
#   - a device (-o /dev/null as root replaced the node with a regular
#     file before), a FIFO, /dev/stdout on a pipe: written into, the node
#     left as it was, the bytes those of -o to a regular file;
#   - a symbolic link to a regular file: the file written, the link kept;
#     /dev/stdout redirected to a file: that file written, /dev/stdout
#     still a link;
#   - a link to nothing, a directory: a one-line error naming OUT, exit
#     1, nothing created; an empty name: a usage error (the library's
#     eh2s_write too), nothing created;
#   - an input with nothing to do (its exact copy), and the library's
#     eh2s_write, the same;
#   - the input never changes.
set -u
cd "$(dirname "$0")/../.."
TREE=$PWD
E2S=${E2S:-$PWD/eh2sframe}
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/out_special.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
kind() { stat -c %F "$1" 2>/dev/null || echo none; }

IN=$T/in
cp /usr/bin/ls "$IN"
sum0=$(sha256sum <"$IN")
"$E2S" -q "$IN" -o "$T/ref" || { echo "reference conversion failed"; exit 1; }

# ---- a character device (mknod needs CAP_MKNOD)
if mknod "$T/null" c 1 3 2>/dev/null; then
  "$E2S" -q "$IN" -o "$T/null" && ok || fail "-o to a device: exit $?"
  [ "$(kind "$T/null")" = "character special file" ] && ok ||
    fail "the device node became a $(kind "$T/null")"
  [ "$(stat -c %t:%T "$T/null")" = "1:3" ] && ok || fail "the device node changed"
  # Nothing to do (already converted): the exact copy, likewise.
  "$E2S" -q "$T/ref" -o "$T/null" && ok || fail "copy to a device: exit $?"
  [ "$(kind "$T/null")" = "character special file" ] && ok ||
    fail "the copy made the device node a $(kind "$T/null")"
else
  echo "note: cannot mknod here: the device case is not checked"
fi

# ---- a FIFO, read as it is written
mkfifo "$T/fifo"
timeout 30 cat "$T/fifo" >"$T/from_fifo" &
reader=$!
"$E2S" -q "$IN" -o "$T/fifo" && ok || fail "-o to a FIFO: exit $?"
wait $reader
[ "$(kind "$T/fifo")" = fifo ] && ok || fail "the FIFO became a $(kind "$T/fifo")"
cmp -s "$T/from_fifo" "$T/ref" && ok || fail "the FIFO's bytes differ from -o's"

# ---- /dev/stdout: a pipe, then a redirection to a file
before=$(kind /dev/stdout) link=$(readlink /dev/stdout)
"$E2S" -q "$IN" -o /dev/stdout | cat >"$T/from_pipe"
[ "${PIPESTATUS[0]}" = 0 ] && ok || fail "-o /dev/stdout into a pipe: exit ${PIPESTATUS[0]}"
cmp -s "$T/from_pipe" "$T/ref" && ok || fail "the pipe's bytes differ from -o's"
"$E2S" -q "$IN" -o /dev/stdout >"$T/redirected" && ok || fail "-o /dev/stdout into a file: exit $?"
cmp -s "$T/redirected" "$T/ref" && ok || fail "the redirected file's bytes differ from -o's"
[ "$(kind /dev/stdout)" = "$before" ] && [ "$(readlink /dev/stdout)" = "$link" ] && ok ||
  fail "/dev/stdout was $before ($link), is $(kind /dev/stdout) ($(readlink /dev/stdout))"

# ---- a symbolic link to a regular file
echo old >"$T/target"
ln -s "$T/target" "$T/link"
"$E2S" -q "$IN" -o "$T/link" && ok || fail "-o to a link: exit $?"
[ -L "$T/link" ] && [ "$(readlink "$T/link")" = "$T/target" ] && ok || fail "the link was replaced"
cmp -s "$T/target" "$T/ref" && ok || fail "the link's target does not hold the output"

# ---- a link to nothing, a directory: errors, nothing made
ln -s "$T/nothing" "$T/dangling"
"$E2S" -q "$IN" -o "$T/dangling" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "$T/dangling" "$T/err" && ok ||
  fail "a link to nothing: exit $rc, said: $(cat "$T/err")"
[ ! -e "$T/nothing" ] && [ -L "$T/dangling" ] && ok || fail "a link to nothing: something was made"
mkdir "$T/dir"
"$E2S" -q "$IN" -o "$T/dir" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "$T/dir" "$T/err" && ok ||
  fail "a directory: exit $rc, said: $(cat "$T/err")"
[ -z "$(ls -A "$T/dir")" ] && [ -z "$(find "$T" -maxdepth 1 -name '.*e2s*')" ] && ok ||
  fail "a directory: left $(ls -A "$T/dir") $(find "$T" -maxdepth 1 -name '.*e2s*')"

# ---- the library: eh2s_write into a FIFO and through a link
LIB=$TREE/build/libeh2sframe.a
if [ -f "$LIB" ] && [ -f "$TREE/include/eh2sframe.h" ]; then
  cat >"$T/w.c" <<'C'
#include <eh2sframe.h>
#include <stdio.h>

/* w IN OUT: open IN, convert it, eh2s_write it to OUT. */
int main(int argc, char **argv)
{
	eh2s_file *f = NULL;
	eh2s_error err;
	if (argc != 3)
		return 2;
	if (eh2s_open(argv[1], &f, &err) != EH2S_OK ||
	    eh2s_convert(f, NULL, &err) != EH2S_OK ||
	    eh2s_write(f, argv[2], -1, &err) != EH2S_OK) {
		fprintf(stderr, "%s\n", err.message);
		eh2s_close(f);
		return 1;
	}
	eh2s_close(f);
	return 0;
}
C
  if gcc -std=c11 -Wall -Wextra -Werror -I"$TREE/include" -o "$T/w" "$T/w.c" \
       "$LIB" -lz -llzma 2>"$T/cc.err"; then
    timeout 30 cat "$T/fifo" >"$T/lib_fifo" &
    reader=$!
    "$T/w" "$IN" "$T/fifo" && ok || fail "eh2s_write to a FIFO: exit $?"
    wait $reader
    [ "$(kind "$T/fifo")" = fifo ] && ok || fail "eh2s_write made the FIFO a $(kind "$T/fifo")"
    "$T/w" "$IN" "$T/link" && ok || fail "eh2s_write through a link: exit $?"
    [ -L "$T/link" ] && ok || fail "eh2s_write replaced the link"
    cmp -s "$T/lib_fifo" "$T/target" && ok || fail "eh2s_write: the FIFO's and the file's bytes differ"
    (cd "$T/dir" && "$T/w" "$IN" "") 2>"$T/err"; rc=$?
    [ $rc = 1 ] && grep -q 'empty output file name' "$T/err" && [ -z "$(ls -A "$T/dir")" ] && ok ||
      fail "eh2s_write to an empty name: exit $rc, said $(cat "$T/err"), left $(ls -A "$T/dir")"
  else
    fail "the eh2s_write program does not build: $(head -3 "$T/cc.err")"
  fi
else
  echo "note: no $LIB: eh2s_write is not checked"
fi

[ "$(sha256sum <"$IN")" = "$sum0" ] && ok || fail "the input changed"
echo "out_special: $checks passed, $fails failed"
[ $fails = 0 ]
