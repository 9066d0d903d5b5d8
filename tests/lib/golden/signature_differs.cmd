lib check tests/lib/bad_sig
