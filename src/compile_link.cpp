// compile_link — turns the generated unit and the component objects into one cubin.
//
//   1. NVRTC compiles the generated unit to LTO-IR (-dlto -rdc=true); with --cache-dir the output
//      of an unchanged generated unit is reused (build_cache.cpp). For the monolithic control it
//      compiles the component sources and the generated unit as one program instead.
//   2. Undefined bindings: an `.extern` variable left in linked PTX is a binding that nothing
//      defines — nvJitLink itself accepts that silently and ptxas turns it into a zero global.
//      nvJitLink gives no PTX from a cubin link, so a linked kernel is linked to PTX once
//      (-lto -ptx): that PTX answers the undefined-binding check and conform_linked's scan of the
//      kernel with every slot folded. A control reads its undefined bindings from ptxas's log of
//      the cubin link and is linked to PTX only when asked (--emit-ptx, --save-temps).
//   3. nvJitLink -lto links and assembles the cubin: its ptxas report (registers,
//      spills, static smem) is kept and checked. The cubin is what it was with the PTX pass.
// PTX component inputs cannot take part in LTO; they are linked at the cubin level (bindings
// loaded from memory, not folded) and the link says so in a warning. An object that several
// contracts name (one library holding several components) is added once.
//
// Does not: decide or generate anything; write files (write_outputs).
#include <nvJitLink.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "context.h"
#include "toolchain.h"
#include "objects.h"

namespace pipelink {

namespace {

nvJitLinkInputType jit_kind(InputKind k) {
  switch (k) {
    case InputKind::LtoIr: return NVJITLINK_INPUT_LTOIR;
    case InputKind::Object: return NVJITLINK_INPUT_OBJECT;
    case InputKind::Ptx: return NVJITLINK_INPUT_PTX;
    case InputKind::Cubin: return NVJITLINK_INPUT_CUBIN;
    case InputKind::Fatbin: return NVJITLINK_INPUT_FATBIN;
    default: return NVJITLINK_INPUT_ANY;
  }
}

struct Timer {
  const LinkContext& ctx;
  const char* what;
  bool on = true;  // false: nothing to report (a cache miss)
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  ~Timer() {
    if (!ctx.opt.verbose || !on) return;
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "pipelink: " << what << ": " << static_cast<long>(ms) << " ms\n";
  }
};

std::string nvrtc_log(nvrtcProgram p) {
  size_t n = 0;
  nvrtcGetProgramLogSize(p, &n);
  std::string s(n, '\0');
  if (n) nvrtcGetProgramLog(p, s.data());
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.pop_back();
  return s;
}

std::string jit_log(nvJitLinkHandle h, bool error) {
  size_t n = 0;
  (error ? nvJitLinkGetErrorLogSize : nvJitLinkGetInfoLogSize)(h, &n);
  std::string s(n, '\0');
  if (n) (error ? nvJitLinkGetErrorLog : nvJitLinkGetInfoLog)(h, s.data());
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.pop_back();
  return s;
}

std::string trim_ptx(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  std::string t = s.substr(a);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.pop_back();
  for (char& ch : t) if (ch == '\t') ch = ' ';
  return t;
}

std::vector<std::string> common_options(const LinkContext& ctx) {
  std::vector<std::string> o{"-arch=" + ctx.target.arch, "-std=c++17", "-default-device", "-fmad=true"};
  o.push_back("-I" + default_include_dir());
  for (const std::string& i : ctx.opt.include_dirs) o.push_back("-I" + i);
  for (const std::string& d : ctx.opt.defines) o.push_back("-D" + d);
  return o;
}

}  // namespace

// NVRTC → LTO-IR. Returns empty on failure (reported).
std::vector<char> compile_to_ltoir(LinkContext& ctx, const std::string& source, const std::string& name, bool cacheable) {
  std::string key;
  if (cacheable) {
    std::vector<std::string> opts = common_options(ctx);
    opts.push_back("-dlto");
    opts.push_back("-rdc=true");
    key = nvrtc_cache_key(ctx, source, name, opts);
    std::vector<char> hit;
    Timer t{ctx, "nvrtc (cached)"};
    if (nvrtc_cache_get(ctx, key, hit)) return hit;
    t.on = false;
  }
  Timer t{ctx, "nvrtc"};
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    ctx.diags.error("toolchain", "nvrtcCreateProgram failed" + (toolchain_error().empty() ? std::string() : ": " + toolchain_error()));
    return {};
  }
  std::vector<std::string> opts = common_options(ctx);
  opts.push_back("-dlto");
  opts.push_back("-rdc=true");
  std::vector<const char*> cs;
  for (const auto& s : opts) cs.push_back(s.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(cs.size()), cs.data());
  std::string log = nvrtc_log(prog);
  std::vector<char> out;
  if (r != NVRTC_SUCCESS) {
    Diagnostic& d = ctx.diags.error("toolchain", "NVRTC could not compile " + name + ": " + nvrtcGetErrorString(r));
    std::istringstream ls(log);
    for (std::string line; std::getline(ls, line);) d.notes.push_back(line);
  } else {
    size_t n = 0;
    nvrtcGetLTOIRSize(prog, &n);
    out.resize(n);
    nvrtcGetLTOIR(prog, out.data());
    if (ctx.opt.verbose && !log.empty()) std::cerr << log << "\n";
    nvrtc_cache_put(ctx, key, out);
  }
  nvrtcDestroyProgram(&prog);
  return out;
}

