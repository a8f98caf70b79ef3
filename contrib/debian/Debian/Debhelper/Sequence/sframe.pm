#!/usr/bin/perl
# debhelper sequence addon "sframe": `Build-Depends: dh-sequence-sframe`
# (or `dh $@ --with sframe`) runs dh_sframe right after dh_strip, so the
# dbgsym packages are split off first and dh_makeshlibs / dh_shlibdeps
# see the converted files.
use warnings;
use strict;
use Debian::Debhelper::Dh_Lib;

insert_after('dh_strip', 'dh_sframe');

1;
