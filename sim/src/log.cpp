// The parent XBT log category of the simulator: every sim/ file logs to its own subcategory
// of autoddl_sim, so `--log=autoddl_sim.thres:debug` (or one subcategory) turns them up.
#include <xbt/log.h>

XBT_LOG_NEW_CATEGORY(autoddl_sim, "autoddl simulator");
