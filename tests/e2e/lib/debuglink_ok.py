#!/usr/bin/env python3
"""debuglink_ok.py FILE DEBUG: exit 0 when the CRC in FILE's
.gnu_debuglink is the CRC-32 of DEBUG (what gdb checks when it finds a
debug file by that name). Reads the ELF headers with struct, not with
eh2sframe or binutils (objcopy --dump-section would rewrite FILE)."""
import struct
import sys
import zlib

f, dbg = sys.argv[1], sys.argv[2]
d = open(f, 'rb').read()
e = '<' if d[5] == 1 else '>'
shoff, = struct.unpack_from(e + 'Q', d, 40)
shnum, strndx = struct.unpack_from(e + 'HH', d, 60)
sh = [struct.unpack_from(e + 'IIQQQQIIQQ', d, shoff + 64 * i) for i in range(shnum)]
st = sh[strndx]
for s in sh:
    name = d[st[4] + s[0]:d.index(b'\0', st[4] + s[0])]
    if name == b'.gnu_debuglink':
        crc, = struct.unpack_from(e + 'I', d, s[4] + s[5] - 4)
        want = zlib.crc32(open(dbg, 'rb').read()) & 0xffffffff
        if crc == want:
            sys.exit(0)
        print('%s: .gnu_debuglink CRC %08x, %s has %08x' % (f, crc, dbg, want))
        sys.exit(1)
print('%s: no .gnu_debuglink' % f)
sys.exit(1)
