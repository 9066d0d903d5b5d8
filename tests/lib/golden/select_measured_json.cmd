lib select T/fitrows.cakelib --op rmsnorm --shape M=8,N=2000 --json
