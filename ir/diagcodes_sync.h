/* diagcodes_sync.h — diagnostics of the synchronization-protocol checks
 * (verifier/sync*.c), the bounds check (verifier/bounds.c) and the alignment
 * proofs (verifier/align.c). Never renumber.
 * tests/diag/sync/CODES.md has a wrong and a fixed example of each. */
/* pipelines */
DIAG(E0701, SEV_ERROR, "pipeline stage acquired but never filled or committed")
DIAG(E0702, SEV_ERROR, "pipeline stage handed on twice")
DIAG(E0703, SEV_ERROR, "pipeline member used in the wrong role")
DIAG(E0704, SEV_ERROR, "pipeline stage waited for but never released")
DIAG(E0705, SEV_ERROR, "producer and consumer trip counts differ")
DIAG(E0706, SEV_ERROR, "wrong stage token")
DIAG(E0707, SEV_ERROR, "expect_tx bytes do not match the TMA loads")
DIAG(E0708, SEV_ERROR, "stage used after it was handed on")
/* explicit mbarriers */
DIAG(E0710, SEV_ERROR, "mbarrier arrival count mismatch")
DIAG(E0711, SEV_ERROR, "wait on an mbarrier nobody arrives on")
DIAG(E0712, SEV_ERROR, "mbarrier wait parity does not alternate")
DIAG(E0713, SEV_ERROR, "mbarrier waited before any arrival")
DIAG(E0714, SEV_ERROR, "TMA load on an mbarrier without expect_tx")
/* shared memory between roles */
DIAG(E0720, SEV_ERROR, "shared memory shared between roles without ordering")
/* proxies */
DIAG(E0725, SEV_ERROR, "missing fence.proxy.async")
DIAG(E0726, SEV_ERROR, "shared tile overwritten while an async operation may still read it")
/* cp.async groups */
DIAG(E0730, SEV_ERROR, "cp.async data read before its group completed")
DIAG(E0731, SEV_ERROR, "missing sync after cp.async.wait")
DIAG(E0732, SEV_ERROR, "cp.async overwrites a stage other threads may still read")
/* wgmma */
DIAG(E0740, SEV_ERROR, "wgmma accumulator used before wgmma.wait")
DIAG(E0741, SEV_ERROR, "stage released while a wgmma may still read it")
DIAG(W0742, SEV_WARNING, "fresh wgmma discards the result of a pending wgmma")
/* barriers and divergence */
DIAG(E0750, SEV_ERROR, "collective operation under divergent control")
DIAG(E0751, SEV_ERROR, "named barrier thread count is wrong")
DIAG(E0752, SEV_ERROR, "named barrier id out of range")
DIAG(E0753, SEV_ERROR, "block-wide sync inside a role")
DIAG(E0754, SEV_ERROR, "named barrier phase completes with no thread waiting")
/* within a role: threads, single-issue operations, TMA data, initialisation */
DIAG(E0760, SEV_ERROR, "shared memory read by other threads without a barrier after the write")
DIAG(E0761, SEV_ERROR, "shared memory overwritten while other threads may still read it")
DIAG(E0762, SEV_ERROR, "tma.store before every writer fenced and passed a barrier")
DIAG(E0763, SEV_ERROR, "TMA-loaded tile read before a wait on its mbarrier")
DIAG(E0764, SEV_ERROR, "accumulator read before it is initialised")
DIAG(E0765, SEV_ERROR, "wait parity does not match the mbarrier's phase")
/* bounds */
DIAG(E0801, SEV_ERROR, "global access may be out of bounds")
DIAG(E0802, SEV_ERROR, "tile index out of the declared shape")
/* alignment (verifier/align.c, align_facts.c, align_report.c) */
DIAG(E0810, SEV_ERROR, "vector access or cp.async not provably aligned")
DIAG(E0811, SEV_ERROR, "matrix row address not provably 16-byte aligned")
/* coverage of the outputs (verifier/coverage.c) */
DIAG(E0820, SEV_ERROR, "output elements no block writes")
DIAG(E0821, SEV_ERROR, "output elements written more than once")
DIAG(E0822, SEV_NOTE, "output coverage not decided")
