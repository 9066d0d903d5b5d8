lib bench T/tuned.cakelib --shapes T/shapes.txt --fake-measure h200
