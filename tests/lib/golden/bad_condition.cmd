lib check tests/lib/bad_when
