// connect — builds the pipe graph: one pipe per port name (or --connect target), its producer and
// consumer ends in input order, the tensors of a stage (the producers' view) and the consumers'
// view, and checks that the ends of each pipe agree (stages, tensors, dtypes, shapes, layouts of
// several producers, writes, guarantees). insert_transfers() then adds a generated transfer pipe
// wherever the consumers' view differs in layout or swizzle, and re-points the consumers at it.
//
// The driver runs connect after check (each contract alone) and before check_link (which reads
// the pipes), and insert_transfers after check_link, so per_tile is compared over the pipes the
// contracts declare. Nothing after insert_transfers changes the graph: allocate only places it.
#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "context.h"

namespace pipelink {

namespace {

std::string who(const Contract& c) { return c.name + " (" + c.owner + ")"; }

PipeTensor view(const TensorDecl& t) {
  PipeTensor v;
  v.name = t.name;
  v.dtype = t.dtype;
  v.rows = t.rows.value;
  v.cols = t.cols.value;
  v.elem_bytes = dtype_bytes(t.dtype);
  v.layout = t.layout;
  v.swizzle = t.swizzle;
  if (t.tile_coords_declared) v.tile_coords = tile_coords_text(t);
  return v;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v) if (x == s) return true;
  return false;
}

}  // namespace

