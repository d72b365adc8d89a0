// pipelink/targets.h — the GPUs PipeLink links for, with their limits: the one source of truth.
//
// `-arch` accepts exactly the targets listed here (src/targets.cpp holds the table). The checks
// (check.cpp, allocate.cpp, compile_link.cpp) read the limits of the link's target from it, and
// the conformance scan (conform.cpp) refuses a component whose code uses an instruction that the
// target lacks (wgmma on anything but sm_90a). Each figure names the documentation it comes from.
//
// Only the H200 (sm_90a) can run kernels where PipeLink is developed; for the other targets a
// kernel is linked and its cubin checked (architecture, limits), never run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipelink {

struct TargetInfo {
  const char* arch;               // the -arch value: "sm_90a"
  const char* gpus;               // the GPUs of that compute capability it is meant for
  const char* compute_capability; // "9.0"
  int64_t max_smem_block;         // dynamic shared memory per block after opt-in, bytes
  int64_t smem_per_sm;            // shared memory per SM, bytes
  int named_barriers;             // barrier ids 0..named_barriers-1 (0 is __syncthreads)
  bool setmaxnreg;                // setmaxnreg exists (register budgets per warpgroup)
  bool wgmma;                     // wgmma.mma_async exists
  int64_t regs_per_sm;            // 32-bit registers per SM
  int64_t regs_per_block;         // 32-bit registers per thread block
  int max_regs_per_thread;        // 32-bit registers per thread
  int max_threads;                // threads per block
  int max_threads_per_sm;         // resident threads per SM
  // Where each figure comes from.
  const char* limits_source;      // shared memory, registers, threads
  const char* barriers_source;    // named barriers
  const char* setmaxnreg_source;
  const char* wgmma_source;
};

// Every target, in the order `pipelink targets` lists them.
const std::vector<TargetInfo>& targets();
// The target named `arch` ("sm_90a"); nullptr if PipeLink does not know it.
const TargetInfo* find_target(const std::string& arch);
// "sm_90a, sm_90, sm_100a, sm_103a, sm_120a": for diagnostics.
std::string target_names();

// An instruction only some targets have. A component whose compiled code uses it is refused for
// the other targets (conform.cpp), naming the component and the instruction.
struct TargetInstruction {
  const char* prefix;   // PTX opcode prefix: "wgmma."
  const char* name;     // how diagnostics call it
  const char* targets;  // comma-separated list of the targets that have it
  const char* source;   // the documentation
};
const std::vector<TargetInstruction>& target_instructions();
// Whether `arch` has instruction `ins`.
bool target_has(const std::string& arch, const TargetInstruction& ins);

}  // namespace pipelink
