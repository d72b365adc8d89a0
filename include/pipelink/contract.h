// pipelink/contract.h — the in-memory form of a component contract (see docs/contracts.md).
//
// Parsing fills the declared fields and their source locations; the resolve pass fills every
// Quantity::value once facts are known. Nothing here is allocated yet: that is allocate's job.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipelink/diagnostics.h"
#include "pipelink/expr.h"

namespace pipelink {

// A count or size: an expression over facts, where it was written, and its value once resolved.
struct Quantity {
  Expr expr;
  SourceLoc loc;
  int64_t value = 0;
};

enum class FactType { I32, U32, I64, U64 };
const char* fact_type_name(FactType t);
const char* fact_c_type(FactType t);  // the C++ type device code holds it in ("unsigned", ...)

struct FactProvide {
  std::string name;
  Quantity value;
  FactType type = FactType::U32;
};

struct FactUse {
  std::string name;
  std::optional<int64_t> min, max, multiple_of;
  std::vector<int64_t> one_of;
  std::optional<FactType> type;
  SourceLoc loc;
};

struct SmemRegion {
  std::string name;
  Quantity bytes;
  int64_t align = 16;
  std::vector<std::string> live;  // empty = always live
  SourceLoc loc;
};

struct NamedBarrier {
  std::string name;
  Quantity threads;
  SourceLoc loc;
};

struct MbarrierGroup {
  std::string name;
  Quantity count;
  Quantity arrivals;
  SourceLoc loc;
};

struct TensorDecl {
  std::string name;
  std::string dtype;    // bf16 f16 f32 ...
  Quantity rows, cols;
  bool any_shape = false;        // shape = "*": a consumer that takes the producer's shape
  std::string layout = "row";    // row | col
  std::string swizzle = "none";  // none | 32B | 64B | 128B
  std::string space = "smem";
  // tile_coords: the tile coordinates the tensor's content depends on (its stage for tile (m, n)
  // holds data selected by m, by n, by both or by neither). Required on a multicast tensor: every
  // block of a multicast group receives the same copy, so the tile sequence must give them the
  // same value of each coordinate it lists (check_cluster, generate).
  bool tile_coords_declared = false;
  bool follows_m = false, follows_n = false;
  SourceLoc tile_coords_loc;
  SourceLoc loc;
};
// "[\"n\"]", "[\"m\", \"n\"]", "[]": a tensor's tile_coords as the contract writes it.
std::string tile_coords_text(const TensorDecl& t);

enum class PortDir { Out, In };
enum class Arrive { One, Warp, Thread };
enum class Completion { Arrive, Tx };

struct PortDecl {
  std::string name;
  PortDir dir = PortDir::Out;
  Quantity stages;
  Completion completion = Completion::Arrive;
  Arrive arrive = Arrive::One;
  std::vector<std::string> guarantees, requires_;
  std::vector<TensorDecl> tensors;
  // Producers only: the tensors of a stage this component fills (empty = all of them). Several
  // components can fill one stage, each its own tensors, each with its own completion: e.g. one
  // gathers activations with cp.async (arrive) while another loads weights with TMA (tx).
  std::vector<std::string> writes;
  SourceLoc writes_loc;
  // Stages per tile, an expression over facts and u32 params (e.g. "ceil_div(K, tile_k)").
  // Only a generated transfer needs it, to know how many stages to move per tile; a producer
  // whose pipe gets a transfer must declare it (per_tile_declared).
  Expr per_tile;
  SourceLoc per_tile_loc;
  bool per_tile_declared = false;
  // Producers only, completion = "tx": the stage is filled jointly by `multicast` blocks of the
  // thread-block cluster (consecutive ranks), each copying its share of the tensors listed in
  // multicast_tensors into the same stage of every block of the group (TMA .multicast::cluster).
  // 1 = this block only. Consumers of such a pipe release the stage in every block of the group.
  int64_t multicast = 1;
  std::vector<std::string> multicast_tensors;
  SourceLoc multicast_loc;
  SourceLoc loc;
};

enum class ParamType { TensorMap, Ptr, U32, I32, U64, F32 };
const char* param_type_name(ParamType t);

struct ParamDecl {
  std::string name;
  ParamType type = ParamType::Ptr;
  SourceLoc loc;
  // type = "tensormap": the port tensor one TMA copy of this map lands in or leaves from
  // (tensor = "<port>.<tensor>": its dtype and swizzle are the map's) and the copy's box
  // (box = [rows, cols], facts allowed; default the tensor's shape). The link resolves them into
  // the manifest, so the host builds the map from the link (Module::set_tensor) instead of
  // restating them. Empty tensor_port: undeclared (the host builds the map itself).
  std::string tensor_port, tensor_name;
  bool box_declared = false;
  Quantity box_rows, box_cols;
  SourceLoc tensor_loc, box_loc;
};

// [[assert]]: a relation between facts that must hold, e.g. "tile_m % out_rows == 0".
struct AssertDecl {
  Expr expr;              // a condition (Expr::parse_condition)
  std::string message;    // optional: why it must hold
  SourceLoc loc;          // the expr key
};

struct TilesDecl {
  bool present = false;
  std::string order = "row_major";   // row_major | col_major | grouped | any (the link's choice: --tile-order)
  int64_t group = 0;                  // grouped: tiles along m per band (a multiple of the cluster)
  Quantity tile_m, tile_n;
  std::string extent_m, extent_n;
  // device_extent = ["M"]: this component declares the extent M as a ptr param, the address of a
  // u32 in device memory that the tile sequence reads when the kernel runs (an earlier kernel's
  // result). An extent is read from memory only where a contract says so here.
  std::vector<std::string> device_extent;
  SourceLoc device_extent_loc;
  // k_extent = "K", k_tile = "tile_k": this component walks work units (pl::unit_at), each a range
  // of k slices of one tile: its code runs k_begin..k_end of a tile's ceil(K / k_tile) slices. A
  // component without them walks whole output tiles (pl::tile_at). Under --tile-schedule
  // stream-k a tile may be split across blocks; partial_bytes = "..." (per instance) says this
  // component sums the pieces: the bytes of one piece's partial result in the workspace.
  std::string k_extent;
  Quantity k_tile;
  Quantity partial_bytes;
  bool has_partials = false;
  SourceLoc k_loc, partial_loc;
  SourceLoc loc;
};

// [cluster]: the thread-block cluster the component is written for. dims = [x, y, z]; PipeLink's
// grid is one-dimensional, so y = z = 1. A component without [cluster] is cluster-agnostic.
struct ClusterDecl {
  bool present = false;
  int64_t dims[3] = {1, 1, 1};
  bool nonportable = false;   // allow_nonportable = true: a size above the portable 8 (up to 16)
  SourceLoc loc;              // the [cluster] table
  int64_t size() const { return dims[0] * dims[1] * dims[2]; }
};

struct Contract {
  std::string path;       // as given
  std::string dir;        // directory of the contract, for object/source paths
  std::string name, owner, entry, object, source;
  std::vector<std::string> defines;  // NAME[=VALUE] the object was compiled with (for the control)
  SourceLoc loc;          // [component] table
  SourceLoc object_loc;
  std::optional<Quantity> instances;
  // [component] pdl_wait = "own": in a --pdl link the component executes the dependency wait
  // itself (pl::pdl_wait()), so it may read what no earlier kernel writes (weights, tensor maps)
  // before it; the generated entry then waits only for the other roles. Default "entry".
  bool pdl_own_wait = false;
  SourceLoc pdl_wait_loc;

  std::vector<FactProvide> provides;
  std::vector<FactUse> uses;

  Quantity warps;
  bool warpgroup = false;
  std::optional<Quantity> registers;
  SourceLoc warps_loc;

  std::vector<SmemRegion> smem;
  std::vector<NamedBarrier> barriers;
  std::vector<MbarrierGroup> mbarriers;
  std::vector<PortDecl> ports;
  std::vector<ParamDecl> params;
  std::vector<AssertDecl> asserts;
  TilesDecl tiles;
  ClusterDecl cluster;
};

}  // namespace pipelink
