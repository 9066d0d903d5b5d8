lib select T/tuned2.cakelib --op rmsnorm --shape M=16384,N=1024
