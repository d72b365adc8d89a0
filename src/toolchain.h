// toolchain.h — the NVRTC and nvJitLink calls shared by compile_link and conform (internal).
#pragma once

#include <string>
#include <vector>

#include "context.h"
#include "objects.h"  // InputKind

namespace pipelink {

// One input of an nvJitLink link: the generated unit or a component object.
struct Input {
  std::string label;  // component name(s) or "generated"
  std::string path;
  std::vector<char> bytes;
  InputKind kind;
  std::vector<const Contract*> contracts;  // the contracts naming this object (none for generated code)
};

// NVRTC → LTO-IR (-dlto -rdc=true, the link's -I/-D). Returns empty on failure (reported).
// `cacheable`: the program includes nothing but PipeLink's own headers, so with --cache-dir its
// output is reused (build_cache.cpp).
std::vector<char> compile_to_ltoir(LinkContext& ctx, const std::string& source, const std::string& name,
                                   bool cacheable = false);
// The NVRTC cache (build_cache.cpp): key "" = not cached.
std::string nvrtc_cache_key(const LinkContext& ctx, const std::string& source, const std::string& name,
                            const std::vector<std::string>& options);
bool nvrtc_cache_get(const LinkContext& ctx, const std::string& key, std::vector<char>& out);
void nvrtc_cache_put(const LinkContext& ctx, const std::string& key, const std::vector<char>& bytes);
// nvJitLink over `inputs`: linked PTX (want_ptx) or a cubin into `out`; the info log into `info`.
bool jit(LinkContext& ctx, const std::vector<std::string>& options, const std::vector<Input>& inputs, bool want_ptx,
         std::vector<char>& out, std::string& info);

// Why NVRTC or nvJitLink could not be loaded (toolchain_dl.cpp), "" when they were.
std::string toolchain_error();

// The conform pass (conform.cpp): every component object checked against its contract.
void conform(LinkContext& ctx, const std::vector<Input>& inputs);

}  // namespace pipelink
