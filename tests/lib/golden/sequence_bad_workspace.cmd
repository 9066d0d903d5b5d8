lib check tests/lib/bad_seq