bool jit(LinkContext& ctx, const std::vector<std::string>& options, const std::vector<Input>& inputs, bool want_ptx,
         std::vector<char>& out, std::string& info) {
  Timer t{ctx, want_ptx ? "nvJitLink -lto -ptx" : "nvJitLink (ptxas)"};
  std::vector<const char*> cs;
  for (const auto& s : options) cs.push_back(s.c_str());
  // Where a CUDA driver is present nvJitLink keeps linked cubins in the driver's JIT cache
  // (~/.nv/ComputeCache) and, on a hit, returns one without running ptxas: the info log is then
  // empty, and the map's ptxas report and every check read from it (registers against the cap,
  // spills, undefined bindings) would silently vanish (seen on the H200, session 13: a second
  // link of the same inputs took 0.18 s and logged nothing). Every link runs ptxas.
  cs.push_back("-no-cache");
  nvJitLinkHandle h;
  nvJitLinkResult created = nvJitLinkCreate(&h, static_cast<uint32_t>(cs.size()), cs.data());
  if (created != NVJITLINK_SUCCESS) {  // an nvJitLink without the option: link as before (check_ptxas_report warns on a hit)
    cs.pop_back();
    created = nvJitLinkCreate(&h, static_cast<uint32_t>(cs.size()), cs.data());
  }
  if (created != NVJITLINK_SUCCESS) {
    ctx.diags.error("toolchain", toolchain_error().empty() ? std::string("nvJitLinkCreate rejected the options")
                                                           : "nvJitLink is unavailable: " + toolchain_error());
    return false;
  }
  bool ok = true;
  for (const Input& in : inputs) {
    if (nvJitLinkAddData(h, jit_kind(in.kind), in.bytes.data(), in.bytes.size(), in.label.c_str()) != NVJITLINK_SUCCESS) {
      // The object passed PipeLink's validation (a readable object of its kind for this target):
      // name the component and its contract, and give nvJitLink's reason line by line.
      std::string names;
      for (const Contract* c : in.contracts) names += (names.empty() ? "" : "', '") + c->name;
      Diagnostic& d = ctx.diags.error(
          "toolchain", in.contracts.empty() ? "nvJitLink rejected the object of '" + in.label + "' (" + in.path + ")"
                                            : "nvJitLink rejected the object of component '" + names + "' (" + in.path +
                                                  "), which passed PipeLink's object validation",
          in.contracts.empty() ? SourceLoc{} : in.contracts.front()->object_loc);
      std::istringstream ls(jit_log(h, true));
      for (std::string line; std::getline(ls, line);)
        if (!line.empty()) d.notes.push_back(line);
      ok = false;
    }
  }
  if (ok && nvJitLinkComplete(h) != NVJITLINK_SUCCESS) {
    Diagnostic& d = ctx.diags.error("toolchain", "nvJitLink failed");
    std::istringstream ls(jit_log(h, true));
    for (std::string line; std::getline(ls, line);) {
      d.notes.push_back(line);
      std::smatch m;
      static const std::regex undef("[Uu]ndefined reference to '?\"?([A-Za-z_][A-Za-z0-9_]*)");
      if (std::regex_search(line, m, undef)) {
        for (const auto& c : ctx.contracts)
          if (c->entry == m[1].str())
            d.notes.push_back("'" + m[1].str() + "' is the entry of component '" + c->name + "' (" + c->loc.str() +
                              "); its object does not define it");
      }
      // "ptxas ... line N; error": the statement of the linked PTX at line N, found in a
      // component's code (the conform probe), names that component.
      static const std::regex at_line(R"(ptx input, line (\d+); error)");
      if (std::regex_search(line, m, at_line) && !ctx.result.linked_ptx.empty()) {
        const long n = std::stol(m[1].str());
        std::istringstream ps(ctx.result.linked_ptx);
        std::string text;
        for (long k = 0; k < n && std::getline(ps, text); ++k) {}
        for (const Contract* c : components_holding(ctx, text)) {
          const std::string note = "line " + m[1].str() + " of the linked PTX (`" + trim_ptx(text) + "`) is code of component '" +
                                   c->name + "' (" + c->object + ", contract " + c->loc.str() + ")";
          if (std::find(d.notes.begin(), d.notes.end(), note) == d.notes.end()) d.notes.push_back(note);
          if (!d.loc.known()) d.loc = c->loc;
        }
      }
      // "<label>: link error: ... symbol multiply defined": name the contracts behind that input.
      if (line.find("multiply defined") != std::string::npos)
        for (const Input& in : inputs)
          if (!in.contracts.empty() && line.rfind(in.label + ":", 0) == 0)
            for (const Contract* c : in.contracts) {
              d.notes.push_back("defined again by the object of component '" + c->name + "' (" + in.path + ", contract " +
                                c->loc.str() + "); another object defines it first");
              if (!d.loc.known()) d.loc = c->loc;
            }
    }
    ok = false;
  }
  info = jit_log(h, false);
  if (ok) {
    size_t n = 0;
    if (want_ptx) {
      nvJitLinkGetLinkedPtxSize(h, &n);
      out.resize(n);
      nvJitLinkGetLinkedPtx(h, out.data());
      if (!out.empty() && out.back() == '\0') out.pop_back();
    } else {
      nvJitLinkGetLinkedCubinSize(h, &n);
      out.resize(n);
      nvJitLinkGetLinkedCubin(h, out.data());
    }
  }
  nvJitLinkDestroy(&h);
  return ok;
}

