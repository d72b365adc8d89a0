// End-to-end tests of the linker on the GEMM example (CPU only): full link to cubin, the linked
// PTX shows the bindings folded, byte-identical output across runs, the monolithic control,
// and golden files for the generated connection unit and the map.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "context.h"  // printable, is_identifier
#include "pipelink/pipelink.h"

namespace {

const std::string kSrc = PL_SOURCE_DIR;

pipelink::LinkOptions example_options() {
  pipelink::LinkOptions o;
  // Relative contract paths keep diagnostics and the map independent of the checkout location.
  o.inputs = {"examples/gemm/loader/contract.toml", "examples/gemm/mma/contract.toml", "examples/gemm/mma/contract.toml",
              "examples/gemm/writer/contract.toml"};
  o.library_dirs = {PL_EXAMPLE_OBJ_DIR};
  return o;
}

struct InSourceDir {
  std::filesystem::path old = std::filesystem::current_path();
  InSourceDir() { std::filesystem::current_path(kSrc); }
  ~InSourceDir() { std::filesystem::current_path(old); }
};

// emit_ptx: keep the linked PTX (a link makes it only when asked: the cubin is one LTO pass).
pipelink::LinkResult link_example(bool control = false, bool check_only = false, bool emit_ptx = false) {
  InSourceDir here;
  pipelink::LinkOptions o = example_options();
  o.control = control;
  o.check_only = check_only;
  o.emit_ptx = emit_ptx;
  pipelink::Diagnostics d;
  pipelink::LinkResult r = pipelink::link(o, d);
  std::ostringstream s;
  d.print(s);
  EXPECT_TRUE(r.ok) << s.str();
  EXPECT_FALSE(d.has_errors()) << s.str();
  return r;
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The bytes of an ELF64 section (a cubin's machine code lives in .text.<kernel>).
std::string elf_section(const std::vector<char>& elf, const std::string& name) {
  auto rd = [&](size_t off, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n && off + i < elf.size(); ++i) v |= uint64_t(static_cast<unsigned char>(elf[off + i])) << (8 * i);
    return v;
  };
  if (elf.size() < 64) return {};
  const uint64_t shoff = rd(0x28, 8), shentsize = rd(0x3A, 2), shnum = rd(0x3C, 2), shstrndx = rd(0x3E, 2);
  const uint64_t strtab = rd(shoff + shstrndx * shentsize + 0x18, 8);
  for (uint64_t i = 0; i < shnum; ++i) {
    const uint64_t sh = shoff + i * shentsize;
    const char* n = elf.data() + strtab + rd(sh, 4);
    if (name == n) return std::string(elf.data() + rd(sh + 0x18, 8), rd(sh + 0x20, 8));
  }
  return {};
}

// Set PIPELINK_BLESS=1 to rewrite the golden files after a deliberate change (then review the diff).
void compare_golden(const std::string& actual, const std::string& rel) {
  const std::string path = kSrc + "/" + rel;
  if (std::getenv("PIPELINK_BLESS")) std::ofstream(path) << actual;
  EXPECT_EQ(read(path), actual) << "golden file " << rel << " differs (PIPELINK_BLESS=1 rewrites it; review the diff)";
}

}  // namespace

TEST(ExampleLink, ProducesCubin) {
  pipelink::LinkResult r = link_example();
  ASSERT_GE(r.cubin.size(), 4u);
  EXPECT_EQ(std::string(r.cubin.begin(), r.cubin.begin() + 4), "\x7f" "ELF");
  EXPECT_EQ(r.threads, 384u);
  EXPECT_EQ(r.smem_bytes, 196736u);
  EXPECT_NE(r.toolchain_log.find("0 bytes spill stores"), std::string::npos) << r.toolchain_log;
}

TEST(ExampleLink, LinkedPtxHasBindingsFolded) {
  pipelink::LinkResult r = link_example(false, false, true);
  const std::string& ptx = r.linked_ptx;
  ASSERT_FALSE(ptx.empty());
  // No instruction reads a binding symbol: every fact and slot became an immediate.
  std::regex load_of_binding(R"((ld|ldu)\.[^\n]*\[(pl_fact_|pl_slots_)[^\n]*)");
  std::smatch m;
  EXPECT_FALSE(std::regex_search(ptx, m, load_of_binding)) << "binding loaded at run time: " << m.str();
  std::regex generic_use(R"(\n\s+[a-z][^\n]*\b(pl_fact_\w+|pl_slots_\w+))");
  EXPECT_FALSE(std::regex_search(ptx, m, generic_use)) << "binding symbol used by an instruction: " << m.str();
  // The folded values appear as immediates: register budgets, the named barrier count, the
  // mbarrier offsets (ab full at 196608, c full at 196672) and the tile size in the scheduler.
  EXPECT_NE(ptx.find("setmaxnreg.dec.sync.aligned.u32 40;"), std::string::npos);
  EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 232;"), std::string::npos);
  EXPECT_NE(ptx.find("196608"), std::string::npos);
  EXPECT_NE(ptx.find("196672"), std::string::npos);
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(mma\.sync\.aligned\.m16n8k16)")));
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(cp\.async\.bulk\.tensor\.2d)")));
  EXPECT_EQ(ptx.find(".extern .global"), std::string::npos);
}

TEST(ExampleLink, ByteIdenticalAcrossRuns) {
  pipelink::LinkResult a = link_example(false, false, true);
  pipelink::LinkResult b = link_example(false, false, true);
  pipelink::LinkResult c = link_example();  // without the PTX pass: the same cubin
  ASSERT_FALSE(a.linked_ptx.empty());
  EXPECT_EQ(a.cubin, b.cubin);
  EXPECT_EQ(a.cubin, c.cubin);
  EXPECT_EQ(a.map, b.map);
  EXPECT_EQ(a.generated_source, b.generated_source);
  EXPECT_EQ(a.linked_ptx, b.linked_ptx);
}

TEST(ExampleLink, MonolithicControlLinks) {
  pipelink::LinkResult r = link_example(/*control=*/true);
  ASSERT_FALSE(r.cubin.empty());
  pipelink::LinkResult l = link_example();
  // Same layout; only the linked map has the conformance section (the control reads no objects).
  EXPECT_EQ(r.map, l.map.substr(0, l.map.find("\n== conformance")));
  EXPECT_EQ(r.generated_source, l.generated_source);  // same connection code
}

// The paper's overhead claim, made exact: the separately compiled components linked by PipeLink
// and the monolithic control (one NVRTC program) get byte-identical machine code.
TEST(ExampleLink, LinkedAndControlHaveIdenticalMachineCode) {
  pipelink::LinkResult linked = link_example();
  pipelink::LinkResult control = link_example(/*control=*/true);
  const std::string a = elf_section(linked.cubin, ".text.pipelink_kernel");
  const std::string b = elf_section(control.cubin, ".text.pipelink_kernel");
  ASSERT_GT(a.size(), 1000u);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b) << "the linked kernel's SASS differs from the monolithic control's";
}

