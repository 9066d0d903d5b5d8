lib bench T/lib.cakelib --op rmsnorm --shape M=2,N=65536 --fake-measure h200
