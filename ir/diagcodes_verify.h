/* diagcodes_verify.h — diagnostics of the verifier (types, targets, resources,
 * TMA, synchronization protocol, bounds). */
DIAG(E0301, SEV_ERROR, "type mismatch")
