"""Raise the CFA word of the second FRE of the first two-FRE MASK FDE
(ADDR1, one data word: the x86-64 PLT shape) of FILE's .sframe from 16
to 24, in place. Used to check that --verify catches MASK FRE damage."""
import struct
import subprocess
import sys

f = sys.argv[1]
d = bytearray(open(f, 'rb').read())
off = None
for line in subprocess.run(['readelf', '-SW', f], capture_output=True,
                           text=True).stdout.splitlines():
    if ' .sframe ' in line:
        off = int(line.split(']')[1].split()[3], 16)
if off is None:
    sys.exit('no .sframe')
nf, = struct.unpack_from('<I', d, off + 8)
freoff, = struct.unpack_from('<I', d, off + 24)
for i in range(nf):
    _, _, fo = struct.unpack_from('<qII', d, off + 28 + 16 * i)
    a = off + 28 + freoff + fo
    n, info = struct.unpack_from('<HB', d, a)
    if info & 0x10 and n == 2 and (info & 0xf) == 0:
        p = a + 5 + 3  # second FRE: after the attribute and FRE 0
        if d[p + 2] != 16:
            sys.exit('unexpected CFA word %d' % d[p + 2])
        d[p + 2] = 24
        break
else:
    sys.exit('no MASK FDE')
open(f, 'wb').write(d)
