/* diagcodes_back.h — diagnostics of code generation, the runtime and `run --check`. */
DIAG(E0901, SEV_ERROR, "code generation failed")