TEST(ExampleLink, GeneratedSourceGolden) { compare_golden(link_example(false, true).generated_source, "tests/expected/gemm.generated.cu"); }

TEST(ExampleLink, MapGolden) { compare_golden(link_example(false, true).map, "tests/expected/gemm.map"); }

TEST(ExampleLink, TwoInstancesGetTheirOwnSlots) {
  std::string gen = link_example(false, true).generated_source;
  // Each instance of mma_consumer (inputs 1 and 2) has its own slot table, named barrier and warp
  // range. Slot symbols are numbered by instance; the instance's name is only a comment.
  auto table = [&](const std::string& name, const std::string& symbol) {
    const size_t at = gen.find("// " + name + "\n__device__ const pl::Slots " + symbol + " = {");
    EXPECT_NE(at, std::string::npos) << symbol;
    return at == std::string::npos ? std::string() : gen.substr(at, gen.find("};", at) - at);
  };
  const std::string a = table("mma_consumer#0", "pl_slots_1"), b = table("mma_consumer#1", "pl_slots_2");
  EXPECT_NE(a.find("{1, 0, 0, 0},  // named barrier ids"), std::string::npos) << a;
  EXPECT_NE(b.find("{2, 0, 0, 0},  // named barrier ids"), std::string::npos) << b;
  // Warpgroup roles come first (canonical packing, independent of the input order).
  EXPECT_NE(gen.find("0, 4, 0, 2};  // warps [0, 4), instance 0 of 2"), std::string::npos);
  EXPECT_NE(gen.find("4, 4, 1, 2};  // warps [4, 8), instance 1 of 2"), std::string::npos);
  EXPECT_NE(gen.find("ctx.slots = &pl_slots_1;\n      mma_consumer_main(ctx);"), std::string::npos);
  EXPECT_NE(gen.find("ctx.slots = &pl_slots_2;\n      mma_consumer_main(ctx);"), std::string::npos);
}

