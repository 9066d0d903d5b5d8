shfl\.sync\.(down|up|idx)\.b32
tanh\.approx\.f32
ex2\.approx\.ftz\.f32
lg2\.approx\.f32
sqrt\.rn\.f64
cvt\.rn\.bf16\.f32
