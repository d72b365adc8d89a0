// c_api_json — the one JSON helper the C ABI needs: a string literal with escapes.
#pragma once

#include <cstdio>
#include <string>

namespace pipelink {

inline void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;  // UTF-8 passes through
    }
  }
  out += '"';
}

}  // namespace pipelink