namespace {

// Names of `.extern .global` / `.extern .const` variables in PTX: what nothing defined.
std::vector<std::string> extern_variables(const std::string& ptx) {
  static const std::regex ext(R"(^\s*\.extern\s+\.(global|const)\s+[^;]*?([A-Za-z_$][A-Za-z0-9_$]*)\s*(\[[^\]]*\])?\s*;)");
  std::vector<std::string> out;
  std::istringstream ls(ptx);
  for (std::string line; std::getline(ls, line);) {
    std::smatch m;
    if (std::regex_search(line, m, ext)) out.push_back(m[2].str());
  }
  return out;
}

// Which components import each undefined symbol. LTO-IR is opaque, so each component is linked
// on its own behind a probe kernel (the generated bindings, then a __global__ calling only its
// entry) and the probe's PTX is read. Runs only when a link has undefined bindings.
std::map<std::string, std::vector<std::string>> attribute_undefined(LinkContext& ctx, const std::vector<Input>& inputs) {
  std::map<std::string, std::vector<std::string>> users;
  const std::string& prelude = ctx.unit.prelude;
  if (prelude.empty()) return users;
  for (const Input& in : inputs) {
    for (const Contract* c : in.contracts) {
      size_t inst = 0;  // the contract's first instance: its slot table
      while (inst < ctx.instances.size() && ctx.instances[inst].contract != c) ++inst;
      if (inst == ctx.instances.size()) continue;
      std::string probe = prelude + "extern \"C\" __global__ void pl_probe(const __grid_constant__ pl::Args args) {\n" +
                          "  extern __shared__ unsigned char pl_smem[];\n  pl::Ctx ctx;\n  ctx.args = &args;\n  ctx.smem = pl_smem;\n" +
                          "  ctx.slots = &" + slots_name(inst) + ";\n  " + c->entry + "(ctx);\n}\n";
      Diagnostics quiet;
      LinkContext pc(ctx.opt, quiet);
      pc.target = ctx.target;
      std::vector<char> ir = compile_to_ltoir(pc, probe, "pipelink_probe.cu", true);
      if (ir.empty()) continue;
      std::vector<Input> pin{{"generated", "", std::move(ir), InputKind::LtoIr, {}}, in};
      std::vector<char> ptx;
      std::string info;
      if (!jit(pc, {"-arch=" + ctx.target.arch, "-lto", "-ptx"}, pin, true, ptx, info)) continue;
      for (const std::string& sym : extern_variables(std::string(ptx.begin(), ptx.end()))) users[sym].push_back(c->name);
    }
  }
  return users;
}

// `.extern .global` / `.extern .const` in linked PTX: bindings nothing defines (Trap 1).
void check_undefined(LinkContext& ctx, const std::string& ptx, const std::vector<Input>& inputs) {
  std::vector<std::string> undefined = extern_variables(ptx);
  if (undefined.empty()) return;
  std::map<std::string, std::vector<std::string>> who = attribute_undefined(ctx, inputs);
  for (const std::string& sym : undefined) {
    std::string msg = "the linked kernel reads '" + sym + "', which nothing defines";
    std::vector<std::string> users = who[sym];
    std::string fact = sym.rfind("pl_fact_", 0) == 0 ? sym.substr(8) : "";
    if (!fact.empty()) msg = "fact '" + fact + "' is read by component code but no contract provides it (symbol " + sym + ")";
    Diagnostic& d = ctx.diags.error("undefined-binding", msg);
    for (const std::string& u : users) {
      const Contract* c = nullptr;
      for (const auto& cc : ctx.contracts) if (cc->name == u) c = cc.get();
      if (c && !d.loc.known()) d.loc = c->loc;
      d.notes.push_back("referenced by " + u + (c ? " (" + c->object + ", contract " + c->loc.str() + ")" : ""));
      if (c && !fact.empty()) {
        bool declared = false;
        for (const FactUse& fu : c->uses) declared |= fu.name == fact;
        if (!declared) d.notes.push_back(u + " does not declare it under [use] in " + c->path);
      }
    }
    d.notes.push_back("nvJitLink accepts this silently and ptxas turns it into a zero-initialised global");
  }
}

// Reads "Used N registers", spills and static smem from the ptxas report.
void check_ptxas_report(LinkContext& ctx, const std::string& info) {
  std::smatch m;
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex smem(R"(ptxas info\s*: Used \d+ registers[^\n]*?(\d+) bytes smem)");
  static const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  if (!std::regex_search(info, m, regs))  // jit() passes -no-cache, so ptxas always reports; say so if it did not
    ctx.diags.warning("toolchain", "nvJitLink's log holds no ptxas report: the checks read from it (static shared memory, "
                                   "spills) did not run, and the map has no ptxas section");
  if (std::regex_search(info, m, smem)) {
    long st = std::stol(m[1].str());
    if (st > 0) {
      if (st + ctx.smem_bytes > ctx.target.max_smem)
        ctx.diags.error("smem-limit", "component code declares " + std::to_string(st) +
                                          " bytes of static __shared__ memory; with the " + std::to_string(ctx.smem_bytes) +
                                          " allocated bytes the block exceeds " + std::to_string(ctx.target.max_smem));
      else
        ctx.diags.warning("smem-static", "component code declares " + std::to_string(st) +
                                             " bytes of static __shared__ memory that no contract accounts for");
    }
  }
  {  // every unit's report (a link with PTX components assembles several): any spill is warned about
    long long st = 0, ld = 0;
    for (std::sregex_iterator it(info.begin(), info.end(), spill), end; it != end; ++it)
      st += std::stoll((*it)[1].str()), ld += std::stoll((*it)[2].str());
    if (st != 0 || ld != 0)
      ctx.diags.warning("registers", "the linked kernel spills registers (" + std::to_string(st) + " bytes stored, " +
                                         std::to_string(ld) + " loaded)");
  }
  {
    // ptxas keeps wgmma asynchronous only where it can prove no other instruction touches an
    // accumulator register while a group using it may be in flight, on every path (and no call or
    // divergent branch sits inside the pipeline); otherwise it serializes every wgmma of the kernel
    // (each waits for the one before) and says so only as "info". A probe that did this ran 17-22%
    // slower with correct results (bench/NOTES.md, session 18), so the link says it, once, with
    // every reason ptxas gave.
    const WgmmaReport w = wgmma_report(info);
    if (!w.serialized.empty()) {
      std::string why;
      for (const std::string& r : w.serialized) why += (why.empty() ? "" : "; ") + r;
      Diagnostic& d = ctx.diags.warning("wgmma-serialized", "ptxas serialized the linked kernel's wgmma instructions (" + why +
                                                                "): each waits for the one before it");
      d.notes.push_back("ptxas keeps wgmma asynchronous only where, on every path (also paths the code never takes at run "
                        "time), no other instruction reads or writes an accumulator register while a group using it may be "
                        "in flight, no function call or divergent branch sits inside the pipeline, and the accumulators fit "
                        "the warpgroup's registers: look between wgmma issue and wgmma.wait_group, and at the register budget");
      if (w.injected_waits + w.injected_arrives > 0)
        d.notes.push_back("ptxas also injected " + std::to_string(w.injected_waits) + " warpgroup.wait (C7517) and " +
                          std::to_string(w.injected_arrives) + " warpgroup.arrive (C7519); pipelink link -v prints where");
    }
  }
  if (info.find("'setmaxnreg' ignored") != std::string::npos || info.find("C7508") != std::string::npos ||
      info.find("C7504") != std::string::npos) {
    if (ctx.opt.min_registers)  // every warp would run at the lowered cap, below the budgets
      ctx.diags.error("registers", "ptxas ignored setmaxnreg (a component given as PTX?), so with --min-registers every warp would "
                                   "run with the entry's " + std::to_string(ctx.entry_registers) +
                                   " registers, below the budgets; link without --min-registers or give the components as LTO-IR");
    else
      ctx.diags.warning("registers", "ptxas ignored setmaxnreg; the register budgets are not in effect");
  }
}

// How to rebuild component `c`'s object `obj` (the file the link read) of kind `k` for the target.
std::string rebuild_hint(const LinkContext& ctx, const Contract& c, const std::string& obj, InputKind k) {
  const std::string& t = ctx.target.arch;
  const std::string sm = t.substr(3);  // "90a"
  const std::string src = c.source.empty() ? std::string("<source>.cu") : (std::filesystem::path(c.dir) / c.source).string();
  std::string how;
  switch (k) {
    case InputKind::Object:
    case InputKind::Fatbin:
      how = "nvcc -dc -gencode arch=compute_" + sm + ",code=lto_" + sm + " " + src + " -o " + obj + " (one -gencode: " + t + " only)";
      break;
    case InputKind::Ptx: how = "nvcc -ptx -rdc=true -arch=" + t + " " + src + " -o " + obj; break;
    case InputKind::Cubin:
      how = "pipelink compile " + src + " -arch=" + t + " -o <name>.ltoir, and name it in the contract's object key (LTO-IR: "
            "PipeLink cannot read a cubin's records)";
      break;
    default: how = "pipelink compile " + src + " -arch=" + t + " -o " + obj; break;
  }
  return "rebuild it for " + t + ": " + how + "; or in CMake pipelink_add_component(... ARCH " + t + ")";
}

// "LTO-IR for sm_90a", "a cubin for sm_80".
std::string code_phrase(const CodeArch& a) { return (a.kind == "cubin" ? "a cubin" : a.kind) + " for " + a.name(); }

// Every piece of device code in a component's object must be compiled for the link's target
// (objects.h, arch_matches): the same SM, and architecture- or family-specific code only for an
// architecture-specific target. nvJitLink alone refuses only code newer than the target: LTO-IR
// for sm_90a links for sm_100a and sm_120a, and a host object with a generic sm_90 entry beside its
// sm_90a one links for any newer target. An object whose architecture cannot be read is refused
// as well. Reports every such object of the link (rule "target") and returns false for this one.
bool check_object_arch(LinkContext& ctx, const Contract& c, const std::string& path, const std::vector<char>& bytes, InputKind k) {
  const std::string& t = ctx.target.arch;
  std::vector<CodeArch> archs;
  std::string why;
  if (!object_archs(bytes, k, archs, why)) {
    Diagnostic& d = ctx.diags.error("target", "component '" + c.name + "': cannot tell which architecture object '" + path +
                                                  "' was compiled for: it " + why + "; PipeLink links only code it can tell is for "
                                                  "the target " + t, c.object_loc);
    d.notes.push_back(rebuild_hint(ctx, c, path, k));
    return false;
  }
  std::vector<std::string> all, wrong;
  const CodeArch* first = nullptr;
  for (const CodeArch& a : archs) {
    const std::string s = code_phrase(a);
    if (std::find(all.begin(), all.end(), s) == all.end()) all.push_back(s);
    if (arch_matches(a, t)) continue;
    if (!first) first = &a;
    if (std::find(wrong.begin(), wrong.end(), s) == wrong.end()) wrong.push_back(s);
  }
  if (!first) return true;
  auto join = [](const std::vector<std::string>& v) {
    std::string o;
    for (size_t i = 0; i < v.size(); ++i) o += (i ? (i + 1 == v.size() ? " and " : ", ") : "") + v[i];
    return o;
  };
  const bool fat = k == InputKind::Object || k == InputKind::Fatbin;
  Diagnostic& d = ctx.diags.error(
      "target", "component '" + c.name + "': object '" + path + "' " +
                    (fat ? "holds " + join(wrong) + (all.size() > wrong.size() ? " (its fatbin: " + join(all) + ")" : std::string())
                     : archs.size() > 1
                         // PTX with several .target directives: ptxas assembles it for the last one.
                         ? "has " + std::to_string(archs.size()) + " .target directives, " + join(all) +
                               " (ptxas assembles the file for the last one)"
                         : "is " + wrong.front()) +
                    ", but the link's target is " + t,
      c.object_loc);
  // Why, for the first piece of code that does not match.
  const CodeArch& w = *first;
  const unsigned target_sm = static_cast<unsigned>(std::stoul(t.substr(3)));
  const std::string generic = "sm_" + std::to_string(target_sm);
  const std::string cc = std::to_string(w.sm / 10) + "." + std::to_string(w.sm % 10);
  std::string note;
  if (w.sm == target_sm)
    note = w.name() + " code uses the " + (w.suffix == 'a' ? "architecture" : "family") + "-specific feature set, which the target " + t +
           " does not have";
  else
    note = "PipeLink links only code compiled for the target's GPU, here " + t + (t.back() == 'a' ? " or " + generic : std::string()) +
           ": " +
           (w.sm > target_sm ? "code for a newer GPU cannot run on it"
            : w.suffix == 'a' ? w.name() + " code is architecture-specific and runs only on compute capability " + cc
                              : "code compiled for " + w.name() + " took its __CUDA_ARCH__ branches, and wrote its records, for another GPU") +
           // What nvJitLink 13.0 does with it alone (README, Targets): LTO-IR for a lower SM, a or not,
           // and generic PTX for a lower SM are linked; ptxas refuses a-PTX for any other target.
           (w.sm < target_sm && (k == InputKind::LtoIr || (k == InputKind::Ptx && !w.suffix))
                ? " (nvJitLink would link it: it refuses only code newer than the target)"
                : std::string());
  if (fat && all.size() > wrong.size())
    note += "; every entry of the fatbin must be for the target, since nvJitLink, not PipeLink, picks the entry it links";
  d.notes.push_back(note);
  d.notes.push_back(rebuild_hint(ctx, c, path, k));
  return false;
}

}  // namespace

