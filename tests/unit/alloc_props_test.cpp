// Property checks over the allocation of every golden case and every example link (CPU only):
// the passes up to allocate run on the same inputs the CLI would get, and the placement must
// respect the linker's own soundness rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "context.h"

namespace {

const std::string kSrc = PL_SOURCE_DIR;

struct Link {
  std::string name;     // for failure messages
  std::string dir;      // working directory (contract paths are relative to it)
  pipelink::LinkOptions opt;
};

// A golden case's `args` (check/link only), read the way the CLI reads it.
bool golden_link(const std::filesystem::path& dir, Link& out) {
  const std::string kind = dir.parent_path().filename().string();  // golden or filecheck
  std::ifstream f(dir / "args");
  std::vector<std::string> tok;
  for (std::string t; f >> t;) tok.push_back(t);
  if (tok.empty() || (tok[0] != "check" && tok[0] != "link")) return false;
  out.name = kind + "/" + dir.filename().string();
  out.dir = dir.string();
  for (size_t i = 1; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t == "--connect" && i + 1 < tok.size()) {
      const std::string& c = tok[++i];
      const size_t eq = c.find('=');
      if (eq != std::string::npos) out.opt.connect[c.substr(0, eq)] = c.substr(eq + 1);
    } else if (t == "-o" || t == "--map" || t == "-L" || t == "-I" || t == "-D" || t == "--kernel-name" || t == "--arch" ||
               t == "-arch") {
      ++i;
    } else if (t[0] != '-') {
      out.opt.inputs.push_back(t);
    }
  }
  return true;
}

std::vector<Link> example_links() {
  const std::string q = "examples/qwen_mlp/", m = "examples/moe/", g = "examples/gemm/";
  auto mk = [&](std::string name, std::vector<std::string> in, bool gemm_only = false) {
    Link l;
    l.name = std::move(name);
    l.dir = kSrc;
    l.opt.inputs = std::move(in);
    if (gemm_only) l.opt.connect["out"] = "acc";
    return l;
  };
  std::vector<Link> v;
  v.push_back(mk("gemm", {g + "loader/contract.toml", g + "mma/contract.toml", g + "mma/contract.toml", g + "writer/contract.toml"}));
  const std::vector<std::pair<std::string, std::vector<std::string>>> mains = {
      {"", {q + "loader/contract.toml", q + "mma/contract.toml", q + "mma/contract.toml"}},
      {"_medium", {q + "loader/contract.toml", q + "mma/contract_medium.toml", q + "mma/contract_medium.toml"}},
      {"_narrow", {q + "loader/contract_narrow.toml", q + "mma/contract_narrow.toml", q + "mma/contract_narrow.toml"}},
      {"_small", {q + "loader/contract_small.toml", q + "mma/contract_small.toml"}}};
  for (const auto& [suffix, main] : mains) {
    std::vector<std::string> fused = main, gemm = main;
    fused.push_back(q + "swiglu/contract.toml");
    fused.push_back(q + "store/contract.toml");
    gemm.push_back(q + "store/contract.toml");
    v.push_back(mk("qwen_mlp fused" + suffix, fused));
    v.push_back(mk("qwen_mlp gemm" + suffix, gemm, true));
  }
  v.push_back(mk("moe gate_up", {m + "dispatch/gather.toml", m + "gemm/w_loader.toml", m + "gemm/mma_gu.toml", m + "gemm/mma_gu.toml",
                                 m + "activation/contract.toml", q + "store/contract.toml"}));
  v.push_back(mk("moe down", {m + "dispatch/a_loader.toml", m + "gemm/w_loader.toml", m + "gemm/mma_down.toml",
                              m + "gemm/mma_down.toml", m + "combine/contract.toml"}, true));
  v.push_back(mk("gpu transfer", {"tests/gpu/transfer/source.toml", "tests/gpu/transfer/sink.toml"}));
  v.push_back(mk("gpu checked", {"tests/gpu/checked/idle_source.toml", "tests/gpu/transfer/sink.toml"}));
  return v;
}

