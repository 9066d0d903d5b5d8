lib bench T/lib.cakelib --op rmsnorm --shape M=4096,N=8192 --variant block64_short --fake-measure h200
