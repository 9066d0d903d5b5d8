lib select T/skinny.cakelib --op gemm --shape M=40,N=1024,K=12288
