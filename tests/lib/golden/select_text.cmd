lib select T/lib.cakelib --op gemm --shape M=512,N=4096,K=4000
