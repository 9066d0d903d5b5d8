lib select T/tuned.cakelib --op rmsnorm --shape M=16384,N=1024 --device "NVIDIA H200"