std::vector<Link> all_links() {
  std::vector<Link> v = example_links();
  std::vector<std::filesystem::path> dirs;
  for (const char* sub : {"/tests/golden", "/tests/filecheck"})
    for (const auto& e : std::filesystem::directory_iterator(kSrc + sub))
      if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    Link l;
    if (golden_link(d, l)) v.push_back(std::move(l));
  }
  return v;
}

// Runs parse → resolve → check → connect → check_link → insert_transfers → allocate in the link's directory; calls f(ctx) when allocation
// ran (check found every size in range). Returns whether it did.
template <class F> bool allocate_and(const Link& l, F f) {
  const std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(l.dir);
  pipelink::Diagnostics d;
  pipelink::LinkContext ctx(l.opt, d);
  bool ran = false;
  pipelink::parse_contracts(ctx);
  if (!d.has_errors()) {
    pipelink::resolve_facts(ctx);
    if (!d.has_errors()) {
      pipelink::check(ctx);
      pipelink::connect(ctx);
      pipelink::check_link(ctx);
      pipelink::insert_transfers(ctx);
      pipelink::allocate(ctx);
      ran = ctx.sizes_ok && !ctx.smem.empty();
      if (ran) f(ctx, d);
    }
  }
  std::filesystem::current_path(old);
  return ran;
}

bool disjoint_phases(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return false;
  for (const auto& x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) return false;
  return true;
}

}  // namespace

// No two shared-memory blocks that can be live at the same time overlap. Only regions of one
// instance whose live phase lists are disjoint may share bytes; rings, mbarriers, regions of
// different instances and always-live regions never do.
TEST(AllocationProperties, ConcurrentlyLiveSmemNeverOverlaps) {
  int checked = 0, examples = 0;
  for (const Link& l : all_links()) {
    const bool example = l.name.find('/') == std::string::npos;
    const bool ran = allocate_and(l, [&](const pipelink::LinkContext& ctx, const pipelink::Diagnostics& d) {
      if (example) {
        std::ostringstream s;
        d.print(s);
        EXPECT_FALSE(d.has_errors()) << l.name << ":\n" << s.str();
      }
      const auto& b = ctx.smem;
      for (size_t i = 0; i < b.size(); ++i) {
        EXPECT_GE(b[i].offset, 0) << l.name << ": " << b[i].owner << " '" << b[i].name << "' unplaced";
        EXPECT_EQ(b[i].offset % b[i].align, 0) << l.name << ": " << b[i].owner << " '" << b[i].name << "' misaligned";
        for (size_t j = 0; j < i; ++j) {
          const bool overlap = b[i].offset < b[j].offset + b[j].bytes && b[j].offset < b[i].offset + b[i].bytes;
          if (!overlap) continue;
          const bool never_together = b[i].instance >= 0 && b[i].instance == b[j].instance && disjoint_phases(b[i].live, b[j].live);
          EXPECT_TRUE(never_together) << l.name << ": " << b[i].owner << " '" << b[i].name << "' [" << b[i].offset << ", +"
                                      << b[i].bytes << ") overlaps " << b[j].owner << " '" << b[j].name << "' [" << b[j].offset
                                      << ", +" << b[j].bytes << ") and both can be live at once";
        }
      }
    });
    checked += ran;
    examples += ran && example;
  }
  EXPECT_GE(examples, 13);  // every example link allocated
  EXPECT_GE(checked, 40);
}

