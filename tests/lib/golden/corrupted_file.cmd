lib select T/flipped.cakelib --op gemm --shape M=128,N=4096,K=4096
