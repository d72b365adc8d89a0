// objects — safe reading of input files and structural validation of component objects (see
// objects.h). Everything here is bounds-checked against the bytes actually read: nothing trusts
// an offset or size field before comparing it with the file's size.
#include "objects.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace pipelink {

bool read_regular_file(const std::string& path, size_t cap, std::vector<char>& out, std::string& why) {
  out.clear();
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = std::strerror(errno);
    return false;
  }
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  if (!ok) why = std::strerror(errno);
  else if (S_ISDIR(st.st_mode)) { why = "it is a directory"; ok = false; }
  else if (!S_ISREG(st.st_mode)) { why = "it is not a regular file"; ok = false; }
  else if (static_cast<uint64_t>(st.st_size) > cap) {
    why = "it is larger than " + std::to_string(cap) + " bytes";
    ok = false;
  }
  if (ok) {
    // Read at most cap + 1 bytes: a file that grows while it is read is still bounded.
    out.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    for (;;) {
      if (got == out.size()) {
        if (out.size() > cap) break;
        out.resize(std::min(cap + 1, out.size() + 65536));
      }
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) { why = std::strerror(errno); ok = false; break; }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    out.resize(got);
    if (ok && got > cap) {
      why = "it is larger than " + std::to_string(cap) + " bytes";
      ok = false;
    }
  }
  ::close(fd);
  if (!ok) out.clear();
  return ok;
}

namespace {

constexpr unsigned kEmCuda = 190, kEmX86_64 = 62, kEmAarch64 = 183;
constexpr uint32_t kFatbinMagic = 0xba55ed50;

uint64_t rd(const std::vector<char>& b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<unsigned char>(b[off + i])) << (8 * i);
  return v;
}

// [off, off + size) lies within a buffer of `total` bytes, without overflow.
bool within(uint64_t off, uint64_t size, uint64_t total) { return off <= total && size <= total - off; }

// A fatbin (its header, then entries each with its own header and payload) in bytes [off, off + avail).
bool valid_fatbin(const std::vector<char>& b, size_t off, uint64_t avail, std::string& why) {
  if (avail < 16 || rd(b, off, 4) != kFatbinMagic) { why = "does not hold a fatbin (bad magic number)"; return false; }
  const uint64_t header = rd(b, off + 6, 2), fat = rd(b, off + 8, 8);
  if (header < 16 || !within(header, fat, avail)) { why = "has a fatbin whose header gives a size beyond its end"; return false; }
  uint64_t at = header, end = header + fat;
  if (fat == 0) { why = "has an empty fatbin"; return false; }
  while (at < end) {
    if (!within(at, 16, end)) { why = "has a truncated fatbin entry"; return false; }
    const uint64_t eh = rd(b, off + at + 4, 4), es = rd(b, off + at + 8, 8);
    if (eh < 16 || !within(at, eh, end) || !within(at + eh, es, end)) {
      why = "has a fatbin entry whose size runs past the fatbin's end";
      return false;
    }
    at += eh + es;
  }
  return true;
}

struct Section { uint32_t name, type; uint64_t offset, size, link, info, entsize; };

