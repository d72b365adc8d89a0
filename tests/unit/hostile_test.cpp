// Hostile inputs end in diagnostics: no hang on a FIFO or a huge file, no crash on a malformed
// object (every truncation of a real one is refused or accepted, never read past its end).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "context.h"
#include "objects.h"
#include "pipelink/pipelink.h"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path dir;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "pipelink-hostile-XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string put(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
};

std::string contract(const std::string& object) {
  return "[component]\nname = \"x\"\nentry = \"x_main\"\nobject = \"" + object + "\"\n\n[warps]\ncount = 1\n";
}

std::string run(pipelink::LinkOptions o, bool& ok) {
  pipelink::Diagnostics d;
  pipelink::LinkResult r = pipelink::link(o, d);
  ok = r.ok;
  std::ostringstream s;
  d.print(s);
  return s.str();
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(Hostile, FifoContractIsNotRead) {
  TempDir t;
  const std::string fifo = (t.dir / "c.toml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  pipelink::LinkOptions o;
  o.inputs = {fifo};
  o.check_only = true;
  bool ok = true;
  const std::string out = run(o, ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("it is not a regular file [input]"), std::string::npos) << out;
}

TEST(Hostile, FifoAndHugeObjectsAreNotRead) {
  TempDir t;
  ASSERT_EQ(::mkfifo((t.dir / "fifo.ltoir").c_str(), 0600), 0);
  {
    std::ofstream f(t.dir / "huge.ltoir");
  }
  fs::resize_file(t.dir / "huge.ltoir", pipelink::kMaxObjectBytes + 1);  // sparse: nothing to read
  pipelink::LinkOptions o;
  o.inputs = {t.put("a.toml", contract("fifo.ltoir")),
              t.put("b.toml", "[component]\nname = \"y\"\nentry = \"y_main\"\nobject = \"huge.ltoir\"\n\n[warps]\ncount = 1\n")};
  o.output = (t.dir / "k.cubin").string();
  bool ok = true;
  const std::string out = run(o, ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("fifo.ltoir': it is not a regular file [input]"), std::string::npos) << out;
  EXPECT_NE(out.find("huge.ltoir': it is larger than 536870912 bytes [input]"), std::string::npos) << out;
}

TEST(Hostile, ReadRegularFile) {
  std::vector<char> b;
  std::string why;
  EXPECT_FALSE(pipelink::read_regular_file("/dev/zero", 100, b, why));
  EXPECT_EQ(why, "it is not a regular file");
  EXPECT_FALSE(pipelink::read_regular_file("/", 100, b, why));
  EXPECT_EQ(why, "it is a directory");
  EXPECT_FALSE(pipelink::read_regular_file("/nonexistent/x", 100, b, why));
  EXPECT_EQ(why, "No such file or directory");
  TempDir t;
  const std::string p = t.put("f", "hello");
  EXPECT_TRUE(pipelink::read_regular_file(p, 5, b, why));
  EXPECT_EQ(std::string(b.begin(), b.end()), "hello");
  EXPECT_FALSE(pipelink::read_regular_file(p, 4, b, why));
  EXPECT_EQ(why, "it is larger than 4 bytes");
}

// Every prefix of a real host object, LTO-IR and cubin goes through validation without reading
// past its end (ASan would say) and only the whole file is accepted for the host object.
TEST(Hostile, TruncatedObjectsAreRefused) {
  const std::string obj = std::string(PL_EXAMPLE_OBJ_DIR) + "/tma_loader.o";
  const std::string cubin = std::string(PL_EXAMPLE_OBJ_DIR) + "/gemm.cubin";
  for (const std::string& path : {obj, cubin}) {
    const std::vector<char> whole = bytes_of(path);
    ASSERT_FALSE(whole.empty()) << path;
    const pipelink::InputKind k = pipelink::classify(whole, path);
    std::string why;
    EXPECT_TRUE(pipelink::validate_object(whole, k, why)) << path << ": " << why;
    const size_t step = std::max<size_t>(1, whole.size() / 2000);
    for (size_t n = 0; n < whole.size(); n += step) {
      std::vector<char> part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
      const pipelink::InputKind pk = pipelink::classify(part, path);
      if (pk == pipelink::InputKind::Unknown) continue;
      if (k == pipelink::InputKind::Object) EXPECT_FALSE(pipelink::validate_object(part, pk, why)) << path << " cut at " << n;
      else pipelink::validate_object(part, pk, why);  // a cubin's tail may be padding: only must not crash
    }
  }
  std::string why;
  EXPECT_FALSE(pipelink::validate_object({}, pipelink::InputKind::LtoIr, why));
  EXPECT_EQ(why, "is empty");
  // Every prefix of the host object: its architecture is read, or refused, without a crash.
  const std::vector<char> o = bytes_of(obj);
  std::vector<pipelink::CodeArch> archs;
  for (size_t n = 0; n < o.size(); n += std::max<size_t>(1, o.size() / 2000)) {
    std::vector<char> part(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(n));
    pipelink::object_archs(part, pipelink::classify(part, obj), archs, why);
  }
}

// The architecture of the example's objects, and the rule that matches it with a target.
TEST(ObjectArch, ReadsTheExampleObjectsAndMatchesTheTarget) {
  using pipelink::CodeArch;
  std::string why;
  std::vector<CodeArch> archs;
  // nvcc -dc -gencode arch=compute_90a,code=lto_90a: one LTO-IR entry in the fatbin.
  const std::vector<char> o = bytes_of(std::string(PL_EXAMPLE_OBJ_DIR) + "/tma_loader.o");
  ASSERT_TRUE(pipelink::object_archs(o, pipelink::InputKind::Object, archs, why)) << why;
  ASSERT_EQ(archs.size(), 1u);
  EXPECT_EQ(archs[0].kind, "LTO-IR");
  EXPECT_EQ(archs[0].name(), "sm_90a");
  // The linked cubin: e_flags say sm_90, the toolkit note says sm_90a.
  const std::vector<char> c = bytes_of(std::string(PL_EXAMPLE_OBJ_DIR) + "/gemm.cubin");
  ASSERT_TRUE(pipelink::object_archs(c, pipelink::InputKind::Cubin, archs, why)) << why;
  ASSERT_EQ(archs.size(), 1u);
  EXPECT_EQ(archs[0].kind, "cubin");
  EXPECT_EQ(archs[0].sm, 90u);
  EXPECT_FALSE(pipelink::arch_matches(archs[0], "sm_100a"));
  // The rule (README, "Targets"): the same SM; a and f code only for an a target.
  const struct { unsigned sm; char suffix; const char* target; bool ok; } rule[] = {
      {90, 'a', "sm_90a", true},   {90, 0, "sm_90a", true},     {90, 'a', "sm_90", false},  {90, 0, "sm_90", true},
      {90, 'a', "sm_100a", false}, {90, 0, "sm_100a", false},   {90, 'a', "sm_120a", false}, {80, 0, "sm_90a", false},
      {100, 'f', "sm_100a", true}, {100, 'f', "sm_103a", false}, {103, 'a', "sm_103a", true}, {120, 'a', "sm_120a", true},
      {100, 'a', "sm_90a", false},
  };
  for (const auto& r : rule)
    EXPECT_EQ(pipelink::arch_matches(CodeArch{"LTO-IR", r.sm, r.suffix}, r.target), r.ok)
        << "sm_" << r.sm << (r.suffix ? std::string(1, r.suffix) : "") << " for " << r.target;
  // PTX: the .target directive, not a comment that names another one.
  const std::string ptx = "// .target sm_80\n.version 8.8\n/* .target sm_75 */ .target sm_90a, debug\n.address_size 64\n";
  ASSERT_TRUE(pipelink::object_archs(std::vector<char>(ptx.begin(), ptx.end()), pipelink::InputKind::Ptx, archs, why)) << why;
  EXPECT_EQ(archs.at(0).name(), "sm_90a");
  // Red team 4: ptxas assembles a file with several .target directives for the last one, so each
  // is read; a directive after another on its line, or after a form feed, is still a directive;
  // one inside a string (.file) is not.
  const struct { const char* ptx; const char* archs; } cases[] = {
      {".version 8.8\n.target sm_90a\n.target sm_80\n.address_size 64\n", "sm_90a sm_80"},
      {".version 8.8 .target sm_80 .address_size 64\n", "sm_80"},
      {".version 8.8\n\f.target sm_80\n.address_size 64\n", "sm_80"},
      {".version 8.8\n.target sm_90a\n.file 1 \" .target sm_80\"\n.address_size 64\n", "sm_90a"},
      {".version 8.8\n.target sm_90a/* c */.target sm_80\n", "sm_90a sm_80"},
  };
  for (const auto& c : cases) {
    const std::string p = c.ptx;
    ASSERT_TRUE(pipelink::object_archs(std::vector<char>(p.begin(), p.end()), pipelink::InputKind::Ptx, archs, why)) << why << "\n" << p;
    std::string got;
    for (const CodeArch& a : archs) got += (got.empty() ? "" : " ") + a.name();
    EXPECT_EQ(got, c.archs) << p;
  }
}

// Random corruption of a real host object's headers: refused or accepted, never a crash.
TEST(Hostile, CorruptedObjectHeaders) {
  const std::string obj = std::string(PL_EXAMPLE_OBJ_DIR) + "/tma_loader.o";
  const std::vector<char> whole = bytes_of(obj);
  ASSERT_GT(whole.size(), 64u);
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (int i = 0; i < 5000; ++i) {
    std::vector<char> b = whole;
    for (int k = 0; k < 4; ++k) {
      // The ELF header, the section table (at the end) and the fatbin's header.
      const size_t region = next() % 3;
      size_t at = region == 0 ? next() % 64 : region == 1 ? b.size() - 1 - next() % 2048 : next() % b.size();
      b[at] = static_cast<char>(next());
    }
    std::string why;
    pipelink::validate_object(b, pipelink::classify(b, obj), why);
  }
}

TEST(Hostile, OutputThatIsAnInputIsRefused) {
  TempDir t;
  pipelink::LinkOptions o;
  o.inputs = {t.put("a.toml", contract("a.ltoir"))};
  const std::vector<char> before = bytes_of(o.inputs[0]);
  o.output = o.inputs[0];
  o.map_path = (t.dir / "." / "a.toml").string();
  bool ok = true;
  const std::string out = run(o, ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("-o and --map name the same file"), std::string::npos) << out;
  EXPECT_NE(out.find("is the input contract"), std::string::npos) << out;
  EXPECT_EQ(bytes_of(o.inputs[0]), before);
  // A hard link is the same file under another name.
  fs::create_hard_link(o.inputs[0], t.dir / "b.toml");
  o.output = (t.dir / "k.cubin").string();
  o.map_path = (t.dir / "b.toml").string();
  EXPECT_FALSE(pipelink::write_outputs(o, pipelink::LinkResult{true}, *std::make_unique<pipelink::Diagnostics>()));
}
