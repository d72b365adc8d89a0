// targets — the table behind pipelink/targets.h: each target's limits and where they come from.
//
// Limits: CUDA C++ Programming Guide, section 5.1 "Compute Capabilities", Table 31 "Technical
// Specifications per Compute Capability" (docs.nvidia.com/cuda/cuda-programming-guide/
// 05-appendices/compute-capabilities.html). Named barriers: PTX ISA, "bar, barrier" (a barrier
// operand is 0 through 15). setmaxnreg, wgmma and tcgen05: the PTX ISA's "Target ISA notes" of
// each instruction, as the CCCL cuda::ptx reference lists them; confirmed with ptxas 13.0 (an
// instruction a target lacks is "not supported on .target"), see README "Targets".
//
// Does not: hold state (the table is constant data), or know more than these targets: -arch
// refuses anything else.
#include "pipelink/targets.h"

namespace pipelink {

namespace {

constexpr const char* kTable31 =
    "CUDA C++ Programming Guide, 5.1 Compute Capabilities, Table 31 (Technical Specifications per Compute Capability)";
constexpr const char* kBarriers = "PTX ISA, bar/barrier: barrier operand 0..15 (16 per CTA)";
constexpr const char* kSetmaxnreg =
    "PTX ISA, setmaxnreg, Target ISA notes: sm_90a, sm_100a, sm_103a, sm_120a (and their f families); not sm_90";
constexpr const char* kWgmma = "PTX ISA, wgmma.mma_async, Target ISA notes: requires sm_90a";

// 227 KB = 232448 bytes, 99 KB = 101376 bytes; per SM 228 KB and 100 KB (1 KB per block is
// reserved by the system, which is why the per-block figure is 1 KB less).
const std::vector<TargetInfo> kTargets = {
    {"sm_90a", "H100, H200", "9.0", 232448, 233472, 16, true, true, 65536, 65536, 255, 1024, 2048, kTable31, kBarriers,
     kSetmaxnreg, kWgmma},
    {"sm_90", "H100, H200 (without the sm_90a instructions)", "9.0", 232448, 233472, 16, false, false, 65536, 65536, 255,
     1024, 2048, kTable31, kBarriers, kSetmaxnreg, kWgmma},
    {"sm_100a", "B200", "10.0", 232448, 233472, 16, true, false, 65536, 65536, 255, 1024, 2048, kTable31, kBarriers,
     kSetmaxnreg, kWgmma},
    {"sm_103a", "B300", "10.3", 232448, 233472, 16, true, false, 65536, 65536, 255, 1024, 2048, kTable31, kBarriers,
     kSetmaxnreg, kWgmma},
    {"sm_120a", "RTX 5090", "12.0", 101376, 102400, 16, true, false, 65536, 65536, 255, 1024, 1536, kTable31, kBarriers,
     kSetmaxnreg, kWgmma},
};

const std::vector<TargetInstruction> kInstructions = {
    {"wgmma.", "wgmma (warpgroup MMA)", "sm_90a", kWgmma},
    {"tcgen05.", "tcgen05 (fifth-generation tensor core, tensor memory)", "sm_100a,sm_103a",
     "PTX ISA, tcgen05 instructions, Target ISA notes: sm_100a, sm_101a, sm_103a (not sm_90a, not sm_120a)"},
};

}  // namespace

const std::vector<TargetInfo>& targets() { return kTargets; }

const TargetInfo* find_target(const std::string& arch) {
  for (const TargetInfo& t : kTargets)
    if (arch == t.arch) return &t;
  return nullptr;
}

std::string target_names() {
  std::string s;
  for (const TargetInfo& t : kTargets) s += (s.empty() ? "" : ", ") + std::string(t.arch);
  return s;
}

const std::vector<TargetInstruction>& target_instructions() { return kInstructions; }

bool target_has(const std::string& arch, const TargetInstruction& ins) {
  const std::string list = std::string(",") + ins.targets + ",";
  return list.find("," + arch + ",") != std::string::npos;
}

}  // namespace pipelink
