/* diagcodes.h — every diagnostic code, one row each: DIAG(code, severity, title).
 * The codes are stable: never renumber, only add. docs/diagnostics.md explains
 * each with a wrong and a fixed example. Ranges:
 *   E00xx driver and files       E01xx lexing and syntax     E02xx names
 *   E03xx types and shapes       E04xx target capabilities   E05xx resources
 *   E06xx TMA and async copies   E07xx synchronization       E08xx bounds
 *   E09xx code generation, runtime and checking              W0xxx warnings
 *   E10xx the cost model   E11xx the agent tools   E12xx the kernel library
 * Each range lives in its own file so that stages add codes independently.
 */
#include "diagcodes_front.h"
#include "diagcodes_verify.h"
#include "diagcodes_sync.h"
#include "diagcodes_back.h"
#include "diagcodes_lib.h"