// `sections`, if given, receives [offset, size) of every fatbin section of a host object, or of a
// cubin's toolkit note (.note.nv.tkinfo): where object_archs reads the architecture.
bool validate_elf(const std::vector<char>& b, std::string& why, std::vector<std::pair<uint64_t, uint64_t>>* sections = nullptr) {
  const uint64_t n = b.size();
  if (n < 64) { why = "is a truncated ELF file (" + std::to_string(n) + " bytes, shorter than its header)"; return false; }
  if (b[4] != 2) { why = "is not a 64-bit ELF file"; return false; }
  if (b[5] != 1) { why = "is not a little-endian ELF file"; return false; }
  if (b[6] != 1) { why = "has an unknown ELF version"; return false; }
  const unsigned machine = static_cast<unsigned>(rd(b, 18, 2));
  if (machine != kEmCuda && machine != kEmX86_64 && machine != kEmAarch64) {
    why = "is an ELF file for machine " + std::to_string(machine) + ", neither a CUDA cubin (190) nor an x86-64 or AArch64 host object";
    return false;
  }
  if (rd(b, 52, 2) != 64) { why = "has a malformed ELF header (e_ehsize is not 64)"; return false; }
  const uint64_t phoff = rd(b, 32, 8), shoff = rd(b, 40, 8);
  const uint64_t phentsize = rd(b, 54, 2), phnum = rd(b, 56, 2), shentsize = rd(b, 58, 2), shnum = rd(b, 60, 2),
                 shstrndx = rd(b, 62, 2);
  if (phnum && (phentsize != 56 || !within(phoff, phnum * 56, n))) { why = "has a program header table outside the file"; return false; }
  if (shnum == 0) { why = "has no section table"; return false; }
  if (shentsize != 64 || !within(shoff, shnum * 64, n)) { why = "has a section table outside the file"; return false; }
  if (shstrndx >= shnum) { why = "has a section-name table index beyond its section table"; return false; }
  std::vector<Section> sec(shnum);
  for (uint64_t i = 0; i < shnum; ++i) {
    const size_t at = static_cast<size_t>(shoff + i * 64);
    Section& s = sec[i];
    s.name = static_cast<uint32_t>(rd(b, at, 4));
    s.type = static_cast<uint32_t>(rd(b, at + 4, 4));
    s.offset = rd(b, at + 24, 8);
    s.size = rd(b, at + 32, 8);
    s.link = rd(b, at + 40, 4);
    s.info = rd(b, at + 44, 4);
    s.entsize = rd(b, at + 56, 8);
    if (s.type != 8 /* SHT_NOBITS */ && !within(s.offset, s.size, n)) {
      why = "has section " + std::to_string(i) + " outside the file";
      return false;
    }
  }
  const Section& names = sec[shstrndx];
  if (names.type != 3 /* SHT_STRTAB */ || names.size == 0 || b[names.offset + names.size - 1] != '\0') {
    why = "has a malformed section-name table";
    return false;
  }
  auto name_of = [&](const Section& s) -> std::string {
    if (s.name >= names.size) return {};
    return std::string(b.data() + names.offset + s.name);  // NUL-terminated within the table (checked above)
  };
  for (uint64_t i = 1; i < shnum; ++i) {
    const Section& s = sec[i];
    if (s.name >= names.size) { why = "has section " + std::to_string(i) + " whose name lies outside the name table"; return false; }
    if (s.type == 2 /* SHT_SYMTAB */ || s.type == 11 /* SHT_DYNSYM */) {
      if (s.entsize != 24 || s.size % 24 != 0 || s.link >= shnum || sec[s.link].type != 3) {
        why = "has a malformed symbol table (section " + std::to_string(i) + ")";
        return false;
      }
      const Section& str = sec[s.link];
      for (uint64_t k = 0; k < s.size / 24; ++k) {
        const uint64_t st_name = rd(b, static_cast<size_t>(s.offset + k * 24), 4);
        const uint64_t st_shndx = rd(b, static_cast<size_t>(s.offset + k * 24 + 6), 2);
        if (st_name && (st_name >= str.size || b[str.offset + str.size - 1] != '\0')) {
          why = "has a symbol whose name lies outside its string table";
          return false;
        }
        if (st_shndx >= shnum && st_shndx < 0xff00) { why = "has a symbol in a section that does not exist"; return false; }
      }
    }
    if (s.type == 4 /* SHT_RELA */ || s.type == 9 /* SHT_REL */) {
      const uint64_t es = s.type == 4 ? 24 : 16;
      if (s.entsize != es || s.size % es != 0 || s.link >= shnum || (sec[s.link].type != 2 && sec[s.link].type != 11) ||
          s.info >= shnum) {
        why = "has a malformed relocation section (section " + std::to_string(i) + ")";
        return false;
      }
      const uint64_t symbols = sec[s.link].size / 24;
      for (uint64_t k = 0; k < s.size / es; ++k)
        if ((rd(b, static_cast<size_t>(s.offset + k * es + 8), 8) >> 32) >= symbols) {
          why = "has a relocation against a symbol that does not exist";
          return false;
        }
    }
  }
  if (machine == kEmCuda) {
    // A cubin: its architecture is object_archs' question (e_flags and the toolkit note).
    if (sections)
      for (uint64_t i = 1; i < shnum; ++i)
        if (name_of(sec[i]) == ".note.nv.tkinfo" && sec[i].type != 8) sections->push_back({sec[i].offset, sec[i].size});
    return true;
  }
  // A host object (nvcc -c / -dc) carries its device code in fatbin sections.
  bool any = false;
  for (uint64_t i = 1; i < shnum; ++i) {
    const std::string nm = name_of(sec[i]);
    if (nm != ".nv_fatbin" && nm != "__nv_relfatbin") continue;
    if (sec[i].type == 8) { why = "has an empty " + nm + " section"; return false; }
    std::string fw;
    if (!valid_fatbin(b, static_cast<size_t>(sec[i].offset), sec[i].size, fw)) {
      why = "is a host object whose " + nm + " section " + fw;
      return false;
    }
    if (sections) sections->push_back({sec[i].offset, sec[i].size});
    any = true;
  }
  if (any) return true;
  why = "is a host object without device code (no .nv_fatbin or __nv_relfatbin section; compile it with nvcc -dc)";
  return false;
}

