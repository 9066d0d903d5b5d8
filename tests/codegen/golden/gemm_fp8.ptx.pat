# fp8 e4m3 GEMM: wgmma k32 from descriptors, scales in the epilogue
\.entry gemm_fp8\(
wgmma\.mma_async\.sync\.aligned\.m64n256k32\.f32\.e4m3\.e4m3
cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes
stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16
!\.local
