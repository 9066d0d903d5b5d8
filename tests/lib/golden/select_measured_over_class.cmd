lib select T/tuned2.cakelib --op rmsnorm --shape M=24576,N=1024
