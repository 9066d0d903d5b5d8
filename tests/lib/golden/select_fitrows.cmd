lib select T/fitrows.cakelib --op rmsnorm --shape M=1017,N=1166
