# grid.x/y/z read the launch's block counts
mov\.u32[[:space:]]+%r[0-9]+, %nctaid\.x;
mov\.u32[[:space:]]+%r[0-9]+, %nctaid\.y;
mov\.u32[[:space:]]+%r[0-9]+, %nctaid\.z;
# the persistent loop strides by grid.x: no local memory
!\.local
