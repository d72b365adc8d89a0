// pipelink/limits.h — the capacities of a component's binding table (pl::Slots) and of the
// kernel's parameter block (pl::Args). The one source of truth: the device header sizes its
// structs from these, the linker checks contracts against them and generates the slot tables
// from them, and the runtime's host mirror of pl::Args is sized from them. Plain C++ (no CUDA),
// so host code and NVRTC both include it.
#pragma once

namespace pl {

constexpr unsigned kMaxSmem = 8;       // [[smem]] regions per component
constexpr unsigned kMaxBarriers = 4;   // [[named_barrier]] entries per component
constexpr unsigned kMaxMbarriers = 8;  // [[mbarrier]] groups per component
constexpr unsigned kMaxPorts = 4;      // [[port]] entries per component
constexpr unsigned kMaxTensors = 4;    // tensors in one pipe stage
constexpr unsigned kMaxParams = 16;    // [[param]] entries per component
constexpr unsigned kArgTensorMaps = 4; // tensormap params of the whole kernel
constexpr unsigned kArgWords = 24;     // scalar and pointer params of the whole kernel

}  // namespace pl
