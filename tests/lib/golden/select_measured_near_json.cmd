lib select T/fitrows7.cakelib --op rmsnorm --shape M=6500,N=276 --json