void connect(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  std::map<std::string, int> index;
  for (size_t i = 0; i < ctx.instances.size(); ++i) {
    const Contract& c = *ctx.instances[i].contract;
    for (size_t p = 0; p < c.ports.size(); ++p) {
      const PortDecl& pd = c.ports[p];
      auto renamed = ctx.opt.connect.find(pd.name);
      const std::string& pipe_name = renamed == ctx.opt.connect.end() ? pd.name : renamed->second;
      auto [it, fresh] = index.emplace(pipe_name, static_cast<int>(ctx.pipes.size()));
      if (fresh) { ctx.pipes.emplace_back(); ctx.pipes.back().name = pipe_name; }
      Pipe& pipe = ctx.pipes[it->second];
      (pd.dir == PortDir::Out ? pipe.producers : pipe.consumers).push_back({static_cast<int>(i), static_cast<int>(p)});
    }
  }
  for (const auto& [from, to] : ctx.opt.connect) {
    bool used = false;
    for (const Instance& in : ctx.instances)
      for (const PortDecl& pd : in.contract->ports) used |= pd.name == from;
    if (!used) ctx.diags.warning("port-unconnected", "--connect " + from + "=" + to + ": no component has a port named '" + from + "'");
  }
  auto port = [&](const PipeEnd& e) -> const PortDecl& { return ctx.instances[e.instance].contract->ports[e.port]; };
  auto inst = [&](const PipeEnd& e) -> const Instance& { return ctx.instances[e.instance]; };
  for (Pipe& pipe : ctx.pipes) {
    if (pipe.producers.empty() || pipe.consumers.empty()) {
      const PipeEnd& e = pipe.producers.empty() ? pipe.consumers.front() : pipe.producers.front();
      d.error("port-unconnected", "pipe '" + pipe.name + "' has " + (pipe.producers.empty() ? "no producer" : "no consumer") +
                                      ": port '" + port(e).name + "' of '" + inst(e).name + "' is connected to nothing", port(e).loc)
          .notes.push_back("ports connect by name (or join with --connect PORT=" + pipe.name + "): another component needs a port '" + pipe.name + "' with direction '" +
                           (pipe.producers.empty() ? "out" : "in") + "'");
      continue;
    }
    const PortDecl& p0 = port(pipe.producers.front());
    const Contract& c0 = *inst(pipe.producers.front()).contract;
    pipe.stages = p0.stages.value;  // its range is check_component's
    pipe.tx = false;
    for (const PipeEnd& e : pipe.producers) pipe.tx |= port(e).completion == Completion::Tx;
    // Several producers (components, or ports of one component joined by --connect): each tensor
    // of a stage is filled by exactly one of them; the instances of one port share its tensors.
    {
      std::vector<std::pair<const Contract*, const PortDecl*>> producers;  // in link order: deterministic
      for (const PipeEnd& e : pipe.producers) {
        const std::pair<const Contract*, const PortDecl*> k{inst(e).contract, &port(e)};
        if (std::find(producers.begin(), producers.end(), k) == producers.end()) producers.push_back(k);
      }
      std::set<const Contract*> components;
      bool any_writes = false;
      for (const auto& [c, pd] : producers) components.insert(c), any_writes |= !pd->writes.empty();
      auto label = [&](const Contract* c, const PortDecl* pd) {
        return "'" + c->name + "'" + (components.size() < producers.size() ? " (port '" + pd->name + "')" : "");
      };
      if (producers.size() > 1 || any_writes) {
        std::map<std::string, std::pair<const Contract*, const PortDecl*>> writer;
        bool all_declared = true;
        for (const auto& [c, pd] : producers) {
          if (pd->writes.empty()) {
            all_declared = false;
            d.error("port-mismatch", "pipe '" + pipe.name + "' has producers from several " +
                                         (components.size() > 1 ? "components" : "ports of one component") + "; " + label(c, pd) +
                                         " must declare the tensors it writes (writes = [...])", pd->loc);
            continue;
          }
          for (const std::string& w : pd->writes) {
            auto [it, fresh] = writer.emplace(w, std::make_pair(c, pd));
            if (!fresh)
              d.error("port-mismatch", "pipe '" + pipe.name + "': tensor '" + w + "' is written by both " +
                                           label(it->second.first, it->second.second) + " and " + label(c, pd), pd->writes_loc);
          }
        }
        for (const TensorDecl& t : p0.tensors)
          if (!writer.count(t.name) && all_declared)
            d.error("port-mismatch", "pipe '" + pipe.name + "': no producer writes tensor '" + t.name + "'", t.loc);
      }
    }
    for (const TensorDecl& t : p0.tensors) pipe.tensors.push_back(view(t));
    std::vector<PipeEnd> ends = pipe.producers;
    ends.insert(ends.end(), pipe.consumers.begin(), pipe.consumers.end());
    const PortDecl* consumer_ref = nullptr;
    const Contract* consumer_ref_c = nullptr;
    std::set<const PortDecl*> seen{&p0};  // a contract listed twice is compared (and reported) once
    for (const PipeEnd& e : ends) {
      const PortDecl& p = port(e);
      const Contract& c = *inst(e).contract;
      if (!seen.insert(&p).second) continue;
      auto mismatch = [&](const std::string& what, const SourceLoc& loc) {
        d.error("port-mismatch", "pipe '" + pipe.name + "': " + what, loc)
            .notes.push_back("producer " + who(c0) + " declares the port at " + p0.loc.str());
      };
      if (p.stages.value != pipe.stages && stages_ok(p) && stages_ok(p0))  // out of range: reported already
        mismatch("'" + c.name + "' declares " + std::to_string(p.stages.value) + " stages but '" + c0.name + "' declares " +
                     std::to_string(pipe.stages), p.stages.loc);
      if (p.dir == PortDir::Out && p.completion != p0.completion && (p.writes.empty() || p0.writes.empty()))
        mismatch("producers '" + c0.name + "' and '" + c.name +
                     "' complete stages differently (tx vs arrive); declare the tensors each one writes (writes = [...])", p.loc);
      if (p.tensors.size() != p0.tensors.size()) {
        mismatch("'" + c.name + "' expects " + std::to_string(p.tensors.size()) + " tensors per stage, '" + c0.name + "' has " +
                     std::to_string(p0.tensors.size()), p.loc);
        continue;
      }
      for (size_t k = 0; k < p.tensors.size(); ++k) {
        const TensorDecl& a = p0.tensors[k];
        const TensorDecl& b = p.tensors[k];
        std::string tn = "tensor " + std::to_string(k) + " ('" + a.name + "')";
        if (a.name != b.name) mismatch(tn + " is named '" + b.name + "' by '" + c.name + "'", b.loc);
        if (a.dtype != b.dtype)
          mismatch(tn + ": '" + c0.name + "' has dtype " + a.dtype + ", '" + c.name + "' expects " + b.dtype +
                       " (a transfer moves data; precision conversion is the components' business)", b.loc);
        const auto fits = [&](const TensorDecl& t) {
          return tensor_bytes(t.rows.value, t.cols.value, dtype_bytes(t.dtype), ctx.target.max_smem).has_value();
        };
        if (!b.any_shape && (a.rows.value != b.rows.value || a.cols.value != b.cols.value) && fits(a) && fits(b))
          mismatch(tn + ": '" + c0.name + "' has shape [" + std::to_string(a.rows.value) + ", " + std::to_string(a.cols.value) +
                       "], '" + c.name + "' expects [" + std::to_string(b.rows.value) + ", " + std::to_string(b.cols.value) + "]", b.loc);
        // What a tensor's content depends on is a fact about the data, not about one end.
        if (a.tile_coords_declared && b.tile_coords_declared && (a.follows_m != b.follows_m || a.follows_n != b.follows_n))
          mismatch(tn + ": '" + c0.name + "' says its content depends on the tile coordinates " + tile_coords_text(a) + ", '" +
                       c.name + "' says " + tile_coords_text(b), b.tile_coords_loc);
        if (p.dir == PortDir::Out && (a.layout != b.layout || a.swizzle != b.swizzle))
          mismatch(tn + ": producers '" + c0.name + "' and '" + c.name + "' write different layouts into one stage", b.loc);
      }
      if (p.dir == PortDir::In) {
        if (!consumer_ref) { consumer_ref = &p; consumer_ref_c = &c; }
        else {
          for (size_t k = 0; k < p.tensors.size() && k < consumer_ref->tensors.size(); ++k)
            if (p.tensors[k].layout != consumer_ref->tensors[k].layout || p.tensors[k].swizzle != consumer_ref->tensors[k].swizzle)
              d.error("port-mismatch", "pipe '" + pipe.name + "': consumers '" + consumer_ref_c->name + "' and '" + c.name +
                                           "' want tensor '" + p.tensors[k].name + "' in different layouts; one transfer per pipe", p.tensors[k].loc);
        }
        for (const std::string& g : p.requires_) {
          std::set<const PortDecl*> asked;
          for (const PipeEnd& pe : pipe.producers)
            if (asked.insert(&port(pe)).second && !has(port(pe).guarantees, g))
              d.error("port-guarantee", "'" + c.name + "' requires '" + g + "' on pipe '" + pipe.name + "' but producer '" +
                                            inst(pe).contract->name + "' does not guarantee it", p.loc)
                  .notes.push_back("producer " + who(*inst(pe).contract) + " declares the port at " + port(pe).loc.str());
        }
      }
    }
    // Consumer view: where it differs in layout or swizzle, allocate inserts a transfer.
    if (consumer_ref && consumer_ref->tensors.size() == pipe.tensors.size()) {
      for (size_t k = 0; k < consumer_ref->tensors.size(); ++k) {
        PipeTensor v = view(consumer_ref->tensors[k]);
        if (consumer_ref->tensors[k].any_shape) {
          v.rows = pipe.tensors[k].rows;
          v.cols = pipe.tensors[k].cols;
          if (tensor_bytes(v.rows, v.cols, v.elem_bytes, ctx.target.max_smem))  // else reported with the producer
            check_swizzle(ctx, *consumer_ref_c, *consumer_ref, consumer_ref->tensors[k], v.rows, v.cols);
        }
        pipe.consumer_view.push_back(v);
      }
    } else {
      pipe.consumer_view = pipe.tensors;
    }
  }
}

