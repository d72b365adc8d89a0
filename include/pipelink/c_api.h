/* pipelink/c_api.h — a C ABI over the linker and the runtime, for bindings (python/pipelink uses
 * it through ctypes). Two shared libraries implement it (src/c_api.cpp, src/c_api_runtime.cpp):
 *
 *   libpipelink_c.so     the linker (pl_*): needs NVRTC and nvJitLink, never the CUDA driver, so
 *                        it loads and links on a machine without a GPU;
 *   libpipelink_rt_c.so  the runtime (plrt_*): loads a linked cubin and launches it; needs the
 *                        CUDA driver (libcuda.so.1), so bindings load it only when they need it.
 *
 * Rules of the ABI: no C++ exception crosses it; the libraries keep no global state (every result
 * lives in a handle the caller frees); strings are NUL-terminated UTF-8 and stay valid until
 * their handle is freed. Functions returning int return 0 on success; on failure they write a
 * NUL-terminated message into (err, err_size) when err is not NULL, truncated to fit.
 *
 *   pl_options* o = pl_options_new();
 *   pl_options_set(o, "input", "loader/contract.toml", err, sizeof err);   // repeat per contract
 *   pl_options_set(o, "output", "k.cubin", ...);  pl_options_set(o, "map", "k.map", ...);
 *   pl_result* r = pl_link(o);
 *   if (!pl_result_ok(r)) puts(pl_result_get(r, "diagnostics_text", NULL));
 *   pl_result_free(r);  pl_options_free(o);
 */
#ifndef PIPELINK_C_API_H
#define PIPELINK_C_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PL_C_EXPORT __attribute__((visibility("default")))
#else
#define PL_C_EXPORT
#endif

/* Bumped on any incompatible change; bindings check it when they load a library. */
#define PL_C_ABI_VERSION 1

/* ---- the linker: libpipelink_c.so ------------------------------------------------------------ */

typedef struct pl_options pl_options;
typedef struct pl_result pl_result;

PL_C_EXPORT int pl_abi_version(void);

PL_C_EXPORT pl_options* pl_options_new(void); /* NULL only when out of memory */
PL_C_EXPORT void pl_options_free(pl_options* o);

/* Sets one option of pipelink::LinkOptions. List keys append one element per call:
 *   input        a contract file (a contract given twice is instantiated twice)   [list]
 *   library_dir  -L                                                               [list]
 *   include_dir  -I                                                               [list]
 *   define       -D NAME[=VALUE]                                                  [list]
 *   connect      --connect PORT=PIPE                                              [list]
 *   output       -o: the cubin to write ("" writes none; the result holds it anyway)
 *   map          --map: the map to write
 *   map_svg      --map-svg: the map as a picture (SVG) to write
 *   arch         -arch (default sm_90a; sm_100a, sm_103a, sm_120a, sm_90: see pipelink/targets.h)
 *   cache_dir    --cache-dir (NVRTC output reused across links; default none)
 *   kernel_name  --kernel-name (default pipelink_kernel)
 *   control, save_temps, emit_ptx, verbose     "0" or "1"
 *   pdl          --pdl: programmatic dependent launch ("0" or "1")
 *   pdl_early_trigger  --pdl-early-trigger ("0" or "1")
 *   tile_order   --tile-order (row_major, col_major or grouped:G)
 *   blocks_per_sm  --blocks-per-sm N (1..32)
 *   min_registers  --min-registers ("0" or "1")
 *   fatal_warnings  --fatal-warnings: every warning reported as an error ("0" or "1")
 * An unknown key or a malformed value is an error (nothing is set). */
PL_C_EXPORT int pl_options_set(pl_options* o, const char* key, const char* value, char* err, size_t err_size);

/* Parses, checks, allocates, generates, compiles and links (pipelink::link), then writes the
 * output and map files the options name, all or nothing. pl_check stops after checks and
 * allocation and writes only the map. pl_compile compiles one component source to LTO-IR with
 * NVRTC, writing the option "output". They never return NULL unless out of memory; whether the
 * link succeeded is pl_result_ok. */
PL_C_EXPORT pl_result* pl_link(const pl_options* o);
PL_C_EXPORT pl_result* pl_check(const pl_options* o);
PL_C_EXPORT pl_result* pl_compile(const pl_options* o, const char* source_path);