bool validate_ptx(const std::vector<char>& b, std::string& why) {
  for (char ch : b) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (u == 0 || (u < 0x20 && ch != '\n' && ch != '\r' && ch != '\t' && ch != '\f' && ch != '\v')) {
      why = "is not PTX text (it holds binary bytes)";
      return false;
    }
  }
  const std::string text(b.begin(), b.end());
  if (text.find(".version") == std::string::npos || text.find(".target") == std::string::npos) {
    why = "is not PTX (no .version and .target directives)";
    return false;
  }
  return true;
}

// PTX text without its comments (// to the end of the line, /* ... */), line breaks kept.
std::string ptx_without_comments(const std::string& t) {
  std::string o;
  o.reserve(t.size());
  for (size_t i = 0; i < t.size();) {
    if (t[i] == '"') {  // a string (in .file) may hold "//"
      size_t e = i + 1;
      while (e < t.size() && t[e] != '"' && t[e] != '\n') ++e;
      o.append(t, i, e + 1 - i);
      i = e + 1;
    } else if (t.compare(i, 2, "//") == 0) {
      while (i < t.size() && t[i] != '\n') ++i;
    } else if (t.compare(i, 2, "/*") == 0) {
      const size_t e = t.find("*/", i + 2);
      o += ' ';  // a comment separates tokens, as whitespace does
      for (size_t k = i; k < (e == std::string::npos ? t.size() : e); ++k) if (t[k] == '\n') o += '\n';
      i = e == std::string::npos ? t.size() : e + 2;
    } else {
      o += t[i++];
    }
  }
  return o;
}

// "sm_90a" -> {90, 'a'}; false if `s` is not sm_<digits>[a|f].
bool parse_sm(const std::string& s, CodeArch& a) {
  if (s.rfind("sm_", 0) != 0 || s.size() < 4) return false;
  size_t i = 3;
  unsigned v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v < 100000) v = v * 10 + static_cast<unsigned>(s[i++] - '0');
  if (i == 3 || v == 0) return false;
  if (i + 1 == s.size() && (s[i] == 'a' || s[i] == 'f')) a.suffix = s[i++];
  if (i != s.size()) return false;
  a.sm = v;
  return true;
}

// Every .target directive of PTX (outside comments and strings): ".target sm_90a" or ".target
// sm_90a, debug", wherever it stands on its line (PTX is free-form: ".version 8.8 .target sm_80"
// and a form feed before the directive are PTX too). ptxas takes a file with several .target
// directives and assembles it for the LAST one (ptxas 13.0: ".target sm_90a" then ".target sm_80"
// is sm_80 code, setmaxnreg refused), so every one is returned and the rule holds for each.
bool ptx_archs(const std::vector<char>& b, std::vector<CodeArch>& out, std::string& why) {
  std::string t = ptx_without_comments(std::string(b.begin(), b.end()));
  for (size_t i = 0; i < t.size(); ++i)  // blank strings (.file names): a ".target" there is text
    if (t[i] == '"') {
      size_t e = i + 1;
      while (e < t.size() && t[e] != '"' && t[e] != '\n') t[e++] = ' ';
      i = e;
    }
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
  const size_t before = out.size();
  for (size_t p = t.find(".target"); p != std::string::npos; p = t.find(".target", p + 7)) {
    if ((p > 0 && !space(t[p - 1])) || p + 7 >= t.size() || !space(t[p + 7])) continue;
    // The target list: comma-separated, up to the end of the line or the next directive.
    size_t e = t.find('\n', p);
    std::string list = t.substr(p + 8, (e == std::string::npos ? t.size() : e) - p - 8);
    std::replace(list.begin(), list.end(), ',', ' ');
    std::istringstream ts(list);
    std::string shown;
    bool found = false;
    for (std::string tok; ts >> tok;) {
      if (tok[0] == '.') break;
      if (tok.back() == ';') tok.pop_back();
      if (tok.rfind("sm_", 0) == 0 || tok.rfind("compute_", 0) == 0) {
        CodeArch a;
        a.kind = "PTX";
        if (!parse_sm(tok, a)) { shown = tok; continue; }
        out.push_back(a);
        found = true;
      }
    }
    if (!found) {
      why = shown.empty() ? "has a .target directive that names no sm_ target" : "is PTX for an unknown target '" + shown + "'";
      return false;
    }
  }
  if (out.size() == before) { why = "has no .target directive outside comments"; return false; }
  return true;
}

