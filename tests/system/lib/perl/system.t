# Files, processes and threads through the converted libc and libperl.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Spec;
use File::Path qw(make_path remove_tree);
use File::Find;
use Cwd qw(getcwd abs_path);
use IO::Handle;
use Config;

my $dir = tempdir(CLEANUP => 1);
make_path("$dir/a/b/c");
for my $f (qw(a/one a/b/two a/b/c/three)) {
	open my $fh, '>', "$dir/$f" or die;
	print $fh "$f\n" x 3;
	close $fh;
}
my @found;
find(sub { push @found, $File::Find::name =~ s/^\Q$dir\E\///r if -f }, $dir);
is(join(',', sort @found), 'a/b/c/three,a/b/two,a/one', 'File::Find');
is(-s "$dir/a/one", 18, 'file size');
open my $in, '<', "$dir/a/b/two" or die;
my @lines = <$in>;
is(scalar @lines, 3, 'read lines');
is(abs_path(File::Spec->catdir($dir, 'a', 'b', '..')), abs_path("$dir/a"), 'abs_path');
my $out = `echo hello from a child`;
is($out, "hello from a child\n", 'backticks');
my $pid = fork();
if ($pid == 0) { exit 7 }
waitpid($pid, 0);
is($? >> 8, 7, 'fork and exit status');
pipe(my $r, my $w) or die;
if (!fork()) { close $r; print $w "through a pipe\n"; exit 0 }
close $w;
is(scalar <$r>, "through a pipe\n", 'pipe');
wait;
SKIP: {
	skip 'perl without threads', 1 unless $Config{useithreads};
	require threads;
	my @t = map { my $n = $_; threads->create(sub { my $s = 0; $s += $_ for 1 .. $n * 1000; $s }) } 1 .. 4;
	is(join(',', map { $_->join } @t), '500500,2001000,4501500,8002000', 'threads');
}
remove_tree("$dir/a");
ok(!-e "$dir/a", 'remove_tree');
done_testing();
