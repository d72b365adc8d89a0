// objects — reading input files safely and validating component objects before any toolchain
// library sees them.
//
// Hostile inputs must end in a diagnostic, never in a hang (a FIFO, /dev/zero, a huge file) or a
// crash inside nvJitLink (a truncated or malformed object). Files are read only when they are
// regular files, and only up to a size cap; objects are checked structurally (ELF header,
// section table, machine, the fatbin of a host object, a cubin's architecture, the LTO-IR and
// fatbin headers, PTX text) before nvJitLink is given them.
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

// Checks that an object of kind `kind` is well formed enough to hand to nvJitLink for target
// `arch` (e.g. "sm_90a"). On failure returns false with `why`, a sentence about the object
// ("its section table lies outside the file", "is a cubin for sm_80, not sm_90a", ...).
bool validate_object(const std::vector<char>& bytes, InputKind kind, const std::string& arch, std::string& why);

}  // namespace pipelink