// Contract text reaches generated code only inside comments (and the map only as one line).
TEST(ContractText, PrintableCannotLeaveAComment) {
  EXPECT_EQ(pipelink::printable("io-team"), "io-team");
  EXPECT_EQ(pipelink::printable("a\n#error x"), "a\\n#error x");
  EXPECT_EQ(pipelink::printable("x */ int y; /*"), "x * / int y; /*");
  EXPECT_EQ(pipelink::printable("tail\\"), "tail\\x5c");  // no trailing backslash: no line continuation
  EXPECT_EQ(pipelink::printable(std::string("\r\t\x7f", 3)), "\\x0d\\x09\\x7f");
}

TEST(ContractText, Identifiers) {
  EXPECT_TRUE(pipelink::is_identifier("tile_m"));
  EXPECT_TRUE(pipelink::is_identifier("_x0"));
  EXPECT_FALSE(pipelink::is_identifier(""));
  EXPECT_FALSE(pipelink::is_identifier("0x"));
  EXPECT_FALSE(pipelink::is_identifier("tile-m"));
  EXPECT_FALSE(pipelink::is_identifier("a b"));
  EXPECT_FALSE(pipelink::is_identifier("x#0"));
  EXPECT_FALSE(pipelink::is_identifier("caf\xc3\xa9"));
}

// ptxas's notes that it serialized the wgmma pipeline, as nvJitLink's info log carried them
// (CUDA 13.0, session 18): every code's reason, in order; the injected waits and arrives counted.
TEST(PtxasLog, WgmmaSerialized) {
  const std::string log =
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 4377 by compiler to allow use of registers in GMMA in function 'pipelink_kernel'\n"
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 733 by compiler to allow use of registers in GMMA in function 'pipelink_kernel'\n"
      "ptxas info    : (C7517) warpgroup.wait is injected in around line 7972 by compiler to allow use of registers defined by GMMA in function 'pipelink_kernel'\n"
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions "
      "defining accumulator registers of a wgmma between start and end of the pipeline stage in the function 'pipelink_kernel'\n"
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions "
      "reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function 'pipelink_kernel'\n"
      "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized due to program dependence on "
      "compiler-inserted WG.AR in divergent path in the function 'pipelink_kernel'\n"
      "ptxas info    : Used 168 registers, used 3 barriers\n";
  const pipelink::WgmmaReport r = pipelink::wgmma_report(log);
  ASSERT_EQ(r.serialized.size(), 3u);
  EXPECT_EQ(r.serialized[0], "C7515: non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage");
  EXPECT_EQ(r.serialized[1], "C7514: non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage");
  EXPECT_EQ(r.serialized[2], "C7520: program dependence on compiler-inserted WG.AR in divergent path");
  EXPECT_EQ(r.injected_waits, 1);
  EXPECT_EQ(r.injected_arrives, 2);
  // A log where ptxas kept the pipeline (the selected Qwen kernels): nothing.
  const pipelink::WgmmaReport clean = pipelink::wgmma_report(
      "ptxas info    : Compiling entry function 'pipelink_kernel' for 'sm_90a'\nptxas info    : Used 168 registers, used 3 barriers\n");
  EXPECT_TRUE(clean.serialized.empty());
  EXPECT_EQ(clean.injected_waits + clean.injected_arrives, 0);
  // A 100 000-character function name (a long mangled one; a std::regex overflowed the stack near
  // 40 000, review helper-40), CR line ends, and the same reason twice: one item.
  const std::string line = "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
                           "insufficient register resources for the wgmma pipeline in the function '" + std::string(100000, 'f') + "'";
  const pipelink::WgmmaReport longer = pipelink::wgmma_report(line + "\r" + line + "\r");
  ASSERT_EQ(longer.serialized.size(), 1u);
  EXPECT_EQ(longer.serialized[0], "C7511: insufficient register resources for the wgmma pipeline");
}

