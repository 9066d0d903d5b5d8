lib select T/skinny.cakelib --op gemm --shape M=19,N=8,K=184
