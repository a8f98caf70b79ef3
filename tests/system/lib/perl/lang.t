# The interpreter itself: regexes, sprintf, pack, sort, closures, eval/die
# with Carp stacks, local, tie, string repetition, sprintf vectors.
use strict;
use warnings;
use Test::More;
use Carp qw(longmess croak);
use POSIX qw(floor ceil fmod strftime);

my @w = ('pear', 'Apple', 'fig', 'banana');
is(join(',', sort { lc $a cmp lc $b } @w), 'Apple,banana,fig,pear', 'sort');
is(join(',', map { length } @w), '4,5,3,6', 'map');
ok('2026-01-02' =~ /^(\d{4})-(\d\d)-(\d\d)$/ && $2 == 1, 'regex captures');
(my $s = 'a.b.c') =~ s/\./::/g;
is($s, 'a::b::c', 's///g');
is(join('|', 'x=1, y=22 ,z=333' =~ /(\w)=(\d+)/g), 'x|1|y|22|z|333', 'list match');
is(sprintf('%05.1f|%-4s|%x|%e', 3.14159, 'ab', 255, 12345.678), '003.1|ab  |ff|1.234568e+04', 'sprintf');
is(sprintf('%vd', v1.22.333), '1.22.333', 'sprintf %vd');
is(unpack('H*', pack('N n C a3', 0xdeadbeef, 513, 7, 'xy')), 'deadbeef0201077879' . '00', 'pack');
is(floor(-2.5) + ceil(2.1) + fmod(7, 3), 1, 'POSIX math');
is(strftime('%Y-%m-%d %H:%M:%S', gmtime(86400 * 365)), '1971-01-01 00:00:00', 'strftime');
my @subs = map { my $n = $_; sub { $n * $_[0] } } 1 .. 3;
is(join(',', map { $_->(10) } @subs), '10,20,30', 'closures');
sub deep { my $n = shift; return $n ? deep($n - 1) : longmess('here') }
my $m = deep(3);
my @frames = $m =~ /main::deep/g;
is(scalar @frames, 3, 'Carp::longmess frames');
eval { sub { croak 'bad thing' }->() };
like($@, qr/^bad thing at /, 'croak');
eval { die { code => 42 } };
is($@->{code}, 42, 'die with a reference');
our $g = 1;
sub peek { $g }
sub with_local { local $g = 2; peek() }
is(with_local() . peek(), '21', 'local');
{
	package Counter;
	sub TIESCALAR { my $n = 0; bless \$n }
	sub FETCH { ${ $_[0] }++ }
}
tie my $c, 'Counter';
is("$c$c$c", '012', 'tie');
is('ab' x 3, 'ababab', 'x');
my %h = map { $_ => length } qw(one three five);
is(join(',', map { "$_=$h{$_}" } sort keys %h), 'five=4,one=3,three=5', 'hash');
my $fact; $fact = sub { my $n = shift; $n <= 1 ? 1 : $n * $fact->($n - 1) };
is($fact->(20), 2432902008176640000, 'recursion');
done_testing();