// Warp packing does not depend on the order of the contracts on the command line: every example
// link, with its inputs reversed and rotated, gets the same warps for every instance (by name)
// and the same block size.
TEST(AllocationProperties, WarpPackingIsOrderIndependent) {
  using Layout = std::map<std::string, std::pair<unsigned, unsigned>>;  // instance → (warp_base, warps)
  auto layout = [](const Link& l, unsigned& total) {
    Layout out;
    allocate_and(l, [&](const pipelink::LinkContext& ctx, const pipelink::Diagnostics&) {
      total = ctx.total_warps;
      for (const pipelink::Instance& in : ctx.instances) out[in.name] = {in.warp_base, in.warps};
    });
    return out;
  };
  int compared = 0;
  for (const Link& l : all_links()) {
    unsigned total = 0;
    const Layout ref = layout(l, total);
    if (ref.empty()) continue;
    std::vector<Link> orders;
    Link rev = l;
    std::reverse(rev.opt.inputs.begin(), rev.opt.inputs.end());
    orders.push_back(rev);
    for (size_t k = 1; k < l.opt.inputs.size(); ++k) {
      Link rot = l;
      std::rotate(rot.opt.inputs.begin(), rot.opt.inputs.begin() + k, rot.opt.inputs.end());
      orders.push_back(rot);
    }
    for (const Link& o : orders) {
      unsigned t = 0;
      const Layout got = layout(o, t);
      EXPECT_EQ(t, total) << l.name << ": the block's warps depend on the input order";
      EXPECT_EQ(got, ref) << l.name << ": warp placement depends on the input order";
    }
    ++compared;
  }
  EXPECT_GE(compared, 40);
}

// Every pipe's full and empty mbarriers count exactly the arrivals the contracts declare, worked
// out here from the contracts alone (ports joined by name after --connect): full = the producers'
// arrivals (1 per instance for "one", its warps for "warp", its threads for "thread"), empty = the
// consumers'. A generated transfer adds its one lane: on the empty barrier of the pipe it reads
// and the full barrier of the pipe it fills (<name>.xfer), whose consumers are the original
// consumers. A multicast pipe's empty barrier counts the consumers of every block of its
// group. Each pipe's mbarrier slots hold those counts, one mbarrier per stage.
TEST(AllocationProperties, BarrierCountsEqualDeclaredArrivals) {
  int pipes = 0, links = 0;
  for (const Link& l : all_links()) {
    const bool ran = allocate_and(l, [&](const pipelink::LinkContext& ctx, const pipelink::Diagnostics&) {
      std::map<std::string, int64_t> full, empty;  // by pipe name, from the contracts
      for (const pipelink::Instance& in : ctx.instances) {
        const pipelink::Contract& c = *in.contract;
        for (const pipelink::PortDecl& p : c.ports) {
          auto r = l.opt.connect.find(p.name);
          const std::string pipe = r == l.opt.connect.end() ? p.name : r->second;
          const int64_t w = c.warps.value;
          const int64_t n = p.arrive == pipelink::Arrive::One ? 1 : p.arrive == pipelink::Arrive::Warp ? w : w * 32;
          (p.dir == pipelink::PortDir::Out ? full : empty)[pipe] += n;
        }
      }
      for (const pipelink::Pipe& p : ctx.pipes) {
        // A pipe with no producer or no consumer is refused (port-unconnected) and gets no barriers.
        if (p.producers.empty() && p.transfer_from < 0) continue;
        if (p.consumers.empty() && p.transfer_to < 0) continue;
        int64_t want_full = 0, want_empty = 0;
        if (p.transfer_from >= 0) {  // <name>.xfer: filled by the transfer lane, read by the original consumers
          const std::string orig = ctx.pipes[p.transfer_from].name;
          want_full = 1;
          want_empty = empty[orig];
        } else if (p.transfer_to >= 0) {  // read by the transfer lane only
          want_full = full[p.name];
          want_empty = 1;
        } else {
          want_full = full[p.name];
          // A multicast stage is written into every block of the group, so its empty barrier
          // counts the consumers of all `multicast` blocks (their releases arrive remotely).
          want_empty = empty[p.name] * p.multicast;
        }
        EXPECT_EQ(p.full_count, want_full) << l.name << ": pipe '" << p.name << "' full barrier";
        EXPECT_EQ(p.empty_count, want_empty) << l.name << ": pipe '" << p.name << "' empty barrier";
        int slots = 0;
        for (const pipelink::MbarSlot& m : ctx.mbarriers) {
          if (m.owner != "pipe " + p.name) continue;
          ++slots;
          EXPECT_EQ(m.count, p.stages) << l.name << ": pipe '" << p.name << "' " << m.name << ": one mbarrier per stage";
          EXPECT_EQ(m.arrivals, m.name == "full" ? want_full : want_empty)
              << l.name << ": pipe '" << p.name << "' " << m.name << " mbarrier initialised with the wrong count";
        }
        EXPECT_EQ(slots, 2) << l.name << ": pipe '" << p.name << "' has a full and an empty mbarrier group";
        ++pipes;
      }
    });
    links += ran;
  }
  EXPECT_GE(links, 40);
  EXPECT_GE(pipes, 40);
}

