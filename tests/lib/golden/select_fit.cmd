lib select T/fit.cakelib --op gemm --shape M=393,N=1184,K=14008
