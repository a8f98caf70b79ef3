#!/usr/bin/perl
# debhelper sequence addon "sframe": `Build-Depends: dh-sequence-sframe`
# (or `dh $@ --with sframe`) runs dh_sframe right after dh_strip: binutils
# never rewrites a converted file (strip and objcopy --only-keep-debug
# mishandle some of the layouts eh2sframe uses), dh_sframe updates the
# dbgsym files dh_strip cut off to match, and dh_makeshlibs /
# dh_shlibdeps see the converted files.
use warnings;
use strict;
use Debian::Debhelper::Dh_Lib;

insert_after('dh_strip', 'dh_sframe');

1;
