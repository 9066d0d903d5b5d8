lib select T/skinny.cakelib --op gemm --shape M=128,N=4096,K=4096