// NVVM LTO-IR (NVRTC -dlto, pipelink compile): a header whose fields, from the 16-bit offset at
// byte 12 up to the 32-bit offset at byte 16, are (tag, value) pairs of 16 bits each: tag 1 is the
// compute capability times 10 (900 for sm_90a, 1030 for sm_103a), tag 0x20 = 1 marks
// architecture-specific code (sm_90a, compute_90a), tag 0x63 ends the list. Read from the LTO-IR
// NVRTC 13.0 writes for sm_75 ... sm_121a (README, "Targets": what an object must be built for).
bool ltoir_arch(const std::vector<char>& b, CodeArch& a, std::string& why) {
  why = "has an LTO-IR header without an architecture field";
  if (b.size() < 24 || static_cast<unsigned char>(b[0]) != 0xed) {
    if (b.size() >= 4 && b[0] == 'B' && b[1] == 'C') why = "is LLVM bitcode, whose architecture PipeLink cannot read";
    return false;
  }
  const uint64_t first = rd(b, 12, 2), end = std::min<uint64_t>(rd(b, 16, 4), b.size());
  bool found = false;
  for (uint64_t at = first; at >= 16 && at + 4 <= end; at += 4) {
    const unsigned tag = static_cast<unsigned>(rd(b, static_cast<size_t>(at), 2)), v = static_cast<unsigned>(rd(b, static_cast<size_t>(at + 2), 2));
    if (tag == 0x63) break;
    if (tag == 1 && v >= 10) { a.sm = v / 10; found = true; }
    if (tag == 0x20 && v == 1) a.suffix = 'a';
  }
  a.kind = "LTO-IR";
  return found;
}

// The entries of a fatbin in bytes [off, off + avail) (valid_fatbin checked its structure). An
// entry's header: kind (16 bits: 1 PTX, 2 cubin, 8 LTO-IR), its own size (32 bits at 4), the
// payload's (64 bits at 8), the SM (32 bits at 28: 90, 100, ...) and flags (32 bits at 40: 0x100000
// architecture-specific, 0x200000 family-specific). Read from nvcc 13.0's fatbins (-dc, -c, -fatbin).
bool fatbin_archs(const std::vector<char>& b, size_t off, std::vector<CodeArch>& out, std::string& why) {
  const uint64_t header = rd(b, off + 6, 2), fat = rd(b, off + 8, 8);
  for (uint64_t at = header, end = header + fat; at < end;) {
    const unsigned kind = static_cast<unsigned>(rd(b, static_cast<size_t>(off + at), 2));
    const uint64_t eh = rd(b, static_cast<size_t>(off + at + 4), 4), es = rd(b, static_cast<size_t>(off + at + 8), 8);
    if (eh < 48) { why = "has a fatbin entry whose header is too short to say its architecture"; return false; }
    CodeArch a;
    a.kind = kind == 1 ? "PTX" : kind == 2 ? "cubin" : kind == 8 ? "LTO-IR" : "";
    if (a.kind.empty()) { why = "has a fatbin entry of kind " + std::to_string(kind) + ", which PipeLink does not know"; return false; }
    a.sm = static_cast<unsigned>(rd(b, static_cast<size_t>(off + at + 28), 4));
    const uint64_t flags = rd(b, static_cast<size_t>(off + at + 40), 4);
    a.suffix = flags & 0x100000 ? 'a' : flags & 0x200000 ? 'f' : 0;
    if (a.sm == 0 || a.sm > 10000) { why = "has a fatbin entry for no known architecture (sm_" + std::to_string(a.sm) + ")"; return false; }
    out.push_back(a);
    at += eh + es;
  }
  if (out.empty()) { why = "has a fatbin without device code"; return false; }
  return true;
}

}  // namespace

InputKind classify(const std::vector<char>& b, const std::string& path) {
  auto starts = [&](const char* m, size_t n) { return b.size() >= n && std::equal(m, m + n, b.begin()); };
  if (starts("\x7f" "ELF", 4)) {
    // e_machine 190 = EM_CUDA: a cubin; anything else is a host object carrying a fatbin.
    unsigned machine = b.size() > 19 ? (unsigned char)b[18] | ((unsigned char)b[19] << 8) : 0;
    return machine == kEmCuda ? InputKind::Cubin : InputKind::Object;
  }
  if (starts("\x50\xed\x55\xba", 4)) return InputKind::Fatbin;
  if (starts("\xed\x43\x4e\x7f", 4) || starts("BC\xc0\xde", 4)) return InputKind::LtoIr;
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".ltoir") return InputKind::LtoIr;
  std::string head(b.begin(), b.begin() + std::min<size_t>(b.size(), 4096));
  if (head.find(".version") != std::string::npos && head.find(".target") != std::string::npos) return InputKind::Ptx;
  return InputKind::Unknown;
}

