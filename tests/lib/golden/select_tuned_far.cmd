lib select T/tuned.cakelib --op rmsnorm --shape M=128,N=1024