void compile_link(LinkContext& ctx) {
  std::vector<Input> inputs;
  bool any_ptx = false;
  if (ctx.opt.control) {
    // Monolithic control: the components' sources and the same generated unit, one NVRTC program.
    std::ostringstream src;
    src << "// PipeLink monolithic control: component sources and the generated unit in one program.\n";
    std::set<std::string> seen;
    auto macro = [](const std::string& d) {
      size_t eq = d.find('=');
      return eq == std::string::npos ? std::make_pair(d, std::string("1")) : std::make_pair(d.substr(0, eq), d.substr(eq + 1));
    };
    for (const auto& c : ctx.contracts) {
      if (c->source.empty()) {
        ctx.diags.error("input", "component '" + c->name + "' names no source; the monolithic control needs one", c->loc);
        continue;
      }
      std::error_code ec;
      std::string path = std::filesystem::absolute(std::filesystem::path(c->dir) / c->source, ec).string();
      if (ec) path = (std::filesystem::path(c->dir) / c->source).string();
      if (!seen.insert(path).second) continue;
      const auto st = std::filesystem::status(path, ec);
      if (!std::filesystem::exists(st)) {
        ctx.diags.error("input", "component '" + c->name + "': source '" + path + "' does not exist", c->loc);
        continue;
      }
      // NVRTC #includes it: a FIFO or device would never end.
      if (!std::filesystem::is_regular_file(st)) {
        ctx.diags.error("input", "component '" + c->name + "': source '" + path + "' is not a regular file", c->loc);
        continue;
      }
      // Each source sees the macros its object was compiled with, and only those.
      for (const std::string& d : c->defines) src << "#define " << macro(d).first << " " << macro(d).second << "\n";
      src << "#include \"" << path << "\"\n";
      for (const std::string& d : c->defines) src << "#undef " << macro(d).first << "\n";
    }
    src << ctx.unit.text();
    if (ctx.diags.has_errors()) return;
    std::vector<char> ir = compile_to_ltoir(ctx, src.str(), "pipelink_control.cu");
    if (ir.empty()) return;
    inputs.push_back({"control", "", std::move(ir), InputKind::LtoIr, {}});
  } else {
    std::vector<char> ir = compile_to_ltoir(ctx, ctx.unit.text(), "pipelink_generated.cu", true);
    if (ir.empty()) return;
    inputs.push_back({"generated", "", std::move(ir), InputKind::LtoIr, {}});
    std::map<std::string, size_t> by_path;  // canonical object path -> index in inputs
    for (const auto& c : ctx.contracts) {
      std::string path = (std::filesystem::path(c->dir) / c->object).string();
      std::error_code ec;
      for (const std::string& dir : ctx.opt.library_dirs) {
        if (std::filesystem::exists(path, ec)) break;
        path = (std::filesystem::path(dir) / c->object).string();
      }
      // One object named by several contracts is linked once (twice would define every symbol
      // in it twice); the input is labelled with every contract that names it.
      std::string canon = std::filesystem::weakly_canonical(path, ec).string();
      if (ec) canon = path;
      if (auto seen = by_path.find(canon); seen != by_path.end()) {
        inputs[seen->second].label += ", " + c->name;
        inputs[seen->second].contracts.push_back(c.get());
        continue;
      }
      // Only regular files, only up to a size cap (a FIFO or /dev/zero would never end), and only
      // objects that pass validation reach nvJitLink (a malformed one can crash it).
      std::vector<char> bytes;
      std::string why;
      const bool found = std::filesystem::exists(path, ec);
      if (!read_regular_file(path, kMaxObjectBytes, bytes, why)) {
        if (!found)
          ctx.diags.error("input", "component '" + c->name + "': cannot read object '" + c->object + "' (looked in " +
                                       (c->dir.empty() ? std::string(".") : c->dir) +
                                       (ctx.opt.library_dirs.empty() ? std::string() : " and the -L directories") + ")",
                          c->object_loc);
        else
          ctx.diags.error("input", "component '" + c->name + "': cannot read object '" + path + "': " + why, c->object_loc);
        continue;
      }
      InputKind k = classify(bytes, path);
      if (!validate_object(bytes, k, why)) {
        ctx.diags.error("input", "component '" + c->name + "': object '" + path + "' " + why, c->object_loc);
        continue;
      }
      if (!check_object_arch(ctx, *c, path, bytes, k)) continue;
      if (k == InputKind::Ptx || k == InputKind::Cubin) {
        any_ptx = true;
        ctx.diags.warning("no-lto", "component '" + c->name + "' is " + (k == InputKind::Ptx ? "PTX" : "a cubin") +
                                        ": it cannot take part in link-time optimisation, so its bindings are loaded from "
                                        "memory at run time instead of folded into immediates", c->object_loc);
      }
      if (k == InputKind::Ptx) bytes.push_back('\0');  // nvJitLink reads PTX as a C string
      by_path.emplace(canon, inputs.size());
      inputs.push_back({c->name, path, std::move(bytes), k, {c.get()}});
    }
    if (ctx.diags.has_errors()) return;
    // Every object against its contract (conform.cpp) before anything is linked for real.
    conform(ctx, inputs);
    if (ctx.diags.has_errors()) return;
  }

  const std::string arch = "-arch=" + ctx.target.arch;
  std::string info;
  if (!any_ptx) {
    // The cubin comes from one whole-program LTO link, so ptxas sees one compilation unit and
    // honours setmaxnreg (assembling linked PTX separately makes it drop setmaxnreg, C7504).
    // nvJitLink gives no PTX from a cubin link, so the linked kernel's PTX costs one more LTO pass.
    // It runs for every linked kernel (conform_linked scans the kernel with every slot folded) and
    // for a control only when the PTX is asked for; a control's undefined bindings are read from
    // ptxas's log of the cubin link (see the top of the file).
    const bool want_ptx = ctx.opt.emit_ptx || ctx.opt.save_temps;
    if (want_ptx || !ctx.opt.control) {
      std::vector<char> ptx;
      if (!jit(ctx, {arch, "-lto", "-ptx"}, inputs, true, ptx, info)) return;
      ctx.result.linked_ptx.assign(ptx.begin(), ptx.end());
      check_undefined(ctx, ctx.result.linked_ptx, inputs);
      if (!ctx.opt.control) conform_linked(ctx, ctx.result.linked_ptx);
    }
    if (ctx.diags.has_errors()) return;
  }
  {
    std::vector<char> cubin;
    std::vector<std::string> options{arch, "-lto", "-verbose"};
    // PTX components are assembled on their own (ptxas -c): without the entry's register cap,
    // ptxas gives a component function more registers than the entry that calls it may use, and
    // the link fails ("entry function ... with max regcount of N calls function ... with regcount
    // of M"). The cap is the launch bound the entry already has.
    if (any_ptx && ctx.entry_registers > 0) options.push_back("-maxrregcount=" + std::to_string(ctx.entry_registers));
    if (!jit(ctx, options, inputs, false, cubin, info)) return;
    // The control (one program, no probe) and PTX inputs: what the linker's own log reports.
    if (any_ptx || ctx.opt.control) {
      static const std::regex unres(R"(Unresolved extern variable '([^']+)')");
      for (std::sregex_iterator it(info.begin(), info.end(), unres), end; it != end; ++it)
        ctx.diags.error("undefined-binding", "the linked kernel reads '" + (*it)[1].str() + "', which nothing defines");
    }
    ctx.result.cubin = std::move(cubin);
  }
  ctx.result.toolchain_log = info;
  check_ptxas_report(ctx, info);
  if (ctx.opt.verbose && !info.empty()) std::cerr << info << "\n";
}