bool validate_object(const std::vector<char>& b, InputKind kind, std::string& why) {
  if (b.empty()) { why = "is empty"; return false; }
  switch (kind) {
    case InputKind::Object:
    case InputKind::Cubin: return validate_elf(b, why);
    case InputKind::Fatbin: return valid_fatbin(b, 0, b.size(), why);
    case InputKind::LtoIr: {
      const bool nvvm = b.size() >= 4 && static_cast<unsigned char>(b[0]) == 0xed;
      const bool bitcode = b.size() >= 4 && b[0] == 'B' && b[1] == 'C';
      // The NVVM LTO-IR container has a 64-byte header. Raw LLVM bitcode is not LTO-IR to
      // nvJitLink ("does not match type NVJITLINK_INPUT_LTOIR", nvJitLink 13.0).
      if (bitcode) {
        why = "is LLVM bitcode, which nvJitLink does not take as LTO-IR (it takes the NVVM LTO-IR that NVRTC -dlto, "
              "pipelink compile or nvcc code=lto_XX write)";
        return false;
      }
      if ((nvvm && b.size() < 64) || !nvvm) {
        why = nvvm ? "is truncated LTO-IR (" + std::to_string(b.size()) + " bytes)"
                   : "is named .ltoir but is not LTO-IR (no NVVM or LLVM bitcode magic number)";
        return false;
      }
      return true;
    }
    case InputKind::Ptx: return validate_ptx(b, why);
    case InputKind::Unknown: why = "is not LTO-IR, a host object, PTX, a fatbin or a cubin"; return false;
  }
  return false;
}

bool object_archs(const std::vector<char>& b, InputKind kind, std::vector<CodeArch>& out, std::string& why) {
  out.clear();
  switch (kind) {
    case InputKind::LtoIr: {
      CodeArch a;
      if (!ltoir_arch(b, a, why)) return false;
      out.push_back(a);
      return true;
    }
    case InputKind::Ptx: return ptx_archs(b, out, why);
    case InputKind::Fatbin: return valid_fatbin(b, 0, b.size(), why) && fatbin_archs(b, 0, out, why);
    case InputKind::Object: {
      std::vector<std::pair<uint64_t, uint64_t>> fatbins;
      if (!validate_elf(b, why, &fatbins)) return false;
      for (const auto& f : fatbins)
        if (!fatbin_archs(b, static_cast<size_t>(f.first), out, why)) return false;
      return true;
    }
    case InputKind::Cubin: {
      // EI_ABIVERSION 8 and later keep the SM in e_flags bits 8..15; older cubins in bits 0..7.
      // e_flags does not tell sm_90 from sm_90a: the toolkit note (.note.nv.tkinfo) records the
      // assembler's "-arch sm_90a", when there is one.
      std::vector<std::pair<uint64_t, uint64_t>> notes;
      if (!validate_elf(b, why, &notes)) return false;
      CodeArch a;
      a.kind = "cubin";
      const uint64_t flags = rd(b, 48, 4);
      a.sm = static_cast<unsigned>(static_cast<unsigned char>(b[8]) >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
      for (const auto& [off, size] : notes) {
        const std::string note(b.data() + static_cast<size_t>(off), static_cast<size_t>(size));
        const size_t at = note.find("-arch sm_");
        if (at == std::string::npos) continue;
        size_t e = at + 6;
        while (e < note.size() && (std::isalnum(static_cast<unsigned char>(note[e])) || note[e] == '_')) ++e;
        CodeArch n;
        if (parse_sm(note.substr(at + 6, e - at - 6), n) && n.sm == a.sm) a.suffix = n.suffix;
      }
      out.push_back(a);
      return true;
    }
    case InputKind::Unknown: break;
  }
  why = "is not LTO-IR, a host object, PTX, a fatbin or a cubin";
  return false;
}

bool arch_matches(const CodeArch& code, const std::string& arch) {
  CodeArch t;
  if (!parse_sm(arch, t)) return false;
  if (code.sm != t.sm) return false;
  return code.suffix == 0 || t.suffix == 'a';
}

}  // namespace pipelink
