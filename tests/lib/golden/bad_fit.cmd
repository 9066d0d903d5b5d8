lib check tests/lib/bad_fit
