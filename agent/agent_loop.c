#include "agent.h"
int ag_cmd_agent(CakeCtx *ctx, int argc, char **argv) { return 1; }
