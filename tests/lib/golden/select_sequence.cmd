lib select T/lib.cakelib --op rmsnorm --shape M=2,N=65536
