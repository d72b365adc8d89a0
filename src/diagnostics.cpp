// Diagnostics: collection and rendering. Rendering is deterministic (report order).
#include "pipelink/diagnostics.h"

namespace pipelink {

static Diagnostic& push(std::vector<Diagnostic>& list, Severity s, std::string rule, std::string msg,
                        SourceLoc loc) {
  list.push_back(Diagnostic{s, std::move(rule), std::move(msg), std::move(loc), {}});
  return list.back();
}

Diagnostic& Diagnostics::error(std::string rule, std::string message, SourceLoc loc) {
  ++errors_;
  return push(list_, Severity::Error, std::move(rule), std::move(message), std::move(loc));
}
Diagnostic& Diagnostics::warning(std::string rule, std::string message, SourceLoc loc) {
  return push(list_, Severity::Warning, std::move(rule), std::move(message), std::move(loc));
}
int Diagnostics::promote_warnings(const std::string& note) {
  int n = 0;
  for (Diagnostic& d : list_)
    if (d.severity == Severity::Warning) {
      d.severity = Severity::Error;
      d.notes.push_back(note);
      ++n;
    }
  errors_ += n;
  return n;
}
Diagnostic& Diagnostics::note(std::string message, SourceLoc loc) {
  return push(list_, Severity::Note, "", std::move(message), std::move(loc));
}

void Diagnostics::print(std::ostream& os) const {
  for (const Diagnostic& d : list_) {
    const char* sev = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note";
    os << "pipelink: " << sev << ": ";
    if (d.loc.known()) os << d.loc.str() << ": ";
    os << d.message;
    if (!d.rule.empty()) os << " [" << d.rule << "]";
    os << "\n";
    for (const std::string& n : d.notes) os << ">>> " << n << "\n";
  }
  if (errors_ > 0) os << "pipelink: " << errors_ << (errors_ == 1 ? " error" : " errors") << "; nothing written\n";
}

}  // namespace pipelink
