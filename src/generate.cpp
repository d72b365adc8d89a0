// generate — writes the connection unit: CUDA C++ that defines every binding with external
// linkage (facts, per-instance slot tables, the tile sequence), the generated transfers, and
// the __global__ entry (mbarrier initialisation, warp-role dispatch with setmaxnreg per
// warpgroup; with --pdl, griddepcontrol.wait before any role). nvJitLink -lto then folds all
// of it into the components as constants.
//
// Symbols derive from indices (pl_slots_<instance>, pl_transfer_<pipe>), never from contract
// text; contract text appears only in comments, through printable().
//
// Hands compile_link the unit in pieces (ctx.unit): the prelude the components link against
// (everything up to the entry), the __global__ entry, and the launch manifest the prelude embeds.
// Does not: compile anything (compile_link), or decide anything (allocate did).
#include <set>
#include <sstream>

#include "context.h"

namespace pipelink {

namespace {

std::string transfer_name(size_t pipe_index) { return "pl_transfer_" + std::to_string(pipe_index); }

template <class T> std::string list(const std::vector<T>& v, size_t n) {
  std::ostringstream s;
  s << "{";
  for (size_t i = 0; i < n; ++i) s << (i ? ", " : "") << (i < v.size() ? static_cast<long long>(v[i]) : 0);
  s << "}";
  return s.str();
}


const ParamSlot* find_param(const LinkContext& ctx, const std::string& name) {
  for (const ParamSlot& p : ctx.params)
    if (p.name == name) return &p;
  return nullptr;
}

// A C++ expression for a fact or u32 param name, for code that runs on the device.
std::string device_name(const LinkContext& ctx, const std::string& n, bool& ok) {
  if (ctx.facts.count(n)) return "pl_fact_" + n;
  if (const ParamSlot* p = find_param(ctx, n); p && p->type == ParamType::U32)
    return "(unsigned)args->word[" + std::to_string(p->slot) + "]";
  ok = false;
  return "0";
}

// Byte offset of element (r, c) of a tensor view, as C++ (swizzle 128B: bits [4,7) ^= bits [7,10);
// 64B: bits [4,6) ^= bits [7,9); 32B: bit 4 ^= bit 7).
std::string element_offset(const PipeTensor& t, const char* r, const char* c) {
  std::string idx = t.layout == "row" ? "(" + std::string(r) + " * " + std::to_string(t.cols) + "u + " + c + ")"
                                      : "(" + std::string(c) + " * " + std::to_string(t.rows) + "u + " + r + ")";
  std::string byte = idx + " * " + std::to_string(t.elem_bytes) + "u";
  if (const int s = swizzle_span(t.swizzle)) return "pl_swz" + std::to_string(s) + "(" + byte + ")";
  return byte;
}

void emit_transfer(const LinkContext& ctx, size_t from_index, std::ostringstream& o) {
  const Pipe& from = ctx.pipes[from_index];
  const Pipe& to = ctx.pipes[from.transfer_to];
  const std::string fn = transfer_name(from_index);
  // Stages per tile: from the (first) producer's per_tile expression.
  const PipeEnd& pe = from.producers.front();
  const PortDecl& pd = ctx.instances[pe.instance].contract->ports[pe.port];
  bool ok = true;
  std::string per_tile = pd.per_tile.to_cpp([&](const std::string& n) { return device_name(ctx, n, ok); });
  if (!ok)
    ctx.diags.error("expr", "pipe '" + from.name + "' needs a transfer, but per_tile '" + pd.per_tile.text() +
                                "' names something that is neither a fact nor a u32 param", pd.per_tile_loc);
  o << "// Transfer for pipe '" << printable(from.name) << "': the producers' layout differs from the consumers'.\n"
    << "// One warp moves each stage of '" << printable(from.name) << "' into '" << printable(to.name) << "', element by element.\n"
    << "static __device__ __forceinline__ void " << fn << "(const pl::Args* args, unsigned char* smem) {\n"
    << "  const unsigned base = pl::smem_addr(smem), lane = threadIdx.x & 31u;\n"
    << "  unsigned rs = 0, rp = 0, ws = 0, wp = 0;\n"
    << "  pl::Tile t;\n"
    << "  for (unsigned i = 0; pl_tile_at(args, i, &t); ++i) {\n"
    << "    const long long n = " << per_tile << ";\n"
    << "#ifdef PL_CHECKED\n"
    << "    if (n < 1) asm volatile(\"trap;\");  // per_tile must be at least 1\n"
    << "#endif\n"
    << "    for (long long s = 0; s < n; ++s) {\n"
    << "      pl::mbar_wait(base + " << from.full << "u + 8u * rs, rp, " << from_index << "u, rs, \"full\");\n"
    << "      pl::mbar_wait(base + " << to.empty << "u + 8u * ws, wp ^ 1u, " << from.transfer_to << "u, ws, \"empty\");\n"
    << "      const unsigned char* src = smem + " << from.buffer << "u + rs * " << from.stage_bytes << "u;\n"
    << "      unsigned char* dst = smem + " << to.buffer << "u + ws * " << to.stage_bytes << "u;\n";
  for (size_t k = 0; k < from.tensors.size(); ++k) {
    const PipeTensor& a = from.tensors[k];
    const PipeTensor& b = to.tensors[k];
    const char* et = a.elem_bytes == 4 ? "unsigned" : a.elem_bytes == 2 ? "unsigned short" : "unsigned char";
    o << "      // tensor '" << printable(a.name) << "' " << a.rows << "x" << a.cols << " " << a.dtype << ": " << a.layout << "/" << a.swizzle
      << " -> " << b.layout << "/" << b.swizzle << "\n"
      << "      for (unsigned e = lane; e < " << a.rows * a.cols << "u; e += 32u) {\n"
      << "        const unsigned r = e / " << a.cols << "u, c = e % " << a.cols << "u;\n"
      << "        *reinterpret_cast<" << et << "*>(dst + " << b.offset << "u + " << element_offset(b, "r", "c") << ") =\n"
      << "            *reinterpret_cast<const " << et << "*>(src + " << a.offset << "u + " << element_offset(a, "r", "c") << ");\n"
      << "      }\n";
  }
  o << "      pl::fence_async_shared();  // consumers may read with the async proxy (wgmma, TMA store)\n"
    << "      __syncwarp();\n"
    << "      if (lane == 0) { pl::mbar_arrive(base + " << to.full << "u + 8u * ws); pl::mbar_arrive(base + " << from.empty
    << "u + 8u * rs); }\n"
    << "      if (++rs == " << from.stages << "u) { rs = 0; rp ^= 1u; }\n"
    << "      if (++ws == " << to.stages << "u) { ws = 0; wp ^= 1u; }\n"
    << "    }\n"
    << "  }\n"
    << "}\n\n";
}

}  // namespace
namespace {

// The k extent in slices, as device code: ceil(K / k_tile).
std::string k_slices(const LinkContext& ctx) {
  const ParamSlot* pk = find_param(ctx, ctx.k_extent);
  return "(((unsigned)args->word[" + std::to_string(pk ? pk->slot : 0) + "] + " + std::to_string(ctx.k_tile - 1) + "u) / " +
         std::to_string(ctx.k_tile) + "u)";
}

// The tile sequence's extents as device code: a u32 param's word, or the u32 at a ptr param's
// address (an extent an earlier kernel writes, [tiles] device_extent).
std::string extent_expr(const ParamSlot* p) {
  const std::string word = "args->word[" + std::to_string(p ? p->slot : 0) + "]";
  return p && p->type == ParamType::Ptr ? "*(const unsigned*)" + word : "(unsigned)" + word;
}

// The tile's rows and columns inside the extent, pl::Tile::rows / cols: tile_m / tile_n but at the
// extent's edges, 0 for a tile wholly past it (a cluster's padding tile). em / en name the extents.
void emit_tile_edges(std::ostringstream& o, const TilesDecl& td, const std::string& t, const std::string& em, const std::string& en) {
  o << "  { const unsigned long long r0 = (unsigned long long)" << t << "->m * " << td.tile_m.value << "ull, c0 = (unsigned long long)" << t
    << "->n * " << td.tile_n.value << "ull;\n"
    << "    " << t << "->rows = r0 >= " << em << " ? 0u : " << em << " - r0 < " << td.tile_m.value << "ull ? (unsigned)(" << em
    << " - r0) : " << td.tile_m.value << "u;\n"
    << "    " << t << "->cols = c0 >= " << en << " ? 0u : " << en << " - c0 < " << td.tile_n.value << "ull ? (unsigned)(" << en
    << " - c0) : " << td.tile_n.value << "u; }\n";
}

// Before a scheduler reads an extent from device memory: under --pdl, when a component may walk
// tiles before the entry's wait (pdl_wait = "own"), the dependency wait (and a warning for that
// component); in a PL_CHECKED build, a trap on a null or misaligned extent pointer.
void emit_extent_guards(LinkContext& ctx, std::ostringstream& o, const ParamSlot* pm, const ParamSlot* pn) {
  const bool device_extent = (pm && pm->type == ParamType::Ptr) || (pn && pn->type == ParamType::Ptr);
  bool own_wait = false;
  for (const Instance& in : ctx.instances) own_wait |= in.contract->pdl_own_wait;
  if (device_extent && ctx.opt.pdl && own_wait) {
    o << "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");  // pdl: the extent is an earlier kernel's output\n";
    const std::string calls = ctx.k_walk ? "pl::tile_at or pl::unit_at" : "pl::tile_at";
    for (const Instance& in : ctx.instances)
      if (in.contract->pdl_own_wait && in.index == 0)
        ctx.diags.warning("pdl", "component '" + in.contract->name + "' waits for earlier kernels itself (pdl_wait = \"own\"), "
                                 "but the tile sequence reads its extent from device memory, so its first " + calls + " waits "
                                 "for them: work it starts before that call still overlaps the previous kernel, work after it does not",
                          in.contract->pdl_wait_loc.line ? in.contract->pdl_wait_loc : in.contract->loc);
  }
  if (device_extent && checked_build(ctx.opt))
    for (const ParamSlot* p : {pm, pn})
      if (p && p->type == ParamType::Ptr)
        o << "  if (args->word[" << p->slot << "] == 0ull || (args->word[" << p->slot
          << "] & 3ull) != 0ull) asm volatile(\"trap;\");  // PL_CHECKED: extent '" << p->name << "' must point to a u32\n";
}

// Data-parallel units for the components that walk k ranges: unit i is tile i, whole.
void emit_units_data_parallel(const LinkContext& ctx, std::ostringstream& o) {
  o << "// units (components whose [tiles] declare k_extent): data-parallel, each unit is a whole tile\n"
    << "extern \"C\" __device__ bool pl_unit_at(const pl::Args* args, unsigned i, pl::Unit* u) {\n"
    << "  if (!pl_tile_at(args, i, &u->tile)) return false;\n"
    << "  u->k_begin = 0u;\n  u->k_end = " << k_slices(ctx) << ";\n"
    << "  u->peer_begin = u->peer_end = 0u;\n  u->emit = true;\n  u->reduce_shares = false;\n  return true;\n}\n"
    << "// no tile is split: no partials (a component's calls are never reached)\n"
    << "extern \"C\" __device__ unsigned char* pl_partials(const pl::Args*, unsigned, unsigned) {\n"
    << "  asm volatile(\"// pl_partials %0\" ::\"l\"(&pl_partials_marker));  // conformance: who uses the workspace\n"
    << "  return nullptr;\n}\n"
    << "extern \"C\" __device__ void pl_partials_sum(const pl::Args*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned) {\n"
    << "  asm volatile(\"// pl_partials_sum %0\" ::\"l\"(&pl_partials_marker));\n}\n"
    << "extern \"C\" __device__ unsigned* pl_partials_flag(const pl::Args*, unsigned, unsigned) {\n"
    << "  asm volatile(\"// pl_partials_flag %0\" ::\"l\"(&pl_partials_marker));\n"
    << "  return nullptr;\n}\n\n";
}

// Stream-k (--tile-schedule stream-k; check_schedule: one-block link, every pipe that moves stages
// per k slice walks units). With T tiles on G blocks and R = T % G: when R > 0 the first
// S = R + G tiles (stream-k:0: R; R when T < G) form the stream-k region, whose S * Kt k slices are cut into W
// equal shares, W = min(G, S * Kt / 4) (at least 1: shares of 4 slices or more), block b < W taking
// [b S Kt / W, (b + 1) S Kt / W); the other tiles are data-parallel,
// block b taking S + b, S + b + G, ... after its share. A share's pieces are its units; the piece
// holding a tile's first slice emits the tile, after the partials of the blocks holding its other
// slices, each of which holds it as its first piece (done first), so no block waits on a block
// that waits. Tile coordinates follow the link's order from the linear tile index.
// Split-k: a tile cut into this many pieces or more has its pieces sum the partials in shares
// (pl::Unit::reduce_shares) instead of leaving all of them to the emitter. Measured on the H200
// (bench/NOTES.md, sessions 27-28; sustained, each link / its build without shares): 4-8% faster
// at 16 pieces; at 11 the GEMM 1.1-1.8% faster with the peer loop fully unrolled, level with the
// final (unrolled by 2) loop, the fused link 0.7% faster or level; at 8 the GEMM 0.5-3.0% slower
// (the pieces wait for each other where they used to move on; part of it was the code's size, the
// same link 1.6% slower with the shares off), about level at 4-6. 10 lies between 8 and 11.
constexpr unsigned kReduceSharesPieces = 10;

void emit_stream_k(LinkContext& ctx, std::ostringstream& o) {
  const TilesDecl& td = *ctx.tiles;
  const ParamSlot* pm = find_param(ctx, td.extent_m);
  const ParamSlot* pn = find_param(ctx, td.extent_n);
  o << "// " << (ctx.split_k ? "split-k" : "stream-k") << " over " << td.order << " ceil(" << td.extent_m << " / " << td.tile_m.value << ") x ceil(" << td.extent_n << " / "
    << td.tile_n.value << ") tiles of ceil(" << ctx.k_extent << " / " << ctx.k_tile << ") k slices\n"
    << "// (k slices count in 64 bits: sk x kt may pass 2^32)\n"
    << "struct pl_sk_plan { unsigned em, en, tiles_m, tiles_n, tiles, kt, sk, w, first, pieces; unsigned long long S, s0, s1; };\n"
    << "static __device__ __forceinline__ void pl_sk_make(const pl::Args* args, pl_sk_plan& p) {\n";
  emit_extent_guards(ctx, o, pm, pn);
  o << "  p.em = " << extent_expr(pm) << ";\n  p.en = " << extent_expr(pn) << ";\n"
    << "  p.tiles_m = (p.em + " << td.tile_m.value - 1 << "u) / " << td.tile_m.value << "u;\n"
    << "  p.tiles_n = (p.en + " << td.tile_n.value - 1 << "u) / " << td.tile_n.value << "u;\n"
    << "  p.kt = " << k_slices(ctx) << ";\n"
    << "  const unsigned tiles = p.tiles_m * p.tiles_n, g = gridDim.x, full = tiles / g, rem = tiles % g;\n"
    << "  p.tiles = tiles;\n";
  if (ctx.split_k)
    o << "  // split-k: the partial last wave's R = T % G tiles come first, each cut into s = G / R equal k pieces\n"
      << "  // (none when s < 2: then the schedule is the data-parallel one)\n"
      << "  // (at most one per slice): block b < R s takes piece b % s of tile b / s; every block then takes\n"
      << "  // its whole tiles. Pieces run side by side at the same k offsets, so blocks sharing an operand\n"
      << "  // read the same k slices at the same time, as in the data-parallel waves.\n"
      << "  (void)full;\n"
      << "  p.sk = p.kt == 0u ? 0u : rem;\n"
      << "  p.w = p.sk ? g / p.sk : 1u;  // s: pieces per tile\n"
      << "  if (p.w > p.kt) p.w = p.kt;\n"
      << "  if (p.w < 2u) { p.sk = 0u; p.w = 1u; }  // nothing to split (R > G / 2): exactly data-parallel\n"
      << "  p.S = (unsigned long long)p.sk * p.w;  // pieces\n"
      << "  p.pieces = blockIdx.x < p.S ? 1u : 0u;\n"
      << "  p.first = blockIdx.x / p.w;\n"
      << "  p.s0 = blockIdx.x % p.w;  // this block's piece of its tile\n"
      << "  p.s1 = 0ull;\n"
      << "}\n";
  else
    o << "  p.sk = rem == 0u || p.kt == 0u ? 0u : (full >= 1u ? rem + " << (ctx.sk_waves ? "g" : "0u") << " : rem);  // tiles in the stream-k region\n"
      << "  p.S = (unsigned long long)p.sk * p.kt;\n"
      << "  // shares of at least 4 slices: the first w blocks take one each, the others none\n"
      << "  p.w = p.S / 4ull < g ? (unsigned)(p.S / 4ull) : g;\n"
      << "  if (p.w == 0u && p.S > 0ull) p.w = 1u;\n"
      << "  p.s0 = blockIdx.x < p.w ? p.S * blockIdx.x / p.w : p.S;\n"
      << "  p.s1 = blockIdx.x < p.w ? p.S * (blockIdx.x + 1u) / p.w : p.S;\n"
      << "  p.first = p.kt ? (unsigned)(p.s0 / p.kt) : 0u;\n"
      << "  p.pieces = p.s1 > p.s0 ? (unsigned)((p.s1 - 1ull) / p.kt) - p.first + 1u : 0u;\n"
      << "}\n";
  o
    << "static __device__ __forceinline__ void pl_sk_coords(unsigned linear, const pl_sk_plan& p, pl::Tile* t) {\n"
    << "  t->linear = linear;\n";
  if (td.order == "row_major")
    o << "  t->m = linear / p.tiles_n;\n  t->n = linear % p.tiles_n;\n";
  else if (td.order == "col_major")
    o << "  t->m = linear % p.tiles_m;\n  t->n = linear / p.tiles_m;\n";
  else
    o << "  const unsigned band = linear / (" << td.group << "u * p.tiles_n), r = linear % (" << td.group << "u * p.tiles_n);\n"
      << "  const unsigned first = band * " << td.group << "u, rows = p.tiles_m - first < " << td.group << "u ? p.tiles_m - first : "
      << td.group << "u;\n"
      << "  t->m = first + r % rows;\n  t->n = r / rows;\n";
  emit_tile_edges(o, td, "t", "p.em", "p.en");
  o << "}\n"
    << "// the block holding stream-k slice s\n"
    << "static __device__ __forceinline__ unsigned pl_sk_owner(unsigned long long s, const pl_sk_plan& p) {\n"
    << "  return (unsigned)(((s + 1ull) * p.w - 1ull) / p.S);\n}\n"
    << "static __device__ __forceinline__ bool pl_sk_unit(const pl_sk_plan& p, unsigned i, pl::Unit* u) {\n";
  if (ctx.split_k)
    o << "  if (i < p.pieces) {\n"
      << "    u->k_begin = (unsigned)(p.s0 * p.kt / p.w);\n"
      << "    u->k_end = (unsigned)((p.s0 + 1ull) * p.kt / p.w);\n"
      << "    u->emit = p.s0 == 0ull;\n"
      << "    // " << kReduceSharesPieces << " pieces or more: the non-emitting ones sum the partials in shares (pl::unit_partials),\n"
      << "    // and each of them names the same peers as the emitter\n"
      << "    u->reduce_shares = p.w >= " << kReduceSharesPieces << "u;\n"
      << "    u->peer_begin = p.w > 1u && (u->emit || u->reduce_shares) ? blockIdx.x - (unsigned)p.s0 + 1u : 0u;\n"
      << "    u->peer_end = p.w > 1u && (u->emit || u->reduce_shares) ? blockIdx.x - (unsigned)p.s0 + p.w : 0u;\n"
      << "    pl_sk_coords(p.first, p, &u->tile);\n"
      << "    return true;\n"
      << "  }\n";
  else
    o << "  if (i < p.pieces) {\n"
    << "    const unsigned j = p.first + i;\n"
    << "    const unsigned long long lo = (unsigned long long)j * p.kt, hi = lo + p.kt;\n"
    << "    u->k_begin = (unsigned)((p.s0 > lo ? p.s0 : lo) - lo);\n"
    << "    u->k_end = (unsigned)((p.s1 < hi ? p.s1 : hi) - lo);\n"
    << "    u->emit = u->k_begin == 0u;\n"
    << "    u->peer_begin = u->peer_end = 0u;\n"
    << "    u->reduce_shares = false;\n"
    << "    if (u->emit && u->k_end < p.kt) {\n"
    << "      u->peer_begin = pl_sk_owner(lo + u->k_end, p);\n"
    << "      u->peer_end = pl_sk_owner(hi - 1ull, p) + 1u;\n"
    << "    }\n"
    << "    pl_sk_coords(j, p, &u->tile);\n"
    << "    return true;\n"
    << "  }\n";
  o << "  // then whole tiles sk + b, sk + b + G, ... (bounded by the tile count: K = 0 splits nothing)\n"
    << "  const unsigned long long lin = p.sk + blockIdx.x + (unsigned long long)(i - p.pieces) * gridDim.x;\n"
    << "  if (lin >= p.tiles) return false;\n"
    << "  u->k_begin = 0u;\n  u->k_end = p.kt;\n  u->emit = true;\n  u->reduce_shares = false;\n  u->peer_begin = u->peer_end = 0u;\n"
    << "  pl_sk_coords((unsigned)lin, p, &u->tile);\n"
    << "  return true;\n"
    << "}\n"
    << "extern \"C\" __device__ bool pl_unit_at(const pl::Args* args, unsigned i, pl::Unit* u) {\n"
    << "  pl_sk_plan p;\n  pl_sk_make(args, p);\n  return pl_sk_unit(p, i, u);\n}\n"
    << "// components that walk whole tiles: the tiles this block emits (only its first piece may not)\n"
    << "extern \"C\" __device__ bool pl_tile_at(const pl::Args* args, unsigned i, pl::Tile* t) {\n"
    << "  pl_sk_plan p;\n  pl_sk_make(args, p);\n"
    << (ctx.split_k ? "  const unsigned skip = p.pieces > 0u && p.s0 != 0ull ? 1u : 0u;\n"
                    : "  const unsigned skip = p.pieces > 0u && p.s0 % p.kt != 0ull ? 1u : 0u;\n")
    << "  pl::Unit u;\n  if (!pl_sk_unit(p, i + skip, &u)) return false;\n"
    << "  *t = u.tile;\n  return true;\n}\n"
    << "// the workspace (pipelink::Module allocates grid x " << ctx.workspace_stride << " bytes, zeroed once): block b's record holds "
    << ctx.partial_instances << " partial(s) of " << ctx.partial_bytes << " bytes, then a 128-byte line of flags\n"
    << "extern \"C\" __device__ unsigned char* pl_partials(const pl::Args* args, unsigned block, unsigned instance) {\n"
    << "  asm volatile(\"// pl_partials %0\" ::\"l\"(&pl_partials_marker));  // conformance: who uses the workspace\n"
    << "  return (unsigned char*)args->word[" << ctx.workspace_slot << "] + (unsigned long long)block * " << ctx.workspace_stride
    << "ull + instance * " << ctx.partial_bytes << "ull;\n}\n"
    << "extern \"C\" __device__ unsigned* pl_partials_flag(const pl::Args* args, unsigned block, unsigned instance) {\n"
    << "  asm volatile(\"// pl_partials_flag %0\" ::\"l\"(&pl_partials_marker));\n"
    << "  return (unsigned*)((unsigned char*)args->word[" << ctx.workspace_slot << "] + (unsigned long long)block * "
    << ctx.workspace_stride << "ull + " << ctx.workspace_stride - 128 << "ull) + instance;\n}\n"
    << "extern \"C\" __device__ void pl_partials_sum(const pl::Args* args, unsigned instance, unsigned first, unsigned count,\n"
    << "                                           unsigned dst, unsigned part, unsigned bytes, unsigned tid, unsigned threads) {\n"
    << "  const float4* src = (const float4*)pl_partials(args, first, instance);\n"
    << "  float4* sum = (float4*)pl_partials(args, dst, instance);\n"
    << "  const unsigned vec = bytes / 16u;\n"
    << "  for (unsigned c = part * vec / count + tid, hi = (part + 1u) * vec / count; c < hi; c += threads) {\n"
    << "    float4 s = __ldcg(src + c);\n"
    << "    #pragma unroll 2  // unrolled fully, 12 KB of SASS cost the split-k links that do not run it (results/s28/c4)\n"
    << "    for (unsigned b = 1u; b < count; ++b) {\n"
    << "      const float4 v = __ldcg(src + b * " << ctx.workspace_stride / 16 << "ull + c);\n"
    << "      s.x += v.x;\n      s.y += v.y;\n      s.z += v.z;\n      s.w += v.w;\n"
    << "    }\n"
    << "    __stcg(sum + c, s);\n"
    << "  }\n"
    << "}\n\n";
}

}  // namespace

