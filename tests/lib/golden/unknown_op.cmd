lib select T/lib.cakelib --op swiglu --shape M=1024,N=1024