PL_C_EXPORT int pl_result_ok(const pl_result* r);           /* 1 if it succeeded and wrote what it was asked to */
PL_C_EXPORT unsigned pl_result_threads(const pl_result* r);
PL_C_EXPORT unsigned pl_result_smem_bytes(const pl_result* r);
/* One of the result's texts or blobs, by name, with its size in *size (if size is not NULL):
 *   cubin             the linked cubin (binary; empty for pl_check or a failed link)
 *   map               the link map (what --map writes)
 *   svg               the map as a picture (what --map-svg writes)
 *   ptx               the linked PTX (with emit_ptx or save_temps)
 *   generated_source  the generated connection unit
 *   toolchain_log     ptxas / nvJitLink info log
 *   diagnostics_text  every diagnostic rendered as the command line prints it
 *   diagnostics_json  [{"severity": "error"|"warning"|"note", "rule": ..., "message": ...,
 *                       "file": ..., "line": N, "notes": [...]}, ...]
 * NULL for an unknown name. */
PL_C_EXPORT const char* pl_result_get(const pl_result* r, const char* what, size_t* size);
PL_C_EXPORT void pl_result_free(pl_result* r);

/* ---- the runtime: libpipelink_rt_c.so --------------------------------------------------------- */

typedef struct plrt_kernel plrt_kernel;

PL_C_EXPORT int plrt_abi_version(void);

/* Loads a linked cubin and its map into the primary context of CUDA device `device` (the context
 * PyTorch and the CUDA runtime use), initializing the driver if needed. The kernel keeps that
 * context retained until plrt_kernel_free. */
PL_C_EXPORT int plrt_kernel_load(const char* cubin_path, const char* map_path, int device, plrt_kernel** out, char* err,
                                 size_t err_size);
PL_C_EXPORT void plrt_kernel_free(plrt_kernel* k);

/* {"name": ..., "threads": N, "smem_bytes": N, "device": N, "pdl": true|false, "workspace_stride": N,
 *  "params": {"NAME": "TYPE", ...}, "boxes": {"NAME": {"rows": N, "cols": N, "dtype": "bf16",
 *  "swizzle": "128B"}, ...}, "facts": {"NAME": N, ...}} — TYPE is ptr, u32, i32, u64, f32 or
 *  tensormap; pdl: the cubin was linked with --pdl (the manifest's `pdl` line); boxes: the
 *  tensormap params whose contracts name the tensor one copy moves (the manifest's `box` words). */
PL_C_EXPORT const char* plrt_kernel_info_json(const plrt_kernel* k);

/* Each setter takes only a parameter of its own type, as pipelink::Module's do. */
PL_C_EXPORT int plrt_set_ptr(plrt_kernel* k, const char* name, unsigned long long value, char* err, size_t err_size);
PL_C_EXPORT int plrt_set_u32(plrt_kernel* k, const char* name, unsigned value, char* err, size_t err_size);
PL_C_EXPORT int plrt_set_i32(plrt_kernel* k, const char* name, int value, char* err, size_t err_size);
PL_C_EXPORT int plrt_set_u64(plrt_kernel* k, const char* name, unsigned long long value, char* err, size_t err_size);
PL_C_EXPORT int plrt_set_f32(plrt_kernel* k, const char* name, float value, char* err, size_t err_size);
/* map128: the 128 bytes of a CUtensorMap (any alignment; copied). */
PL_C_EXPORT int plrt_set_tensormap(plrt_kernel* k, const char* name, const void* map128, char* err, size_t err_size);

/* Launches `grid` blocks on `stream` (a CUstream / cudaStream_t; NULL: the legacy default
 * stream). Asynchronous, and allowed during stream capture (CUDA graphs): the launch captures
 * the parameters as they are now. A cubin linked with --pdl is launched with
 * CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (and only such a cubin). */
PL_C_EXPORT int plrt_launch(plrt_kernel* k, unsigned grid, void* stream, char* err, size_t err_size);

/* A split-schedule kernel (--tile-schedule split-k / stream-k; its info JSON has "workspace_stride"
 * > 0): allocates and zeroes the partials' workspace for `grid` blocks now (plrt_launch does it on
 * the first launch of a grid that large, which a CUDA graph capture does not allow). A no-op for
 * other kernels and for a grid the workspace already covers. */
PL_C_EXPORT int plrt_reserve_workspace(plrt_kernel* k, unsigned grid, void* stream, char* err, size_t err_size);