// The launch manifest binds the cubin to its map: the linked code carries pl_manifest, and its
// text hashes to the map's `manifest` line (what pipelink::Module checks on load).
TEST(ExampleLink, ManifestInCodeMatchesMap) {
  pipelink::LinkResult r = link_example(false, false, true);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.linked_ptx, m, std::regex(R"(\.b8\s+pl_manifest\[(\d+)\]\s*=\s*\{([^}]*)\})")));
  std::string text;
  std::istringstream is(m[2].str());
  for (std::string tok; std::getline(is, tok, ',');) text += static_cast<char>(std::stoi(tok));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  EXPECT_NE(text.find("launch pipelink_kernel threads 384 smem 196736\n"), std::string::npos) << text;
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", pipelink::manifest_hash(text));
  EXPECT_NE(r.map.find(std::string("manifest ") + hash), std::string::npos) << "map does not carry " << hash;
}

// ---- programmatic dependent launch (--pdl) ----

namespace {
pipelink::LinkResult link_example_pdl(bool pdl, bool control, bool check_only, bool emit_ptx = false) {
  InSourceDir here;
  pipelink::LinkOptions o = example_options();
  o.pdl = pdl;
  o.control = control;
  o.check_only = check_only;
  o.emit_ptx = emit_ptx;
  pipelink::Diagnostics d;
  pipelink::LinkResult r = pipelink::link(o, d);
  std::ostringstream s;
  d.print(s);
  EXPECT_TRUE(r.ok) << s.str();
  return r;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

// Without the option the entry has no griddepcontrol, the map's launch line no `pdl` and the
// manifest no `pdl` line (so every existing link keeps its manifest hash).
TEST(Pdl, OffByDefault) {
  pipelink::LinkResult r = link_example_pdl(false, false, true);
  EXPECT_EQ(r.generated_source.find("griddepcontrol"), std::string::npos);
  EXPECT_NE(r.map.find("\nlaunch pipelink_kernel threads 384 smem 196736\n"), std::string::npos) << r.map;
  EXPECT_EQ(r.generated_source.find("\\npdl 1\\n"), std::string::npos);
}

// The manifest names the tile sequence (tile size, extent params), so the runtime can count the
// tiles of a launch (pipelink::Module::tile_count, persistent_grid). A link without [tiles] has no
// such line: the golden cluster-link-map's manifest hash did not change with it.
TEST(Manifest, CarriesTheTileSequence) {
  pipelink::LinkResult r = link_example_pdl(false, false, true);
  EXPECT_NE(r.generated_source.find("\\ntiles 128 128 M N\\n"), std::string::npos) << r.generated_source;
}

// With it, every warpgroup's branch waits after its setmaxnreg (the prologue: mbarrier init, the
// init fence, the block sync) and before any component role or transfer runs, then triggers the
// dependents; the map's launch line ends in `pdl` and the embedded manifest has `pdl 1`.
TEST(Pdl, EntryWaitsBeforeAnyRole) {
  pipelink::LinkResult r = link_example_pdl(true, false, true);
  const std::string& g = r.generated_source;
  const size_t entry = g.find("// ---- entry");
  ASSERT_NE(entry, std::string::npos);
  const std::string e = g.substr(entry);
  EXPECT_EQ(count(g, "griddepcontrol.wait;"), 3u) << e;  // one per warpgroup branch, nothing in the prelude
  EXPECT_EQ(count(e, "griddepcontrol.wait;"), 3u);
  EXPECT_EQ(count(e, "griddepcontrol.launch_dependents;"), 3u);
  // Nothing before the first wait but the prologue.
  const size_t first_wait = e.find("griddepcontrol.wait;");
  EXPECT_LT(e.find("fence.mbarrier_init"), first_wait);
  EXPECT_LT(e.find("__syncthreads();"), first_wait);
  EXPECT_GT(e.find("ctx.slots ="), first_wait);
  // In each warpgroup branch: setmaxnreg, the wait, the trigger, then the roles.
  for (size_t at = e.find("{  // warpgroup "); at != std::string::npos; at = e.find("{  // warpgroup ", at + 1)) {
    const size_t next = e.find("{  // warpgroup ", at + 1);
    const std::string branch = e.substr(at, next == std::string::npos ? std::string::npos : next - at);
    const size_t w = branch.find("griddepcontrol.wait;"), l = branch.find("griddepcontrol.launch_dependents;");
    ASSERT_NE(w, std::string::npos) << branch;
    EXPECT_LT(w, l);
    if (branch.find("setmaxnreg") != std::string::npos) EXPECT_LT(branch.find("setmaxnreg"), w) << branch;
    EXPECT_LT(l, branch.find("ctx.slots =")) << branch;
  }
  EXPECT_NE(r.map.find("\nlaunch pipelink_kernel threads 384 smem 196736 pdl\n"), std::string::npos) << r.map;
  EXPECT_NE(g.find("checked 0\\npdl 1\\n"), std::string::npos) << "the manifest carries no pdl line";
  // The layout is the same as without the option: only the launch and manifest lines differ.
  pipelink::LinkResult plain = link_example_pdl(false, false, true);
  auto after_manifest = [](const std::string& m) { return m.substr(m.find("\ntarget ")); };
  EXPECT_EQ(after_manifest(r.map), after_manifest(plain.map));
  // The golden entry (PIPELINK_BLESS=1 rewrites it).
  compare_golden(e, "tests/expected/gemm_pdl.entry.cu");
}

// --pdl-early-trigger: each warpgroup branch triggers the next grid before it waits (and only
// there); the map's launch line says so; the manifest is that of the plain --pdl link. Without
// --pdl the option is refused.
TEST(Pdl, EarlyTriggerBeforeTheWait) {
  InSourceDir here;
  pipelink::LinkOptions o = example_options();
  o.pdl = true;
  o.pdl_early_trigger = true;
  o.check_only = true;
  pipelink::Diagnostics d;
  pipelink::LinkResult r = pipelink::link(o, d);
  ASSERT_TRUE(r.ok);
  const std::string e = r.generated_source.substr(r.generated_source.find("// ---- entry"));
  EXPECT_EQ(count(e, "griddepcontrol.wait;"), 3u) << e;
  EXPECT_EQ(count(e, "griddepcontrol.launch_dependents;"), 3u) << e;
  for (size_t at = e.find("{  // warpgroup "); at != std::string::npos; at = e.find("{  // warpgroup ", at + 1)) {
    const size_t next = e.find("{  // warpgroup ", at + 1);
    const std::string branch = e.substr(at, next == std::string::npos ? std::string::npos : next - at);
    const size_t w = branch.find("griddepcontrol.wait;"), l = branch.find("griddepcontrol.launch_dependents;");
    ASSERT_NE(l, std::string::npos) << branch;
    EXPECT_LT(l, w) << branch;
    EXPECT_LT(w, branch.find("ctx.slots =")) << branch;
  }
  EXPECT_NE(r.map.find("\nlaunch pipelink_kernel threads 384 smem 196736 pdl early-trigger\n"), std::string::npos) << r.map;
  pipelink::LinkResult late = link_example_pdl(true, false, true);
  auto manifest = [](const std::string& m) { return m.substr(m.find("\nmanifest "), 26); };
  EXPECT_EQ(manifest(r.map), manifest(late.map));
  o.pdl = false;
  pipelink::Diagnostics d2;
  EXPECT_FALSE(pipelink::link(o, d2).ok);
  std::ostringstream s;
  d2.print(s);
  EXPECT_NE(s.str().find("--pdl-early-trigger"), std::string::npos) << s.str();
}

// pdl_wait = "own" (the split-K decode GEMM's loader): in its warpgroup the entry does not wait for
// the whole warpgroup; the other role there (sk_red) waits in its own branch, the loader's branch
// calls it without a wait (its code waits, after it has started the weight stream), and the other
// warpgroup (sk_mma) waits as before. Without --pdl nothing changes.
TEST(Pdl, OwnWaitComponentWaitsItself) {
  InSourceDir here;
  auto link = [](bool pdl) {
    pipelink::LinkOptions o;
    const std::string d = "examples/llama_decode/components/splitk/";
    o.inputs = {d + "sk_loader.toml", d + "sk_mma.toml", d + "sk_red.toml"};
    o.library_dirs = {PL_LLAMA_OBJ_DIR};
    o.connect = {{"out", "acc"}};
    o.pdl = pdl;
    o.check_only = true;
    pipelink::Diagnostics diags;
    pipelink::LinkResult r = pipelink::link(o, diags);
    std::ostringstream s;
    diags.print(s);
    EXPECT_TRUE(r.ok) << s.str();
    return r;
  };
  pipelink::LinkResult r = link(true);
  const std::string e = r.generated_source.substr(r.generated_source.find("// ---- entry"));
  EXPECT_EQ(count(e, "griddepcontrol.wait;"), 2u) << e;
  EXPECT_EQ(count(e, "griddepcontrol.launch_dependents;"), 2u) << e;
  const size_t wg1 = e.find("{  // warpgroup 1");
  ASSERT_NE(wg1, std::string::npos) << e;
  const std::string g0 = e.substr(0, wg1), g1 = e.substr(wg1);
  EXPECT_LT(g0.find("griddepcontrol.wait;"), g0.find("sk_mma_main(ctx);")) << g0;
  const size_t red = g1.find("sk_red_main(ctx);"), loader = g1.find("sk_loader_main(ctx);");
  ASSERT_NE(red, std::string::npos);
  ASSERT_NE(loader, std::string::npos);
  const size_t red_branch = g1.rfind("{  //", red), loader_branch = g1.rfind("{  //", loader);
  EXPECT_NE(g1.substr(red_branch, red - red_branch).find("griddepcontrol.wait;"), std::string::npos) << g1;
  EXPECT_EQ(g1.substr(loader_branch, loader - loader_branch).find("griddepcontrol"), std::string::npos) << g1;
  EXPECT_NE(r.map.find("(pdl_wait own)"), std::string::npos) << r.map;
  EXPECT_EQ(link(false).generated_source.find("griddepcontrol"), std::string::npos);
}

// A tile extent declared as a ptr param with [tiles] device_extent (the MoE down projection with
// w_loader_dev.toml): the generated tile sequence reads the u32 at that address instead of the
// launch value. Under --pdl the entry's wait already precedes every role here (no component waits
// itself), so the tile sequence adds none.
TEST(Tiles, ExtentFromDeviceMemory) {
  InSourceDir here;
  auto link = [](bool pdl) {
    pipelink::LinkOptions o;
    o.inputs = {"examples/moe/dispatch/a_loader.toml", "examples/moe/gemm/w_loader_dev.toml", "examples/moe/gemm/mma_down.toml",
                "examples/moe/gemm/mma_down.toml", "examples/qwen_mlp/store/contract.toml"};
    o.library_dirs = {PL_MOE_OBJ_DIR, PL_MOE_OBJ_DIR "/../qwen_mlp"};
    o.connect = {{"out", "acc"}};
    o.pdl = pdl;
    o.check_only = true;
    pipelink::Diagnostics diags;
    pipelink::LinkResult r = pipelink::link(o, diags);
    std::ostringstream s;
    diags.print(s);
    EXPECT_TRUE(r.ok) << s.str();
    return r;
  };
  pipelink::LinkResult r = link(false);
  const std::string& g = r.generated_source;
  const std::string seq = g.substr(g.find("pl_tile_at(const pl::Args* args"));
  EXPECT_NE(seq.find("const unsigned em = *(const unsigned*)args->word["), std::string::npos) << seq.substr(0, 800);
  EXPECT_NE(seq.find(", en = (unsigned)args->word["), std::string::npos) << seq.substr(0, 800);
  EXPECT_NE(seq.find("const unsigned tiles_m = (em + "), std::string::npos) << seq.substr(0, 800);
  EXPECT_EQ(seq.substr(0, seq.find("\n}\n")).find("griddepcontrol"), std::string::npos);
  EXPECT_NE(r.map.find("extent M read from device memory"), std::string::npos) << r.map;
  const std::string pseq = link(true).generated_source;
  const std::string body = pseq.substr(pseq.find("pl_tile_at(const pl::Args* args"));
  EXPECT_EQ(body.substr(0, body.find("\n}\n")).find("griddepcontrol"), std::string::npos) << body.substr(0, 800);
  EXPECT_NE(pseq.find("*(const unsigned*)args->word["), std::string::npos);
}

// The linked kernel executes the wait (it survives to the PTX and the machine code), the manifest
// in the code hashes to the map's line, and the control links to identical machine code.
TEST(Pdl, LinkedAndControlIdentical) {
  pipelink::LinkResult linked = link_example_pdl(true, false, false, true);
  pipelink::LinkResult control = link_example_pdl(true, true, false);
  EXPECT_EQ(count(linked.linked_ptx, "griddepcontrol.wait;"), 3u);
  EXPECT_EQ(count(linked.linked_ptx, "griddepcontrol.launch_dependents;"), 3u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(linked.linked_ptx, m, std::regex(R"(\.b8\s+pl_manifest\[(\d+)\]\s*=\s*\{([^}]*)\})")));
  std::string text;
  std::istringstream is(m[2].str());
  for (std::string tok; std::getline(is, tok, ',');) text += static_cast<char>(std::stoi(tok));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  EXPECT_NE(text.find("\npdl 1\n"), std::string::npos) << text;
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", pipelink::manifest_hash(text));
  EXPECT_NE(linked.map.find(std::string("manifest ") + hash), std::string::npos);
  const std::string a = elf_section(linked.cubin, ".text.pipelink_kernel");
  const std::string b = elf_section(control.cubin, ".text.pipelink_kernel");
  ASSERT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b) << "the PDL link's SASS differs from its control's";
  EXPECT_EQ(control.map, linked.map.substr(0, linked.map.find("\n== conformance")));
  const std::string plain = elf_section(link_example().cubin, ".text.pipelink_kernel");
  EXPECT_FALSE(plain == a) << "--pdl changed nothing in the machine code";
}
