lib check tests/lib/bad_set
