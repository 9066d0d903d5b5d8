lib select T/tuned.cakelib --op rmsnorm --shape M=8192,N=1024
