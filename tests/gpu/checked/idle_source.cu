// Test component (GPU checked-timeout test): claims the "t" pipe's producer end but never fills a
// stage, so its consumer's first wait can never complete. In a PL_CHECKED link that wait must time
// out, name the pipe, stage and phase, and let the kernel end instead of hanging the GPU.
#include "idle_source.contract.h"  // pipelink header idle_source.toml: records (warps, arrive)

PL_PROVIDE_LINKED(idle_source_main, rows);
PL_PROVIDE_LINKED(idle_source_main, cols);

PL_COMPONENT(idle_source_main) { (void)ctx; }
