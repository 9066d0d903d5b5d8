# atomics.tir: atomic.add (statement and expression), atomic.exch, fence.gpu
atom\.global\.add\.f32
atom\.global\.add\.u32
atom\.global\.exch\.b32
fence\.acq_rel\.gpu
!local
