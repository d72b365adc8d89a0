// pipelink/diagnostics.h — errors, warnings and notes with provenance.
//
// Every pass reports into one Diagnostics sink and keeps going, so one link reports all of its
// errors at once; the driver stops before writing anything if any error was reported.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace pipelink {

struct SourceLoc {
  std::string file;  // contract path as given on the command line (or resolved from -T)
  int line = 0;      // 1-based; 0 when unknown
  std::string str() const { return line > 0 ? file + ":" + std::to_string(line) : file; }
  bool known() const { return !file.empty(); }
};

enum class Severity { Note, Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string rule;                  // e.g. "fact-constraint"; empty for internal errors
  std::string message;
  SourceLoc loc;                     // primary location
  std::vector<std::string> notes;    // ">>> ..." provenance lines
};

class Diagnostics {
 public:
  Diagnostic& error(std::string rule, std::string message, SourceLoc loc = {});
  Diagnostic& warning(std::string rule, std::string message, SourceLoc loc = {});
  Diagnostic& note(std::string message, SourceLoc loc = {});

  // --fatal-warnings: after a link's passes ran (so its real errors are all reported), every
  // warning becomes an error (same rule and message, `note` added). Returns how many.
  int promote_warnings(const std::string& note);

  bool has_errors() const { return errors_ > 0; }
  int error_count() const { return errors_; }
  const std::vector<Diagnostic>& all() const { return list_; }

  // lld-style rendering:  pipelink: error: <file:line>: <message> [rule]\n>>> note
  void print(std::ostream& os) const;

 private:
  std::vector<Diagnostic> list_;
  int errors_ = 0;
};

}  // namespace pipelink
