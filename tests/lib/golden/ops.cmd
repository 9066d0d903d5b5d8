lib ops T/lib.cakelib
