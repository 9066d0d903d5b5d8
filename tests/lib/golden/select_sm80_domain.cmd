lib select T/skinny.cakelib --op gemm --shape M=465,N=7432,K=88
