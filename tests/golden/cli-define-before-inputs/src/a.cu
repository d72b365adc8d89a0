// Refuses to build unless the link passed -D PL_CHECKED to the control.
#include "pipelink/device.cuh"
#ifndef PL_CHECKED
#error "built without -D PL_CHECKED"
#endif
PL_COMPONENT(entry_a) {}
