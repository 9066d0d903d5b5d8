lib select T/lib.cakelib --op rmsnorm --shape M=600,N=65536
