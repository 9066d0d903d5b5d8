lib check tests/lib/bad_field
