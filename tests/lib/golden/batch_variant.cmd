lib bench T/tuned.cakelib --shapes T/variants.txt --fake-measure h200