/* The tiles of a launch with the params set now, ceil(M / tile_m) * ceil(N / tile_n) over the
 * link's [tiles] extents (pipelink::Module::tile_count): an error for a link without a tile
 * sequence, an extent read from device memory, or an extent not yet set. */
PL_C_EXPORT int plrt_tile_count(const plrt_kernel* k, unsigned long long* tiles, char* err, size_t err_size);

/* The grid to launch with the params set now (pipelink::Module::persistent_grid; the rule is
 * pipelink/grid.h): for a data-parallel link the fewest blocks that take as many rounds of tiles
 * as every resident block would, ceil(T / ceil(T / R)); for several blocks per SM min(T, R); for
 * a split schedule the resident blocks; for an extent read from device memory R; for a cluster
 * link the resident clusters times their size. Fails for a link without a tile sequence, an
 * extent not yet set, or a kernel of which nothing fits. */
PL_C_EXPORT int plrt_persistent_grid(const plrt_kernel* k, unsigned* grid, void* stream, char* err, size_t err_size);

/* A PL_CHECKED kernel's first timed-out pipe wait ("" if none), into (buf, size). */
PL_C_EXPORT int plrt_checked_report(const plrt_kernel* k, char* buf, size_t size);

/* Encodes a 2-D bf16 tensor map (cuTensorMapEncodeTiled) into out128 (128 bytes, any alignment):
 * a row-major [rows, cols] matrix at `base` whose rows are row_stride_bytes apart, copied in
 * boxes of box_rows x box_cols. swizzle_bytes: 0, 32, 64 or 128; l2_promotion_bytes: 0, 64, 128
 * or 256. Out-of-bounds elements read as zeros. Initializes the driver if needed; needs no context. */
PL_C_EXPORT int plrt_bf16_tensor_map(void* out128, unsigned long long base, unsigned long long rows,
                                     unsigned long long cols, unsigned long long row_stride_bytes, unsigned box_rows,
                                     unsigned box_cols, int swizzle_bytes, int l2_promotion_bytes, char* err, size_t err_size);

/* ---- plain kernels next to the linked ones (e.g. MoE routing) ------------------------------------ */

typedef struct plrt_function plrt_function;

/* Loads the entry point `name` (C linkage) of a plain cubin into the primary context of CUDA device
 * `device`, as plrt_kernel_load does for a linked kernel. */
PL_C_EXPORT int plrt_function_load(const char* cubin_path, const char* name, int device, plrt_function** out, char* err,
                                   size_t err_size);
PL_C_EXPORT void plrt_function_free(plrt_function* f);

/* Another entry point `name` (C linkage) of a linked kernel's own module, e.g. a pack kernel a
 * component compiles beside its entry (docs/components.md 5.8): the code that was loaded with
 * the kernel, not the cubin file as it is now. The function shares the kernel's module, which
 * stays loaded until both are freed (plrt_function_free, plrt_kernel_free, in either order). */
PL_C_EXPORT int plrt_kernel_function(const plrt_kernel* k, const char* name, plrt_function** out, char* err,
                                     size_t err_size);

/* cuLaunchKernel of grid x block threads (1-D) with smem_bytes of dynamic shared memory on `stream`
 * (NULL: the legacy default stream); args as cuLaunchKernel's kernelParams: one pointer to each
 * argument's value, in order. The caller must pass the kernel's exact argument types. */
PL_C_EXPORT int plrt_function_launch(plrt_function* f, unsigned grid, unsigned block, unsigned smem_bytes, void* stream,
                                     void** args, char* err, size_t err_size);

/* Flags of plrt_function_launch_ex. PLRT_LAUNCH_PDL: launch with
 * CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (programmatic dependent launch): the kernel
 * may start before the stream's previous kernel ends, so it must execute griddepcontrol.wait (e.g.
 * cudaGridDependencySynchronize()) before it reads or writes memory that kernel touches. */
#define PLRT_LAUNCH_PDL 1u

/* plrt_function_launch with flags (0: the same as plrt_function_launch; an unknown bit is an error). */
PL_C_EXPORT int plrt_function_launch_ex(plrt_function* f, unsigned grid, unsigned block, unsigned smem_bytes, void* stream,
                                        void** args, unsigned flags, char* err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* PIPELINK_C_API_H */
