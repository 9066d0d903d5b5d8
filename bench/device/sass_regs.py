"""sass_regs.py — the registers and spills of each setmaxnreg role in a kernel's SASS
(cuobjdump -sass): every instruction is given to the region of the nearest SETMAXREG above
it in address order (the code before the first: the entry); per region, its budget, the
instructions, the highest register R<n> named (R255 is RZ: not counted), and its STL/LDL.
A region whose highest register is above the entry count (.maxnreg) was allocated within
its raised budget, not within the entry count.
usage: python3 sass_regs.py FILE.sass [MAXNREG]"""
import re
import sys

text = open(sys.argv[1]).read().splitlines()
cap = int(sys.argv[2]) if len(sys.argv) > 2 else None
ins = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);")
regs = []   # [name, budget, n, maxreg, stl, ldl, first addr]
cur = ["entry", cap, 0, -1, 0, 0, 0]
regs.append(cur)
for line in text:
    m = ins.search(line)
    if not m:
        continue
    addr, op = int(m.group(1), 16), m.group(2)
    if "SETMAXREG" in op:
        v = re.findall(r"0x([0-9a-f]+)", op)
        cur = [op.split()[0] if not op.startswith("@") else op.split()[1], int(v[-1], 16) if v else None,
               0, -1, 0, 0, addr]
        regs.append(cur)
    cur[2] += 1
    rs = [int(x) for x in re.findall(r"\bR(\d+)\b", op) if int(x) != 255]
    if rs:
        cur[3] = max(cur[3], max(rs))
    cur[4] += bool(re.search(r"\bSTL\b", op))
    cur[5] += bool(re.search(r"\bLDL\b", op))
print(f"entry count (.maxnreg): {cap}")
for r in regs:
    over = "" if cap is None or r[3] + 1 <= cap else f"  (> the entry count {cap}: allocated within its own budget)"
    print(f"region {r[0]} at 0x{r[6]:x}, budget {r[1]}: {r[2]} instr, highest register R{r[3]}, "
          f"STL {r[4]}, LDL {r[5]}{over}")
