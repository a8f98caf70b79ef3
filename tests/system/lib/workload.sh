#!/bin/sh
# The fixed workload of tests/system/root.sh, run inside a chroot of the
# original root and of the converted copy (read-only, /tmp a fresh tmpfs,
# this directory copied to /tmp/lib). `workload.sh ITEM` runs one item and
# prints what is compared: its standard output, then its standard error,
# then its exit status, each after the item's normalisation. The
# normalisations remove only what is about time or process ids:
#   python-*  (python3 -m test -v, the regression test runner) its header
#             lines "== ..." (the cwd holds the pid) and "Total duration:"
#             go, "0:00:02 load avg: 1.23 ", " in 0.123s"/" in 31.0 sec" and
#             test_threading's "will run for 85.9 usec" lose their times
#   perl      prove's "Files=..., N wallclock secs (...)" keeps Files= and Tests=
#   gdb       "process 1234" loses the number, and addresses in the shared
#             libraries' mappings (0x7ffff7xxxxxx, gdb runs without ASLR)
#             read 0xLIB: a converted library maps a larger span (its new
#             segment), so ld.so places it at another address. The
#             program's own addresses, the stack's, the frames, arguments
#             and source lines are compared as they are
#   openssl-speed  the counts and times (every number with a decimal point,
#             "N sha256's in" and "for Ns:"), as the issue says
# `workload.sh list` prints the items.
set -u
LIB=/tmp/lib
W=/tmp/w
PY_TESTS="test_json test_re test_struct test_zlib test_hashlib test_math test_traceback test_decimal test_exceptions test_ctypes test_datetime test_unicode test_itertools test_sys test_os"

list() {
	echo gcc
	for t in $PY_TESTS; do echo "python-$t"; done
	echo perl git gdb-qsort gdb-abort openssl-speed openssl coreutils
	[ "${WORKLOAD_SEED:-}" = nondet ] && echo seed-nondet
	return 0
}

run_gcc() {
	cd $W && cp $LIB/prog.c . &&
	gcc -O2 -g -c prog.c -o prog.o &&
	gcc -o prog prog.o &&
	gcc -O0 -S -o - prog.c | sha256sum &&
	sha256sum prog.o prog &&
	./prog
}

run_python() { cd $W && python3 -m test -v "$1"; }
norm_python() {
	sed -E -e '/^== /d' -e '/^Total duration: /d' -e 's/^[0-9]+:[0-9]{2}:[0-9]{2} (load avg: [0-9.]+ )?//' \
		-e 's/^(Ran [0-9]+ tests?) in [0-9.]+s$/\1/' -e 's/ in [0-9.]+ (sec|min)$//' \
		-e 's/will run for [0-9.]+ usec/will run for X usec/'
}

run_perl() { cd $W && prove $LIB/perl/*.t; }
norm_perl() { sed -E 's/^(Files=[0-9]+, Tests=[0-9]+,).*/\1/'; }

run_git() {
	export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.org GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.org
	export GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
	git config --global init.defaultBranch main
	git config --global gc.auto 0
	mkdir -p $W/repo && cd $W/repo && git init -q . &&
	seq 1 2000 >numbers && cp $LIB/prog.c . && git add . && git commit -q -m first &&
	sed -i 's/^1[0-9]*$/x&/' numbers && git commit -q -am second &&
	git checkout -q -b topic && echo topic >t && git add t && git commit -q -m topic &&
	git checkout -q main && echo main >m && git add m && git commit -q -m main &&
	git merge -q --no-edit topic && git tag -a v1 -m v1 &&
	git log --graph --format='%H %s' && git diff --stat HEAD~3 && git show --stat v1 &&
	git blame -s numbers | sed -n '1,3p;1000,1002p' &&
	git gc -q --aggressive && git count-objects -v | grep -v size && git fsck --strict &&
	git grep -c 'x1' && git archive --format=tar HEAD | sha256sum &&
	git clone -q --bare . ../bare && git -C ../bare rev-parse HEAD
}

# gdb: a breakpoint reached through libc's qsort, and an abort() in libc;
# libc's debug file (libc6-dbg) is in the root, so frames in libc are named.
gdb_prog() { cd $W && cp $LIB/prog.c . && gcc -O1 -g -o prog prog.c; }
run_gdb_qsort() {
	gdb_prog && gdb -nx -batch -ex 'break leaf' -ex 'run' -ex 'bt' -ex 'info frame' \
		-ex 'finish' -ex 'delete' -ex 'continue' ./prog
}
run_gdb_abort() {
	gdb_prog && gdb -nx -batch -ex 'run abort' -ex 'bt' -ex 'frame 4' -ex 'info locals' ./prog
}
norm_gdb() { sed -E -e 's/process [0-9]+/process N/g' -e 's/0x(0000)?7ffff7[0-9a-f]{6}/0xLIB/g'; }

run_openssl_speed() { openssl speed -seconds 1 -bytes 1024 sha256 aes-128-cbc rsa2048; }
norm_openssl_speed() {
	sed -E -e 's/[0-9]+\.[0-9]+[ks]?/X/g' -e 's/: [0-9]+ /: N /' -e 's/ for [0-9]+s/ for Ns/'
}

run_openssl() {
	cd $W && seq 1 100000 >data &&
	openssl dgst -sha256 -sha512 data && openssl dgst -sha3-256 data &&
	openssl enc -aes-256-cbc -K 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \
		-iv 0f0e0d0c0b0a09080706050403020100 -in data | sha256sum &&
	openssl enc -base64 -in $LIB/prog.c | sha256sum &&
	openssl genpkey -algorithm ED25519 -out key.pem 2>/dev/null && echo genpkey ok &&
	printf 'hello\n' | openssl pkeyutl -sign -rawin -inkey key.pem | wc -c &&
	openssl prime 2305843009213693951 && openssl rand -hex 8 | wc -c
}

run_coreutils() {
	cd $W && seq 1 300000 >rnd && seq 1 50000 | shuf --random-source=rnd >s &&
	sort -n s | uniq -c | sort -k2,2n | tail -n 2 && sort -r s | head -n 3 &&
	sha256sum s && md5sum s && b2sum s | cut -c1-32 && wc s &&
	factor 600851475143 9999999967 && tr a-z A-Z <$LIB/prog.c | cksum &&
	split -l 7000 s part. && ls part.* && cat part.* | cmp - s && echo split ok &&
	date -u -d @1234567890 '+%F %T' && printf '%s\n' c b a | tac | paste -sd, &&
	expr 6 \* 7 && basename /a/b/c.txt .txt && numfmt --to=iec 123456789 &&
	base64 $LIB/prog.c | base64 -d | cmp - $LIB/prog.c && echo base64 ok &&
	od -An -tx1 -N16 $LIB/prog.c && stat -c '%s %F' s && du -b s | cut -f1
}

run_seed_nondet() { od -An -N4 -tu4 /dev/urandom; }

[ "${1:-}" = list ] && { list; exit 0; }
item=${1:?item}
mkdir -p $W
case $item in
	python-*) run=run_python; norm=norm_python; arg=${item#python-} ;;
	*) f=$(echo "$item" | tr - _); run=run_$f; norm=norm_$f; arg= ;;
esac
command -v "$norm" >/dev/null 2>&1 || norm=cat
case $item in gdb-*) norm=norm_gdb ;; esac
$run $arg >/tmp/item.out 2>/tmp/item.err </dev/null
rc=$?
echo "--- stdout"; $norm </tmp/item.out
echo "--- stderr"; $norm </tmp/item.err
echo "--- exit $rc"
