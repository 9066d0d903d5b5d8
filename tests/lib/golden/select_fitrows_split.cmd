lib select T/fitrows.cakelib --op rmsnorm --shape M=3,N=50000