namespace {

bool views_differ(const Pipe& p) {
  for (size_t i = 0; i < p.tensors.size() && i < p.consumer_view.size(); ++i)
    if (p.tensors[i].layout != p.consumer_view[i].layout || p.tensors[i].swizzle != p.consumer_view[i].swizzle) return true;
  return false;
}

}  // namespace

// Each transfer is a one-warp generated role: consumer of the producers' pipe, producer of a new
// pipe in the consumers' layout. Consumers are re-pointed at the new pipe. The transfer moves
// per_tile stages per tile, so every producer must declare per_tile: a silent default of 1 would
// leave the transfer out of step with the pipe.
void insert_transfers(LinkContext& ctx) {
  if (!ctx.sizes_ok) return;  // check reported a quantity out of range: allocate will not run
  size_t n = ctx.pipes.size();
  for (size_t i = 0; i < n; ++i) {
    if (ctx.pipes[i].producers.empty() || ctx.pipes[i].consumers.empty() || !views_differ(ctx.pipes[i])) continue;
    std::set<const PortDecl*> asked;
    for (const PipeEnd& e : ctx.pipes[i].producers) {
      const Contract& c = *ctx.instances[e.instance].contract;
      const PortDecl& pd = c.ports[e.port];
      if (!asked.insert(&pd).second) continue;
      // Ends that declare per_tile agree and are at least 1 over facts (check: check_per_tile);
      // over params it is known only at run time (PL_CHECKED traps there).
      if (pd.per_tile_declared) continue;
      const PipeEnd& ce = ctx.pipes[i].consumers.front();
      const Contract& cc = *ctx.instances[ce.instance].contract;
      ctx.diags.error("port-mismatch", "component '" + c.name + "': pipe '" + ctx.pipes[i].name +
                                           "' needs a generated transfer (its consumers read another layout or swizzle), "
                                           "which moves per_tile stages per tile, but port '" + pd.name + "' declares no per_tile",
                      pd.loc)
          .notes.push_back("consumer " + cc.name + " (" + cc.owner + ") declares the port at " + cc.ports[ce.port].loc.str());
    }
    Pipe to;
    to.name = ctx.pipes[i].name + ".xfer";
    to.stages = ctx.pipes[i].stages;
    to.tensors = ctx.pipes[i].consumer_view;
    to.consumer_view = ctx.pipes[i].consumer_view;
    to.consumers = ctx.pipes[i].consumers;
    to.transfer_from = static_cast<int>(i);
    ctx.pipes[i].consumers.clear();
    ctx.pipes[i].consumer_view = ctx.pipes[i].tensors;
    ctx.pipes[i].transfer_to = static_cast<int>(ctx.pipes.size());
    ctx.pipes.push_back(std::move(to));
  }
}

}  // namespace pipelink
