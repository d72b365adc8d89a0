// c_api — the linker's C ABI (include/pipelink/c_api.h), built into libpipelink_c.so.
// Does not: touch the CUDA driver (that is c_api_runtime.cpp), keep any global state, or let an
// exception out: every entry point catches and turns it into an error diagnostic or status.
#include "pipelink/c_api.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <sstream>
#include <string>

#include "c_api_json.h"
#include "pipelink/pipelink.h"

struct pl_options {
  pipelink::LinkOptions opt;
};

struct pl_result {
  bool ok = false;
  pipelink::LinkResult link;
  std::string diagnostics_text;
  std::string diagnostics_json;
};

namespace {

void set_err(char* err, size_t size, const std::string& msg) {
  if (!err || size == 0) return;
  const size_t n = msg.size() < size - 1 ? msg.size() : size - 1;
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

void json_string(std::string& out, const std::string& s) { pipelink::append_json_string(out, s); }

std::string diagnostics_json(const pipelink::Diagnostics& d) {
  std::string j = "[";
  bool first = true;
  for (const pipelink::Diagnostic& x : d.all()) {
    if (!first) j += ",";
    first = false;
    j += "{\"severity\":";
    json_string(j, x.severity == pipelink::Severity::Error ? "error" : x.severity == pipelink::Severity::Warning ? "warning" : "note");
    j += ",\"rule\":";
    json_string(j, x.rule);
    j += ",\"message\":";
    json_string(j, x.message);
    j += ",\"file\":";
    json_string(j, x.loc.file);
    j += ",\"line\":" + std::to_string(x.loc.line) + ",\"notes\":[";
    for (size_t i = 0; i < x.notes.size(); ++i) {
      if (i) j += ",";
      json_string(j, x.notes[i]);
    }
    j += "]}";
  }
  return j + "]";
}

void finish(pl_result* r, const pipelink::Diagnostics& d) {
  std::ostringstream os;
  d.print(os);
  r->diagnostics_text = os.str();
  r->diagnostics_json = diagnostics_json(d);
  if (d.has_errors()) r->ok = false;
}

bool parse_bool(const char* v, bool& out) {
  if (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0) return out = true, true;
  if (std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0) return out = false, true;
  return false;
}

enum class Mode { Link, Check, Compile };

pl_result* run(const pl_options* o, Mode mode, const char* source) {
  pl_result* r = new (std::nothrow) pl_result;
  if (!r) return nullptr;
  pipelink::Diagnostics diags;
  try {
    if (!o) {
      diags.error("input", "no options (NULL pl_options)");
    } else if (mode == Mode::Compile) {
      if (!source || !*source) diags.error("input", "no component source given");
      else r->ok = pipelink::compile_component(source, o->opt, diags);
    } else {
      pipelink::LinkOptions opt = o->opt;
      opt.check_only = mode == Mode::Check;
      if (opt.check_only) opt.output.clear();
      if (!opt.check_only && opt.inputs.empty()) diags.error("input", "no contracts given");
      else {
        r->link = pipelink::link(opt, diags);
        r->ok = r->link.ok;
        if (r->ok && (!opt.output.empty() || !opt.map_path.empty() || !opt.map_svg_path.empty() || opt.save_temps || opt.emit_ptx))
          r->ok = pipelink::write_outputs(opt, r->link, diags);
      }
    }
  } catch (const std::bad_alloc&) {
    r->ok = false;
    diags.error("internal", "out of memory");
  } catch (const std::exception& e) {
    r->ok = false;
    diags.error("internal", std::string("internal error: ") + e.what());
  } catch (...) {
    r->ok = false;
    diags.error("internal", "internal error (unknown exception)");
  }
  try {
    finish(r, diags);
  } catch (...) {
    r->ok = false;
    r->diagnostics_text = "pipelink: error: out of memory while rendering diagnostics\n";
    r->diagnostics_json = "[]";
  }
  return r;
}

}  // namespace

extern "C" {

int pl_abi_version(void) { return PL_C_ABI_VERSION; }

pl_options* pl_options_new(void) { return new (std::nothrow) pl_options; }

void pl_options_free(pl_options* o) { delete o; }

int pl_options_set(pl_options* o, const char* key, const char* value, char* err, size_t err_size) {
  if (!o || !key || !value) {
    set_err(err, err_size, "pl_options_set: NULL argument");
    return -1;
  }
  try {
    pipelink::LinkOptions& opt = o->opt;
    const std::string k = key, v = value;
    if (k == "input") opt.inputs.push_back(v);
    else if (k == "library_dir") opt.library_dirs.push_back(v);
    else if (k == "include_dir") opt.include_dirs.push_back(v);
    else if (k == "define") opt.defines.push_back(v);
    else if (k == "connect") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
        set_err(err, err_size, "connect takes PORT=PIPE, got '" + v + "'");
        return -1;
      }
      opt.connect[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (k == "output") opt.output = v;
    else if (k == "map") opt.map_path = v;
    else if (k == "map_svg") opt.map_svg_path = v;
    else if (k == "arch") opt.arch = v;
    else if (k == "cache_dir") opt.cache_dir = v;
    else if (k == "kernel_name") opt.kernel_name = v;
    else if (k == "tile_order") opt.tile_order = v;
    else if (k == "tile_schedule") opt.tile_schedule = v;
    else if (k == "blocks_per_sm") {
      if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1 || std::stoi(v) > 32) {
        set_err(err, err_size, "option 'blocks_per_sm' takes 1..32, got '" + v + "'");
        return -1;
      }
      opt.blocks_per_sm = std::stoi(v);
    }
    else if (k == "pdl_early_trigger") {
      if (!parse_bool(value, opt.pdl_early_trigger)) {
        set_err(err, err_size, "option 'pdl_early_trigger' takes 0 or 1, got '" + v + "'");
        return -1;
      }
    } else if (k == "min_registers") {
      if (!parse_bool(value, opt.min_registers)) {
        set_err(err, err_size, "option 'min_registers' takes 0 or 1, got '" + v + "'");
        return -1;
      }
    } else if (k == "fatal_warnings") {
      if (!parse_bool(value, opt.fatal_warnings)) {
        set_err(err, err_size, "option 'fatal_warnings' takes 0 or 1, got '" + v + "'");
        return -1;
      }
    } else if (k == "control" || k == "save_temps" || k == "emit_ptx" || k == "verbose" || k == "pdl") {
      bool b = false;
      if (!parse_bool(value, b)) {
        set_err(err, err_size, "option '" + k + "' takes 0 or 1, got '" + v + "'");
        return -1;
      }
      (k == "control" ? opt.control : k == "save_temps" ? opt.save_temps : k == "emit_ptx" ? opt.emit_ptx : k == "pdl" ? opt.pdl : opt.verbose) = b;
    } else {
      set_err(err, err_size, "unknown option '" + k + "'");
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    set_err(err, err_size, std::string("pl_options_set: ") + e.what());
    return -1;
  } catch (...) {
    set_err(err, err_size, "pl_options_set: unknown exception");
    return -1;
  }
}

pl_result* pl_link(const pl_options* o) { return run(o, Mode::Link, nullptr); }
pl_result* pl_check(const pl_options* o) { return run(o, Mode::Check, nullptr); }
pl_result* pl_compile(const pl_options* o, const char* source_path) { return run(o, Mode::Compile, source_path); }

int pl_result_ok(const pl_result* r) { return r && r->ok ? 1 : 0; }
unsigned pl_result_threads(const pl_result* r) { return r ? r->link.threads : 0; }
unsigned pl_result_smem_bytes(const pl_result* r) { return r ? r->link.smem_bytes : 0; }

const char* pl_result_get(const pl_result* r, const char* what, size_t* size) {
  if (size) *size = 0;
  if (!r || !what) return nullptr;
  const std::string w = what;
  const std::string* s = nullptr;
  if (w == "cubin") {
    if (size) *size = r->link.cubin.size();
    return r->link.cubin.empty() ? "" : r->link.cubin.data();
  }
  if (w == "map") s = &r->link.map;
  else if (w == "svg") s = &r->link.svg;
  else if (w == "ptx") s = &r->link.linked_ptx;
  else if (w == "generated_source") s = &r->link.generated_source;
  else if (w == "toolchain_log") s = &r->link.toolchain_log;
  else if (w == "diagnostics_text") s = &r->diagnostics_text;
  else if (w == "diagnostics_json") s = &r->diagnostics_json;
  else return nullptr;
  if (size) *size = s->size();
  return s->c_str();
}

void pl_result_free(pl_result* r) { delete r; }

}  // extern "C"
