lib tune T/lib.cakelib --shapes T/shapes.txt --fake-measure h200
