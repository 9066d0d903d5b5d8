lib bench T/lib.cakelib --shapes T/nosuch.txt --fake-measure h200
