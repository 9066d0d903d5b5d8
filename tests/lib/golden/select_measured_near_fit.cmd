lib select T/fitrows7.cakelib --op rmsnorm --shape M=6600,N=276
