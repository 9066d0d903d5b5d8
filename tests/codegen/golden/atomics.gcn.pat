# atomics.tir on gfx942: global atomics (f32 add in hardware), not a CAS loop
global_atomic_add_f32
global_atomic_add
global_atomic_swap
!global_atomic_cmpswap