bool compile_component(const std::string& source_path, const LinkOptions& options, Diagnostics& diags) {
  if (same_file(options.output, source_path)) {
    diags.error("output", "-o '" + options.output + "' is the source '" + source_path + "'; refusing to overwrite an input");
    return false;
  }
  std::vector<char> bytes;
  std::string why;
  if (!read_regular_file(source_path, kMaxSourceBytes, bytes, why)) {
    diags.error("input", why == "it is a directory" ? "'" + source_path + "' is a directory" : "cannot open '" + source_path + "': " + why);
    return false;
  }
  std::string src(bytes.begin(), bytes.end());
  LinkContext ctx(options, diags);
  ctx.target.arch = options.arch;
  std::vector<char> ir = compile_to_ltoir(ctx, src, source_path);
  if (ir.empty()) return false;
  return write_files({{options.output, ir.data(), ir.size()}}, diags);
}

WgmmaReport wgmma_report(const std::string& log) {
  // Line by line with find, not std::regex: libstdc++'s regex recurses per character and a log
  // line with a long (mangled) function name overflowed the stack (review helper-40).
  static const std::string kPhrase = "Potential Performance Loss: wgmma.mma_async instructions are serialized due to ";
  WgmmaReport r;
  for (size_t b = 0; b < log.size();) {
    size_t e = log.find_first_of("\r\n", b);
    if (e == std::string::npos) e = log.size();
    const std::string line = log.substr(b, e - b);
    b = e + 1;
    if (line.find("(C7517)") != std::string::npos) ++r.injected_waits;
    if (line.find("(C7519)") != std::string::npos) ++r.injected_arrives;
    const size_t at = line.find(kPhrase);
    if (at == std::string::npos) continue;
    const size_t open = line.rfind("(C", at);
    const size_t close = open == std::string::npos ? std::string::npos : line.find(')', open);
    const std::string code = close != std::string::npos && close < at ? line.substr(open + 1, close - open - 1) : "ptxas";
    std::string why = line.substr(at + kPhrase.size());
    const size_t fn = why.rfind(" in the function '");
    if (fn != std::string::npos) why.resize(fn);
    while (!why.empty() && (why.back() == '.' || why.back() == ' ' || why.back() == '\t')) why.pop_back();
    const std::string item = code + ": " + why;
    if (std::find(r.serialized.begin(), r.serialized.end(), item) == r.serialized.end()) r.serialized.push_back(item);
  }
  return r;
}

}  // namespace pipelink
