lib check tests/lib/bad_kernel
