// objects — reading input files safely and validating component objects before any toolchain
// library sees them.
//
// Hostile inputs must end in a diagnostic, never in a hang (a FIFO, /dev/zero, a huge file) or a
// crash inside nvJitLink (a truncated or malformed object). Files are read only when they are
// regular files, and only up to a size cap; objects are checked structurally (ELF header,
// section table, machine, the fatbin of a host object, the LTO-IR and fatbin headers, PTX text)
// before nvJitLink is given them, and object_archs reads which architecture their code is for.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pipelink {

constexpr size_t kMaxContractBytes = size_t(1) << 20;   // 1 MiB of TOML
constexpr size_t kMaxObjectBytes = size_t(512) << 20;   // 512 MiB per object
constexpr size_t kMaxSourceBytes = size_t(64) << 20;    // 64 MiB per component source

// Reads `path` into `out` if it is a regular file of at most `cap` bytes. Never blocks on a FIFO
// or device and never throws; on failure returns false with `why` ("it is a directory", "it is
// not a regular file", "it is larger than N bytes", or the system's message).
bool read_regular_file(const std::string& path, size_t cap, std::vector<char>& out, std::string& why);

enum class InputKind { LtoIr, Object, Ptx, Cubin, Fatbin, Unknown };

// What `bytes` (read from `path`) is: by magic number, then by extension / PTX text.
InputKind classify(const std::vector<char>& bytes, const std::string& path);

// Checks that an object of kind `kind` is well formed enough to hand to nvJitLink. On failure
// returns false with `why`, a sentence about the object ("has a section table outside the file",
// "is truncated LTO-IR (40 bytes)", ...). Which architecture it is for is object_archs' question.
bool validate_object(const std::vector<char>& bytes, InputKind kind, std::string& why);

// The architecture one piece of device code was compiled for: LTO-IR, PTX or a cubin, standalone
// or an entry of the fatbin of a host object (nvcc -dc) or of a fatbin file.
struct CodeArch {
  std::string kind;   // "LTO-IR", "PTX", "cubin"
  unsigned sm = 0;    // 90 for sm_90a, 100 for sm_100f
  char suffix = 0;    // 'a' (architecture-specific), 'f' (family-specific) or 0
  std::string name() const { return "sm_" + std::to_string(sm) + (suffix ? std::string(1, suffix) : std::string()); }
};

// Reads the architecture of every piece of device code in a validated object (validate_object):
//   NVRTC / NVVM LTO-IR: the container header's architecture field and its arch-specific flag
//     (a family-specific sm_100f is not marked there: it reads as sm_100);
//   a host object or fatbin: each fatbin entry's header (kind, SM, the a and f flags);
//   PTX: its .target directive;   a cubin: e_flags, and the -arch its toolkit note records.
// On failure (a header too short to say, an entry of an unknown kind, LLVM bitcode) returns false
// with `why`, a sentence about the object.
bool object_archs(const std::vector<char>& bytes, InputKind kind, std::vector<CodeArch>& out, std::string& why);

// PipeLink's rule for linking code compiled for `code` into a kernel for target `arch` (README,
// "Targets"): the same SM, and architecture- or family-specific code (sm_90a, sm_100f) only for an
// architecture-specific target (sm_90a, sm_100a, ...). sm_90 code links for sm_90a; sm_90a code not
// for sm_90, sm_100a or sm_120a; sm_80 code (or PTX) not for sm_90a.
bool arch_matches(const CodeArch& code, const std::string& arch);

}  // namespace pipelink
