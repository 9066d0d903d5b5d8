lib select T/tuned2.cakelib --op rmsnorm --shape M=16512,N=1024
