lib select T/lib.cakelib --op softmax --shape M=64,N=10000
