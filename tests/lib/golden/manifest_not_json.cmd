lib check tests/lib/bad_json
