lib check tests/lib/no_kernel