std::string slots_name(size_t instance_index) { return "pl_slots_" + std::to_string(instance_index); }

std::string printable(const std::string& s) {
  static const char hex[] = "0123456789abcdef";
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch == '\n') o += "\\n";
    else if (ch == '\\') o += "\\x5c";  // a trailing backslash would continue a // comment
    else if (ch < 0x20 || ch == 0x7f) { o += "\\x"; o += hex[ch >> 4]; o += hex[ch & 15]; }
    else if (ch == '*' && i + 1 < s.size() && s[i + 1] == '/') o += "* ";
    else o += static_cast<char>(ch);
  }
  return o;
}

void generate(LinkContext& ctx) {
  std::ostringstream o;
  const unsigned threads = ctx.total_warps * 32;
  o << "// Generated by PipeLink. Do not edit: relink instead.\n"
    << "// Kernel " << ctx.opt.kernel_name << ": " << threads << " threads (" << ctx.total_warps << " warps), " << ctx.smem_bytes
    << " bytes of dynamic shared memory, target " << ctx.target.arch << ".\n"
    << "// Every binding below has external linkage (`extern`), so nvJitLink -lto folds it into the\n"
    << "// components as an immediate. (A namespace-scope `const` without `extern` would have internal\n"
    << "// linkage and leave the components' references unresolved.)\n"
    << "#include \"pipelink/device.cuh\"\n"
    << "// The slot tables below are laid out for these capacities (pipelink/limits.h as the linker saw it).\n"
    << "static_assert(pl::kMaxSmem == " << pl::kMaxSmem << " && pl::kMaxBarriers == " << pl::kMaxBarriers
    << " && pl::kMaxMbarriers == " << pl::kMaxMbarriers << " && pl::kMaxPorts == " << pl::kMaxPorts
    << " && pl::kMaxTensors == " << pl::kMaxTensors << " && pl::kMaxParams == " << pl::kMaxParams
    << " && pl::kArgTensorMaps == " << pl::kArgTensorMaps << " && pl::kArgWords == " << pl::kArgWords
    << ", \"pipelink/device.cuh is not the linker's version: relink with matching headers\");\n\n";

  o << "// ---- facts ----\n";
  for (const auto& [name, f] : ctx.facts)
    o << "extern \"C\" __device__ const " << fact_c_type(f.type) << " pl_fact_" << name << " = " << f.value << ";  // provided by "
      << printable(f.provider->name) << "\n";
  o << "// the thread-block cluster (pl::cluster_blocks()): 1 = no cluster\n"
    << "extern \"C\" __device__ const unsigned pl_cluster_blocks = " << ctx.cluster_size() << ";"
    << (ctx.cluster ? "  // [cluster] of " + printable(ctx.cluster_owner->name) : std::string()) << "\n";
  o << "#ifdef PL_CHECKED\n// Checked builds: pipe names for timed-out waits, and the flag that drains the kernel after one.\n"
    << "extern \"C\" __device__ const char* const pl_pipe_names[] = {";
  for (size_t i = 0; i < ctx.pipes.size(); ++i) {
    std::string lit;  // a C string literal: printable, and no quote
    for (char ch : printable(ctx.pipes[i].name)) lit += ch == '"' ? std::string("\\\"") : std::string(1, ch);
    o << (i ? ", " : "") << "\"" << lit << "\"";
  }
  if (ctx.pipes.empty()) o << "\"\"";
  o << "};\nextern \"C\" __device__ unsigned pl_abort = 0;\n"
    << "extern \"C\" __device__ unsigned long long pl_checked_report = 0;  // set by pipelink::Module\n#endif\n";
  {
    // The launch manifest (map.cpp): the runtime checks the map it is given against it.
    ctx.unit.manifest = render_manifest(ctx);
    std::string lit;
    for (char ch : ctx.unit.manifest) {
      if (ch == '\n') lit += "\\n";
      else if (ch == '"' || ch == '\\') lit += std::string("\\") + ch;
      else lit += ch;
    }
    o << "// ---- launch manifest (pipelink::Module compares it with the map's manifest line) ----\n"
      << "extern \"C\" __device__ __attribute__((used)) const char pl_manifest[] = \"" << lit << "\";\n";
  }
  o << "\n// ---- component entries ----\n";
  {
    std::vector<std::string> seen;
    for (const auto& c : ctx.contracts) {
      bool dup = false;
      for (const auto& s : seen) dup |= s == c->entry;
      if (dup) continue;
      seen.push_back(c->entry);
      o << "extern \"C\" __device__ void " << c->entry << "(const pl::Ctx&);  // " << printable(c->name) << " ("
        << printable(c->owner) << ")\n";
    }
  }

  o << "\n// ---- per-instance slots (offsets relative to the dynamic smem base) ----\n";
  for (size_t ii = 0; ii < ctx.instances.size(); ++ii) {
    const Instance& in = ctx.instances[ii];
    const Contract& c = *in.contract;
    std::vector<int64_t> bar_threads;
    for (const NamedBarrier& b : c.barriers) bar_threads.push_back(b.threads.value);
    o << "// " << printable(in.name) << "\n"
      << "__device__ const pl::Slots " << slots_name(ii) << " = {\n"
      << "    " << list(in.smem, pl::kMaxSmem) << ",  // smem\n"
      << "    " << list(in.bar, pl::kMaxBarriers) << ",  // named barrier ids\n"
      << "    " << list(bar_threads, pl::kMaxBarriers) << ",  // named barrier threads\n"
      << "    " << list(in.mbar, pl::kMaxMbarriers) << ",  // mbarrier groups\n"
      << "    {";
    for (size_t k = 0; k < pl::kMaxPorts; ++k) {
      o << (k ? ",\n     " : "");
      if (k < in.ports.size() && in.ports[k].pipe >= 0) {
        const PortBinding& b = in.ports[k];
        const Pipe& p = ctx.pipes[b.pipe];
        const bool consumer = c.ports[k].dir == PortDir::In;
        const std::vector<PipeTensor>& tv = consumer ? p.consumer_view : p.tensors;
        std::vector<int64_t> offs, rows, cols;
        for (const PipeTensor& t : tv) { offs.push_back(t.offset); rows.push_back(t.rows); cols.push_back(t.cols); }
        o << "{" << p.buffer << ", " << p.stage_bytes << ", " << p.stages << ", " << p.full << ", " << p.empty << ", " << b.tx_bytes
          << ", " << list(offs, pl::kMaxTensors) << ", " << list(rows, pl::kMaxTensors) << ", " << list(cols, pl::kMaxTensors) << ", " << b.part << ", " << b.parts << ", "
          << b.pipe << ", " << p.multicast_mask << ", " << (p.multicast > 1 ? p.multicast : 0)
          << "}  /* port '" << printable(c.ports[k].name) << "' -> pipe '" << printable(p.name) << "' */";
      } else {
        o << "{}";
      }
    }
    o << "},\n"
      << "    " << list(in.params, pl::kMaxParams) << ",  // param slots\n"
      << "    " << in.warp_base << ", " << in.warps << ", " << in.index << ", " << in.count << "};  // warps [" << in.warp_base
      << ", " << in.warp_base + in.warps << "), instance " << in.index << " of " << in.count << "\n";
  }

  o << "\n// ---- the tile sequence (one scheduler for every component) ----\n";
  if (ctx.k_walk)
    o << "extern \"C\" __device__ unsigned pl_units_marker = 0u;  // named by pl::unit_at (conformance), never read\n"
      << "extern \"C\" __device__ unsigned pl_partials_marker = 0u;  // named by pl::partials, partials_publish (conformance)\n"
      << "extern \"C\" __device__ unsigned pl_partials_wait_marker = 0u;  // named by pl::partials_wait (conformance)\n"
      << "extern \"C\" __device__ unsigned pl_partials_consumed_marker = 0u;  // named by pl::partials_consumed (conformance)\n";
  if (ctx.stream_k && ctx.tiles) {
    emit_stream_k(ctx, o);
  } else {
  o << "extern \"C\" __device__ bool pl_tile_at(const pl::Args* args, unsigned i, pl::Tile* t) {\n";
  if (ctx.tiles) {
    const TilesDecl& td = *ctx.tiles;
    const ParamSlot* pm = find_param(ctx, td.extent_m);
    const ParamSlot* pn = find_param(ctx, td.extent_n);
    o << "  // " << td.order << " over ceil(" << td.extent_m << " / " << td.tile_m.value << ") x ceil(" << td.extent_n << " / "
      << td.tile_n.value << ") tiles; " << (ctx.cluster_size() > 1 ? "cluster c takes tile groups c, c + clusters, ...\n" : "block b takes tiles b, b + gridDim.x, ...\n");
    // An extent declared as a ptr param is the u32 at that address, written by an earlier kernel:
    // under --pdl read only after the dependency wait (a component may call pl_tile_at before its
    // own wait: pdl_wait = "own"), which returns at once once this thread has waited.
    emit_extent_guards(ctx, o, pm, pn);
    o << "  const unsigned em = " << extent_expr(pm) << ", en = " << extent_expr(pn) << ";\n"
      << "  const unsigned tiles_m = (em + " << td.tile_m.value - 1 << "u) / " << td.tile_m.value << "u;\n"
      << "  const unsigned tiles_n = (en + " << td.tile_n.value - 1 << "u) / " << td.tile_n.value << "u;\n";
    const int64_t cl = ctx.cluster_size();
    // The ranks of a cluster walk along ctx.cluster_axis (check_cluster): the order's fast
    // dimension unless a multicast tensor's tile_coords ask for the other one.
    const bool row = td.order == "row_major";
    const bool own_axis = cl == 1 || ctx.cluster_axis == (row ? 'n' : 'm');
    if (td.order == "grouped" && !own_axis) {
      // Bands of `group` tiles along m as below, but a band unit is one m tile and `cl` adjacent n
      // tiles, one per rank: the blocks of a cluster share m.
      o << "  // the blocks of a cluster share m: " << printable(ctx.cluster_axis_why) << "\n"
        << "  const unsigned rank = blockIdx.x % " << cl << "u, clusters = gridDim.x / " << cl << "u;\n"
        << "  const unsigned units_n = (tiles_n + " << cl - 1 << "u) / " << cl << "u;\n"
        << "  const unsigned g = blockIdx.x / " << cl << "u + i * clusters;\n"
        << "  if (g >= tiles_m * units_n) return false;\n"
        << "  const unsigned band = g / (" << td.group << "u * units_n), r = g % (" << td.group << "u * units_n);\n"
        << "  const unsigned first = band * " << td.group << "u, rows = tiles_m - first < " << td.group << "u ? tiles_m - first : "
        << td.group << "u;\n"
        << "  t->m = first + r % rows;\n"
        << "  t->n = (r / rows) * " << cl << "u + rank;\n"
        << "  t->linear = g * " << cl << "u + rank;\n";
    } else if (td.order == "grouped") {
      // Bands of `group` tiles along m (the last band may be narrower); within a band, m fastest,
      // then n. A wave of blocks then covers a band's rows of X and a few columns of W, which stay
      // in L2 together, instead of every row of X (col_major) or every column of W (row_major).
      // With a cluster, a band unit is `cl` adjacent m tiles, one per rank (as for col_major).
      const int64_t units = td.group / cl;  // check: group is a multiple of the cluster
      if (cl > 1)
        o << "  const unsigned rank = blockIdx.x % " << cl << "u, clusters = gridDim.x / " << cl << "u;\n"
          << "  const unsigned units_m = (tiles_m + " << cl - 1 << "u) / " << cl << "u;\n"
          << "  const unsigned g = blockIdx.x / " << cl << "u + i * clusters;\n";
      else
        o << "  const unsigned rank = 0u, units_m = tiles_m, g = blockIdx.x + i * gridDim.x;\n";
      o << "  if (g >= units_m * tiles_n) return false;\n"
        << "  const unsigned band = g / (" << units << "u * tiles_n), r = g % (" << units << "u * tiles_n);\n"
        << "  const unsigned first = band * " << units << "u, rows = units_m - first < " << units << "u ? units_m - first : " << units
        << "u;\n"
        << "  t->m = (first + r % rows) * " << cl << "u + rank;\n"
        << "  t->n = r / rows;\n"
        << "  t->linear = g * " << cl << "u + rank;\n";
    } else if (cl > 1 && !own_axis) {
      // As below, but the group runs along the order's slow dimension (a multicast tensor follows
      // the fast one): groups are walked in the order, each `cl` adjacent tiles along
      // ctx.cluster_axis, one per rank.
      const std::string along = row ? "tiles_m" : "tiles_n", other = row ? "tiles_n" : "tiles_m";
      o << "  // the blocks of a cluster share " << (row ? "n" : "m") << ": " << printable(ctx.cluster_axis_why) << "\n"
        << "  const unsigned rank = blockIdx.x % " << cl << "u, clusters = gridDim.x / " << cl << "u;\n"
        << "  const unsigned groups = (" << along << " + " << cl - 1 << "u) / " << cl << "u;  // along " << (row ? "m" : "n") << "\n"
        << "  const unsigned g = blockIdx.x / " << cl << "u + i * clusters;\n"
        << "  if (g >= groups * " << other << ") return false;\n"
        << "  t->linear = g * " << cl << "u + rank;\n";
      if (row)
        o << "  t->m = (g / tiles_n) * " << cl << "u + rank;\n  t->n = g % tiles_n;\n";
      else
        o << "  t->m = g % tiles_m;\n  t->n = (g / tiles_m) * " << cl << "u + rank;\n";
    } else if (cl > 1) {
      // The blocks of a cluster walk in step: cluster c takes groups c, c + clusters, ...; a group
      // is `cl` adjacent tiles along the order's fast dimension, one per rank, so the blocks of a
      // cluster share the other coordinate (and the operand it selects: multicast). Every block of
      // a cluster gets the same number of tiles; where the fast extent is not a multiple of the
      // cluster, the last group's extra ranks get a tile past the extent (TMA reads zeros there
      // and clips the store).
      const std::string fast = row ? "tiles_n" : "tiles_m", slow = row ? "tiles_m" : "tiles_n";
      o << "  const unsigned rank = blockIdx.x % " << cl << "u, clusters = gridDim.x / " << cl << "u;\n"
        << "  const unsigned groups = (" << fast << " + " << cl - 1 << "u) / " << cl << "u;  // along " << (row ? "n" : "m") << "\n"
        << "  const unsigned g = blockIdx.x / " << cl << "u + i * clusters;\n"
        << "  if (g >= groups * " << slow << ") return false;\n"
        << "  t->linear = g * " << cl << "u + rank;\n";
      if (row)
        o << "  t->m = g / groups;\n  t->n = (g % groups) * " << cl << "u + rank;\n";
      else
        o << "  t->m = (g % groups) * " << cl << "u + rank;\n  t->n = g / groups;\n";
    } else {
      o << "  const unsigned linear = blockIdx.x + i * gridDim.x;\n"
        << "  if (linear >= tiles_m * tiles_n) return false;\n"
        << "  t->linear = linear;\n";
      if (td.order == "row_major")
        o << "  t->m = linear / tiles_n;\n  t->n = linear % tiles_n;\n";
      else
        o << "  t->m = linear % tiles_m;\n  t->n = linear / tiles_m;\n";
    }
    emit_tile_edges(o, td, "t", "em", "en");
    o << "  return true;\n";
  } else {
    o << "  // no component declares [tiles]: one tile per block, no extent (rows and cols unbounded)\n"
      << "  (void)args;\n  t->m = blockIdx.x; t->n = 0; t->linear = blockIdx.x;\n  t->rows = t->cols = ~0u;\n  return i == 0;\n";
  }
  o << "}\n\n";
  if (ctx.k_walk) emit_units_data_parallel(ctx, o);
  }

  // The swizzle helpers the transfers use (each emitted once, only if used: the generated code of
  // links without such a transfer is unchanged).
  std::set<int> spans;
  for (const Pipe& p : ctx.pipes)
    if (p.transfer_to >= 0) {
      for (const PipeTensor& t : p.tensors) spans.insert(swizzle_span(t.swizzle));
      for (const PipeTensor& t : ctx.pipes[p.transfer_to].tensors) spans.insert(swizzle_span(t.swizzle));
    }
  for (const int s : {128, 64, 32})
    if (spans.count(s))
      o << "static __device__ __forceinline__ unsigned pl_swz" << s << "(unsigned b) { return b ^ (((b >> 7) & " << (s / 16 - 1)
        << "u) << 4); }\n\n";
  bool any_transfer = false;
  for (const Pipe& p : ctx.pipes) any_transfer |= p.transfer_to >= 0;
  if (any_transfer) o << kExprHelpers << "\n";
  for (size_t pi = 0; pi < ctx.pipes.size(); ++pi)
    if (ctx.pipes[pi].transfer_to >= 0) emit_transfer(ctx, pi, o);

  // ---- entry ----
  ctx.unit.prelude = o.str();
  o.str("");
  o << "// ---- entry: initialise mbarriers, then one branch per warpgroup ----\n"
    << "extern \"C\" __global__ void ";
  // --min-registers: the entry's register count is the cap (__maxnreg__, which excludes
  // __launch_bounds__); ptxas would otherwise give the entry the largest setmaxnreg budget.
  if (ctx.opt.min_registers && ctx.entry_registers > 0)
    o << "__maxnreg__(" << ctx.entry_registers << ") ";
  else
    o << "__launch_bounds__(" << threads << ", " << ctx.target.blocks_per_sm << ") ";
  o << ctx.opt.kernel_name << "(const __grid_constant__ pl::Args args) {\n"
    << "  extern __shared__ __align__(1024) unsigned char pl_smem[];\n";
  o << "#ifdef PL_CHECKED\n"
    << "  if ((pl::smem_addr(pl_smem) & 1023u) != 0) asm volatile(\"trap;\");\n"
    << "#endif\n";
  if (!ctx.mbarriers.empty()) {
    o << "  if (threadIdx.x == 0) {\n"
      << "    const unsigned base = pl::smem_addr(pl_smem);\n";
    for (const MbarSlot& m : ctx.mbarriers)
      o << "    for (unsigned j = 0; j < " << m.count << "u; ++j) pl::mbar_init(base + " << m.offset << "u + 8u * j, " << m.arrivals
        << "u);  // " << printable(m.owner) << " " << printable(m.name) << "\n";
    o << "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
      << "  }\n";
  }
  const int64_t cluster = ctx.cluster_size();
  if (cluster > 1) {
    // Peers copy into this block's stages and arrive on its mbarriers: none may start before every
    // block of the cluster initialised its mbarriers (the fence above releases the init to the
    // cluster; the cluster barrier's acquire makes it visible). A launch without the cluster
    // attribute would hang on the first multicast: trap instead.
    o << "  {  // cluster of " << cluster << " blocks\n"
      << "    unsigned n;\n"
      << "    asm volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(n));\n"
      << "    if (n != " << cluster << "u) asm volatile(\"trap;\");  // launched without the cluster dimension\n"
      << "  }\n"
      << "  asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\tbarrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n";
  } else {
    o << "  __syncthreads();\n";
  }
  o << ""
    << "  const unsigned warp = threadIdx.x >> 5;\n"
    << "  pl::Ctx ctx;\n"
    << "  ctx.args = &args;\n"
    << "  ctx.smem = pl_smem;\n";
  for (size_t g = 0; g < ctx.warpgroups.size(); ++g) {
    const WarpGroup& wg = ctx.warpgroups[g];
    o << "  " << (g ? "} else if" : "if") << " (warp < " << (wg.index + 1) * 4 << "u) {  // warpgroup " << wg.index << "\n";
    if (wg.registers && wg.registers != ctx.entry_registers)
      o << "    asm volatile(\"setmaxnreg." << (wg.registers < ctx.entry_registers ? "dec" : "inc") << ".sync.aligned.u32 "
        << wg.registers << ";\\n\");\n";
    // A component whose contract says pdl_wait = "own" executes the wait itself; in its warpgroup
    // each other role (and a transfer) waits in its own branch instead of the warpgroup's.
    bool own_wait = false;
    for (int i : wg.instances) own_wait |= ctx.instances[i].contract->pdl_own_wait;
    const bool role_wait = ctx.opt.pdl && own_wait;
    const bool early = ctx.opt.pdl && ctx.opt.pdl_early_trigger;
    const char* wait_line = early ? "      asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");  // pdl: before this role\n"
                                  : "      asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");  // pdl: before this role\n"
                                    "      asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n";
    if (early)
      // --pdl-early-trigger: the next grid may launch before this one's wait (its own wait still
      // covers all of this grid, which completes only after this wait has returned).
      o << "    asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");  // pdl: early trigger, before the wait\n";
    if (early && !own_wait)
      o << "    asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");  // pdl: after the prologue, before any role\n";
    else if (ctx.opt.pdl && !own_wait)
      // Programmatic dependent launch (--pdl). Everything above touches only this block's shared
      // memory and registers, so it may overlap the previous grid; every global access (any
      // component role, a transfer) comes after the wait, which returns once the grids this one
      // depends on have completed and their writes are visible. Then this block lets the next
      // grid be scheduled: that grid's own wait still covers all of this one, so triggering here
      // only lets its prologue overlap this grid's work, and at most two grids of a PDL chain
      // are resident at a time (the trigger follows the wait).
      o << "    asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");  // pdl: after the prologue, before any role\n"
        << "    asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n";
    bool first = true;
    for (int i : wg.instances) {
      const Instance& in = ctx.instances[i];
      o << "    " << (first ? "if" : "else if") << " ("
        << (in.warp_base ? "warp >= " + std::to_string(in.warp_base) + "u && " : std::string()) << "warp < "
        << in.warp_base + in.warps << "u) {  // " << printable(in.name) << "\n"
        << "      ctx.slots = &" << slots_name(i) << ";\n";
      if (role_wait && !in.contract->pdl_own_wait) o << wait_line;
      if (role_wait && in.contract->pdl_own_wait)
        o << "      // pdl: pdl_wait = \"own\": the component waits itself (pl::pdl_wait()) before it reads\n"
          << "      // what an earlier kernel writes\n";
      o << "      " << in.contract->entry << "(ctx);\n"
        << "    }\n";
      first = false;
    }
    for (size_t pi = 0; pi < ctx.pipes.size(); ++pi) {
      const Pipe& p = ctx.pipes[pi];
      if (p.transfer_to >= 0 && p.transfer_warp / 4 == wg.index) {
        o << "    " << (first ? "if" : "else if") << " (warp == " << p.transfer_warp << "u) {  // transfer for pipe '"
          << printable(p.name) << "'\n"
          << (role_wait ? wait_line : "")
          << "      " << transfer_name(pi) << "(&args, pl_smem);\n"
          << "    }\n";
        first = false;
      }
    }
  }
  if (!ctx.warpgroups.empty()) o << "  }\n";
  if (cluster > 1)
    o << "  // Every thread of the cluster, before any block exits: a peer may still copy into this\n"
      << "  // block's shared memory or arrive on its mbarriers.\n"
      << "  asm volatile(\"barrier.cluster.arrive.release;\\n\\tbarrier.cluster.wait.acquire;\" ::: \"memory\");\n";
  o << "}\n";
  ctx.unit.entry = o.str();
  ctx.result.generated_source = ctx.unit.text();
  ctx.result.threads = threads;
  ctx.result.smem_bytes = static_cast<unsigned>(ctx.smem_bytes);  // <= target.max_smem (allocate)
}

}  // namespace pipelink
