# grid.x/y/z: the dispatch packet's grid size (grid_size_x at byte 12 = 0xc)
s_load_dword(x2)?[[:space:]]+s(\[[0-9]+:[0-9]+\]|[0-9]+), s\[[0-9]+:[0-9]+\], 0xc
# grid.x = grid_size_x / 128 (the workgroup size, a power of two)
s_lshr_b32[[:space:]]+s[0-9]+, s[0-9]+, 7
