\.entry flash_attn_fwd_d64\(
wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16
wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16 \{[^}]*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd[0-9]+, 1, 1, 1, 1;
!\.local