// Named barriers: ids are distinct, 1..15 (0 is __syncthreads), and each waits for no more threads
// than the instance that owns it runs on (its id is private to that instance).
TEST(AllocationProperties, NamedBarriersAreDistinctAndCompletable) {
  int checked = 0;
  for (const Link& l : all_links()) {
    allocate_and(l, [&](const pipelink::LinkContext& ctx, const pipelink::Diagnostics& d) {
      if (d.has_errors()) return;  // a refused link (e.g. too many barriers) proves nothing here
      std::set<unsigned> ids;
      for (const pipelink::BarrierSlot& b : ctx.barriers) {
        EXPECT_TRUE(ids.insert(b.id).second) << l.name << ": barrier id " << b.id << " given twice";
        EXPECT_GE(b.id, 1u) << l.name;
        EXPECT_LE(b.id, 15u) << l.name;
        for (const pipelink::Instance& in : ctx.instances)
          if (in.name == b.owner)
            EXPECT_LE(b.threads, int64_t(in.warps) * 32) << l.name << ": barrier '" << b.name << "' of " << b.owner;
        ++checked;
      }
    });
  }
  EXPECT_GE(checked, 5);
}

// --min-registers gives the smallest sound entry cap: a multiple of setmaxnreg's step, at least
// its minimum, never above the default cap, large enough that the warpgroups' budgets fit the
// pool (Σ budgets ≤ cap × warpgroups), and one step less would not fit (or would fall below the
// minimum). Checked on every link whose warpgroups all have budgets.
TEST(AllocationProperties, MinRegistersIsTheSmallestSoundCap) {
  int checked = 0;
  for (Link l : all_links()) {
    int64_t full = 0;
    bool budgets = false;
    allocate_and(l, [&](const pipelink::LinkContext& ctx, const pipelink::Diagnostics& d) {
      if (d.has_errors() || ctx.warpgroups.empty()) return;
      full = ctx.entry_registers;
      budgets = std::all_of(ctx.warpgroups.begin(), ctx.warpgroups.end(), [](const pipelink::WarpGroup& w) { return w.registers > 0; });
    });
    if (!budgets) continue;
    l.opt.min_registers = true;
    allocate_and(l, [&](const pipelink::LinkContext& ctx, const pipelink::Diagnostics& d) {
      if (d.has_errors()) return;
      const pipelink::Target& t = ctx.target;
      const int64_t cap = ctx.entry_registers, groups = static_cast<int64_t>(ctx.warpgroups.size());
      int64_t sum = 0;
      for (const pipelink::WarpGroup& w : ctx.warpgroups) sum += w.registers;
      EXPECT_EQ(cap % t.regs_step, 0) << l.name;
      EXPECT_GE(cap, t.min_regs) << l.name;
      EXPECT_LE(cap, full) << l.name << ": --min-registers raised the cap";
      EXPECT_LE(sum, cap * groups) << l.name << ": the budgets do not fit the pool";
      if (cap > t.min_regs) EXPECT_GT(sum, (cap - t.regs_step) * groups) << l.name << ": a smaller cap would do";
      ++checked;
    });
  }
  EXPECT_GE(checked, 5);
}
