// map_svg — the link map as a picture (--map-svg): one standalone SVG drawn from the same
// LinkContext as render_map. Four parts, top to bottom:
//   header          kernel, target, threads, shared memory, register cap, facts
//   shared memory   offset (x, bytes) against lifetime (rows: "always", then each instance's live
//                   phases); one rectangle per region, coloured by owner
//   warps           one row per warpgroup: which instance (or generated transfer) runs on which
//                   warps, and the warpgroup's register budget (setmaxnreg.inc/dec)
//   pipes           components and pipes as boxes in dataflow columns, arrows producer → pipe →
//                   consumer; each pipe box lists stages, stage bytes, and every producer's and
//                   consumer's share of the full/empty mbarrier (arrivals, tx bytes)
// Deterministic: fixed layout rules, a monospace font so text widths are known (0.6 em a
// character), coordinates printed with one decimal. Every string from a contract goes through
// text(): control characters and invalid UTF-8 become \xHH, and & < > " ' are XML-escaped. A label
// that does not fit is shortened with "…" and the full text is kept in a <title> (a tooltip).
#include <algorithm>
#include <cstdio>
#include <map>
#include <iterator>
#include <sstream>

#include "context.h"

namespace pipelink {

namespace {

constexpr const char* kFont = "DejaVu Sans Mono, Menlo, Consolas, monospace";
constexpr double kAdvance = 0.6;  // a monospace character's advance, in units of the font size

// Contract text made displayable: valid UTF-8 passes (except characters XML forbids); control
// characters and bytes that are not UTF-8 become \xHH. Idempotent.
std::string displayable(const std::string& s) {
  static const char hex[] = "0123456789abcdef";
  std::string o;
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    uint32_t cp = 0;
    if (ok) {
      cp = len == 1 ? c : len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
      for (size_t k = 1; k < len && ok; ++k) {
        const unsigned char d = static_cast<unsigned char>(s[i + k]);
        if ((d & 0xc0) != 0x80) ok = false;
        cp = (cp << 6) | (d & 0x3fu);
      }
    }
    static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (ok && (cp < min_cp[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp == 0xfffe || cp == 0xffff))
      ok = false;
    if (!ok || cp < 0x20 || cp == 0x7f) {
      o += "\\x";
      o += hex[c >> 4];
      o += hex[c & 15];
      ++i;
      continue;
    }
    o.append(s, i, len);
    i += len;
  }
  return o;
}

// XML-escapes displayable text.
std::string xml(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default: o += c;
    }
  }
  return o;
}

size_t glyphs(const std::string& d) {  // code points of displayable text
  size_t n = 0;
  for (char c : d) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}
double text_width(const std::string& s, double size) { return glyphs(displayable(s)) * size * kAdvance; }

// The displayable text shortened to at most `width` pixels, ending in "…" when cut ("" when not
// even one character and the ellipsis fit).
std::string fit(const std::string& s, double width, double size) {
  const std::string d = displayable(s);
  const size_t max = static_cast<size_t>(width / (size * kAdvance));
  if (glyphs(d) <= max) return d;
  if (max < 2) return "";
  std::string o;
  size_t n = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if ((static_cast<unsigned char>(d[i]) & 0xc0) != 0x80 && ++n > max - 1) break;
    o += d[i];
  }
  return o + "\xe2\x80\xa6";  // …
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  std::string s = b;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

std::string kib(int64_t bytes) {  // tick labels: 16 KiB, or bytes when not a whole KiB
  if (bytes != 0 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes);
}

// Fill colours (light enough for dark text): instances take pastels, pipes stronger hues of their
// own, so a ring never looks like a component's region; "pipelink" (the mbarrier block) is grey.
const char* const kInstanceFill[] = {"#8ecae6", "#b5e48c", "#ffadad", "#cdb4db", "#ffe066", "#caffbf", "#ffd6a5", "#bde0fe"};
const char* const kPipeFill[] = {"#f4a261", "#76c7c0", "#9fa8da", "#f28eb2", "#c5c56a", "#d4a373"};
constexpr const char* kLinkerFill = "#d0d0d0";

struct Svg {
  std::ostringstream o;
  // `s` is contract or generated text (escaped here); it is shortened to max_width if given.
  void text(double x, double y, const std::string& s, double size, const char* anchor = "start", bool bold = false,
            const char* fill = "#1a1a1a", double max_width = 0) {
    // Leading spaces indent (SVG collapses them): the text moves right by their width.
    const bool bounded = max_width > 0;
    size_t indent = 0;
    while (indent < s.size() && s[indent] == ' ') ++indent;
    if (indent && std::string(anchor) == "start") {
      x += indent * size * kAdvance;
      max_width -= indent * size * kAdvance;
    }
    const std::string body = s.substr(indent);
    const std::string d = bounded ? fit(body, std::max(0.0, max_width), size) : displayable(body);
    if (d.empty()) return;
    o << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << num(size) << "\"";
    if (std::string(anchor) != "start") o << " text-anchor=\"" << anchor << "\"";
    if (bold) o << " font-weight=\"bold\"";
    if (std::string(fill) != "#1a1a1a") o << " fill=\"" << fill << "\"";
    o << ">" << xml(d) << "</text>\n";
  }
  void rect(double x, double y, double w, double h, const char* fill, const char* stroke = "#404040", double sw = 1,
            bool dashed = false, double rx = 0) {
    o << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h)
      << "\" fill=\"" << fill << "\"";
    if (stroke) o << " stroke=\"" << stroke << "\" stroke-width=\"" << num(sw) << "\"";
    if (dashed) o << " stroke-dasharray=\"5 3\"";
    if (rx > 0) o << " rx=\"" << num(rx) << "\"";
    o << "/>\n";
  }
  void line(double x1, double y1, double x2, double y2, const char* stroke, double sw = 1, bool dashed = false) {
    o << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2)
      << "\" stroke=\"" << stroke << "\" stroke-width=\"" << num(sw) << "\"" << (dashed ? " stroke-dasharray=\"4 3\"" : "")
      << "/>\n";
  }
  void open_group(const std::string& title) { o << "<g><title>" << xml(displayable(title)) << "</title>\n"; }
  void close_group() { o << "</g>\n"; }
};

std::string live_label(const std::vector<std::string>& live) {
  std::string s;
  for (size_t i = 0; i < live.size(); ++i) s += (i ? "+" : "") + live[i];
  return live.empty() ? "always" : s;
}

std::string warps_label(const Instance& in) {
  if (in.warps == 0) return "no warps";
  if (in.warps == 1) return "warp " + std::to_string(in.warp_base);
  return "warps " + std::to_string(in.warp_base) + "-" + std::to_string(in.warp_base + in.warps - 1);
}

std::string plural(int64_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// ---- layout constants ----
constexpr double kMargin = 20;
constexpr double kLabelW = 210;     // the row labels' column (shared memory, warps)
constexpr double kChartW = 1100;    // the shared-memory axis and the warp rows
constexpr double kBody = 12, kSmall = 11, kHead = 14, kTitle = 16;
constexpr double kLine = 15;        // line height of body text

// A label called out below a shared-memory row: its leader line at x = cx, the label (width w)
// ending just left of it (left) or starting just right of it, in lane `lane` (0: nearest the row).
struct Callout { double cx = 0, w = 0; std::string s; bool left = true; double a = 0, b = 0; int lane = 0; };

// Chooses each callout's side and lane, in order of cx: a label may not overlap another label of
// its lane, nor a leader line passing through its lane (a callout's leader crosses every lane
// above its own), and its own leader may not cross a label above it. Labels go left of their
// leader where they fit right of min_x, else right. When neither side can avoid a crossing (only
// right-side labels can cause one), the label takes a new lane at the bottom. Returns the lanes.
int place_callouts(std::vector<Callout>& cs, double min_x) {
  std::stable_sort(cs.begin(), cs.end(), [](const Callout& p, const Callout& q) { return p.cx < q.cx; });
  std::vector<std::vector<std::pair<double, double>>> lane;  // label extents per lane
  std::vector<const Callout*> placed;
  auto put = [&](Callout& c, bool left, int m) {
    c.left = left;
    c.a = left ? c.cx - 4 - c.w : c.cx + 4;
    c.b = c.a + c.w;
    c.lane = m;
    if (m >= static_cast<int>(lane.size())) lane.resize(m + 1);
    lane[m].push_back({c.a, c.b});
    placed.push_back(&c);
  };
  for (Callout& c : cs) {
    const bool prefer_left = c.cx - 4 - c.w >= min_x;
    bool done = false;
    for (int side = 0; side < 2 && !done; ++side) {
      const bool left = side == 0 ? prefer_left : !prefer_left;
      if (left && c.cx - 4 - c.w < min_x) continue;
      const double a = left ? c.cx - 4 - c.w : c.cx + 4, b = a + c.w;
      for (int m = 0; !done; ++m) {
        bool crosses = false;  // this leader through a label above lane m: so for every lane below too
        for (int l = 0; l < m && l < static_cast<int>(lane.size()); ++l)
          for (const auto& iv : lane[l]) crosses |= iv.first - 3 <= c.cx && c.cx <= iv.second + 3;
        if (crosses) break;
        bool clash = false;
        if (m < static_cast<int>(lane.size()))
          for (const auto& iv : lane[m]) clash |= a < iv.second + 12 && iv.first < b + 12;
        for (const Callout* o : placed) clash |= o->lane > m && a - 4 <= o->cx && o->cx <= b + 4;
        if (!clash) {
          put(c, left, m);
          done = true;
        }
      }
    }
    if (!done) put(c, prefer_left, static_cast<int>(lane.size()));
  }
  return static_cast<int>(lane.size());
}

}  // namespace

std::string render_map_svg(const LinkContext& ctx) {
  Svg g;  // the body; the <svg> element (which needs the final size) wraps it at the end
  const double x0 = kMargin + kLabelW;  // the chart's left edge
  double width = kMargin + kLabelW + kChartW + kMargin;
  double y = kMargin;

  // Colours: per instance, then per pipe (a pipe's ring, box and arrows share one).
  std::map<std::string, const char*> owner_fill;
  for (size_t i = 0; i < ctx.instances.size(); ++i) owner_fill[ctx.instances[i].name] = kInstanceFill[i % std::size(kInstanceFill)];
  auto pipe_fill = [&](size_t p) { return kPipeFill[p % std::size(kPipeFill)]; };
  for (size_t p = 0; p < ctx.pipes.size(); ++p) owner_fill["pipe " + ctx.pipes[p].name] = pipe_fill(p);
  auto fill_of = [&](const std::string& owner) {
    auto it = owner_fill.find(owner);
    return it == owner_fill.end() ? kLinkerFill : it->second;
  };

  // ---- header ----
  y += kTitle;
  g.text(kMargin, y, "PipeLink map: kernel " + ctx.opt.kernel_name, kTitle, "start", true);
  y += kLine + 4;
  const unsigned threads = ctx.total_warps * 32;
  std::string line = ctx.target.arch + "  |  " + std::to_string(threads) + " threads (" + plural(ctx.total_warps, "warp") +
                     ", " + plural(static_cast<int64_t>(ctx.warpgroups.size()), "warpgroup") + ")  |  shared memory " +
                     std::to_string(ctx.smem_bytes) + " of " + std::to_string(ctx.target.max_smem) +
                     " bytes  |  register cap " + std::to_string(ctx.entry_registers) +
                     (ctx.opt.min_registers ? " (--min-registers)" : "") +
                     "  |  " +
                     plural(static_cast<int64_t>(ctx.instances.size()), "instance") + ", " +
                     plural(static_cast<int64_t>(ctx.pipes.size()), "pipe") +
                     (ctx.opt.pdl ? "  |  programmatic dependent launch" : "");
  g.text(kMargin, y, line, kBody, "start", false, "#1a1a1a", width - 2 * kMargin);
  // Facts, wrapped to the width.
  {
    std::vector<std::string> items;
    for (const auto& [name, f] : ctx.facts) items.push_back(name + " = " + std::to_string(f.value));
    if (items.empty()) items.push_back("none");
    const double avail = width - 2 * kMargin;
    std::string cur = "facts: ";
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string add = items[i] + (i + 1 < items.size() ? ", " : "");
      if (cur != "facts: " && cur.size() > 7 && text_width(cur + add, kBody) > avail) {
        y += kLine;
        g.text(kMargin, y, cur, kBody, "start", false, "#1a1a1a", avail);
        cur = "       ";
      }
      cur += add;
    }
    y += kLine;
    g.text(kMargin, y, cur, kBody, "start", false, "#1a1a1a", avail);
  }

  // ---- shared memory ----
  y += 34;
  g.text(kMargin, y, "Shared memory: offset (bytes) against lifetime; one colour per owner", kHead, "start", true);
  y += 12;
  const int64_t total = std::max<int64_t>(ctx.smem_bytes, 1);
  auto xof = [&](int64_t off) { return x0 + kChartW * static_cast<double>(off) / static_cast<double>(total); };
  // Axis: ticks at a power-of-two step, at most 12 of them, and the end.
  {
    const double axis_y = y + 18;
    int64_t step = 1;
    while (total / step > 12) step *= 2;
    g.line(x0, axis_y, x0 + kChartW, axis_y, "#404040");
    double last_label_end = -1e9;
    for (int64_t t = 0; t <= total; t += step) {
      g.line(xof(t), axis_y - 4, xof(t), axis_y + 4, "#404040");
      const std::string s = kib(t);
      const double w = text_width(s, kSmall);
      if (xof(t) - w / 2 > last_label_end + 6 && xof(t) + w / 2 < x0 + kChartW - text_width(kib(total), kSmall) - 6) {
        g.text(xof(t), axis_y - 7, s, kSmall, "middle", false, "#404040");
        last_label_end = xof(t) + w / 2;
      }
    }
    g.line(x0 + kChartW, axis_y - 6, x0 + kChartW, axis_y + 6, "#404040", 1.5);
    g.text(x0 + kChartW, axis_y - 7, std::to_string(ctx.smem_bytes) + " B", kSmall, "end", true, "#404040");
    g.text(x0 - 10, axis_y + 4, "offset", kSmall, "end", false, "#404040");
    y = axis_y + 8;
  }
  // Rows: "always", then (instance, phase) in the order the phases first appear.
  struct Row { int instance; std::string phase; };
  std::vector<Row> rows{{-1, ""}};
  for (const SmemBlock& b : ctx.smem)
    for (const std::string& ph : b.live) {
      bool seen = false;
      for (const Row& r : rows) seen |= r.instance == b.instance && r.phase == ph;
      if (!seen) rows.push_back({b.instance, ph});
    }
  if (ctx.smem.empty()) {
    y += 22;
    g.text(x0, y, "no shared memory", kBody, "start", false, "#606060");
  }
  constexpr double kRowH = 40, kLaneH = 16;
  for (const Row& row : rows) {
    if (ctx.smem.empty()) break;
    std::vector<const SmemBlock*> in_row;
    for (const SmemBlock& b : ctx.smem) {
      const bool live = row.instance < 0 ? b.live.empty()
                                         : b.instance == row.instance &&
                                               std::find(b.live.begin(), b.live.end(), row.phase) != b.live.end();
      if (live) in_row.push_back(&b);
    }
    std::stable_sort(in_row.begin(), in_row.end(), [](const SmemBlock* a, const SmemBlock* b) { return a->offset < b->offset; });
    y += 8;
    const double top = y;
    const std::string label =
        row.instance < 0 ? std::string("always") : ctx.instances[row.instance].name + ": " + row.phase;
    g.rect(x0, top, kChartW, kRowH, "#f4f4f4", "#c8c8c8", 0.5);
    g.text(x0 - 10, top + kRowH / 2 + 4, label, kBody, "end", true, "#1a1a1a", kLabelW - 10);
    // Regions whose label does not fit inside are called out below the row: a leader line down
    // from the region's middle, the label beside its foot, in lanes chosen so that no label
    // overlaps another or a leader line (see place_callouts).
    std::vector<Callout> callouts;
    for (const SmemBlock* b : in_row) {
      const double bx = xof(b->offset);
      const double bw = std::max(2.0, xof(b->offset + b->bytes) - bx);
      const std::string name = b->owner + " " + b->name;
      const std::string detail = std::to_string(b->bytes) + " B @ " + std::to_string(b->offset);
      g.open_group(name + ": " + std::to_string(b->bytes) + " bytes at offset " + std::to_string(b->offset) + ", align " +
                   std::to_string(b->align) + ", live " + live_label(b->live));
      g.rect(bx, top + 2, bw, kRowH - 4, fill_of(b->owner), "#404040", 0.8);
      for (const Pipe& p : ctx.pipes)  // a ring: a dashed line between its stages
        if (b->owner == "pipe " + p.name && b->offset == p.buffer)
          for (int64_t k = 1; k < p.stages; ++k)
            g.line(xof(p.buffer + k * p.stage_bytes), top + 2, xof(p.buffer + k * p.stage_bytes), top + kRowH - 2, "#404040", 0.8, true);
      const double inner = bw - 8;
      if (text_width(name, kBody) <= inner) {
        const bool two = text_width(detail, kSmall) <= inner;
        g.text(bx + 4, top + (two ? 17 : kRowH / 2 + 4), name, kBody, "start", true);
        if (two) g.text(bx + 4, top + 31, detail, kSmall, "start", false, "#333333", inner);
      } else {
        Callout c;
        c.cx = bx + bw / 2;
        c.s = fit(name + "  " + detail, 64 * kSmall * kAdvance, kSmall);
        c.w = text_width(c.s, kSmall);
        callouts.push_back(c);
      }
      g.close_group();
    }
    y = top + kRowH;
    const int lanes = place_callouts(callouts, kMargin);
    for (const Callout& c : callouts) {
      const double ly = y + 4 + (c.lane + 1) * kLaneH;
      g.line(c.cx, top + kRowH - 2, c.cx, ly - 4, "#606060", 0.8);
      g.text(c.left ? c.cx - 4 : c.cx + 4, ly, c.s, kSmall, c.left ? "end" : "start", false, "#333333");
    }
    y += lanes * kLaneH + (lanes ? 6 : 0);
  }

  // ---- warps and registers ----
  y += 34;
  g.text(kMargin, y, "Warps and registers: one row per warpgroup (setmaxnreg budget at left)", kHead, "start", true);
  if (ctx.opt.min_registers) {
    y += kLine;
    g.text(kMargin, y,
           "--min-registers: the kernel launches with " + std::to_string(ctx.entry_registers) +
               " registers a thread, the budgeted warpgroups' mean rounded up (" +
               std::to_string(int64_t(threads) * ctx.entry_registers) + " of the SM's " +
               std::to_string(ctx.target.regs_per_sm_total) + "), so other kernels' blocks can fit beside a block where shared "
               "memory allows",
           kSmall, "start", false, "#333333", width - 2 * kMargin);
  }
  y += 8;
  const double cell = kChartW / 4;
  for (const WarpGroup& wg : ctx.warpgroups) {
    y += 8;
    const double top = y;
    const unsigned w0 = wg.index * 4;
    g.text(x0 - 10, top + 17, "warpgroup " + std::to_string(wg.index) + " (warps " + std::to_string(w0) + "-" +
                                   std::to_string(w0 + 3) + ")", kBody, "end", true, "#1a1a1a", kLabelW - 10);
    std::string regs = wg.registers ? std::to_string(wg.registers) + " registers" : std::to_string(ctx.entry_registers) + " registers (entry cap)";
    if (wg.registers && wg.registers != ctx.entry_registers)
      regs += wg.registers < ctx.entry_registers ? ", setmaxnreg.dec" : ", setmaxnreg.inc";
    g.text(x0 - 10, top + 33, regs, kSmall, "end", false, "#333333", kLabelW - 10);
    for (unsigned k = 0; k < 4; ++k) {
      const bool launched = w0 + k < ctx.total_warps;
      g.rect(x0 + k * cell, top, cell, kRowH, launched ? "#ffffff" : "#f4f4f4", "#c8c8c8", 0.5, !launched);
      if (!launched) g.text(x0 + k * cell + cell / 2, top + kRowH / 2 + 4, "not launched", kSmall, "middle", false, "#909090");
    }
    // One box per instance span within this warpgroup, then each generated transfer warp.
    auto span_box = [&](unsigned first, unsigned count, const std::string& title, const std::string& l1,
                        const std::string& l2, const char* fill, bool dashed) {
      const unsigned a = std::max(first, w0), b = std::min(first + count, w0 + 4);
      if (a >= b) return;
      const double bx = x0 + (a - w0) * cell + 2, bw = (b - a) * cell - 4;
      g.open_group(title);
      g.rect(bx, top + 2, bw, kRowH - 4, fill, "#404040", dashed ? 1.2 : 0.8, dashed, 3);
      for (unsigned k = a + 1; k < b; ++k) g.line(x0 + (k - w0) * cell, top + 2, x0 + (k - w0) * cell, top + 8, "#404040", 0.8);
      g.text(bx + 6, top + 17, l1, kBody, "start", true, "#1a1a1a", bw - 12);
      g.text(bx + 6, top + 31, l2, kSmall, "start", false, "#333333", bw - 12);
      g.close_group();
    };
    for (int i : wg.instances) {
      const Instance& in = ctx.instances[i];
      const std::string warps = warps_label(in);
      std::string l2 = warps + "  " + in.contract->owner;
      if (in.registers) l2 += "  asks " + std::to_string(in.registers) + " regs";
      span_box(in.warp_base, in.warps, in.name + " (" + in.contract->owner + "): " + warps, in.name, l2, fill_of(in.name), false);
    }
    for (const Pipe& p : ctx.pipes)
      if (p.transfer_to >= 0 && p.transfer_warp / 4 == wg.index)
        span_box(p.transfer_warp, 1, "generated transfer warp " + std::to_string(p.transfer_warp) + ": pipe " + p.name + " -> " +
                                         ctx.pipes[p.transfer_to].name,
                 "transfer " + p.name, "warp " + std::to_string(p.transfer_warp) + "  generated", "#ffffff", true);
    y = top + kRowH;
  }

  // ---- pipes: components → pipes → components ----
  y += 34;
  g.text(kMargin, y, "Pipes: producers -> pipe (stages x stage bytes, mbarrier arrivals) -> consumers", kHead, "start", true);
  y += 16;
  {
    // Nodes: instances, generated transfers (one per pipe with transfer_to), pipes.
    struct Node { std::vector<std::string> lines; std::string title; const char* fill; bool dashed, pipe; double w = 0, h = 0, x = 0, y = 0; int layer = 0; };
    std::vector<Node> nodes;
    for (const Instance& in : ctx.instances) {
      const std::string warps = warps_label(in);
      nodes.push_back({{in.name, in.contract->owner, warps}, in.name + " (" + in.contract->owner + ")", fill_of(in.name), false, false});
    }
    std::vector<int> transfer_node(ctx.pipes.size(), -1);
    for (size_t p = 0; p < ctx.pipes.size(); ++p)
      if (ctx.pipes[p].transfer_to >= 0) {
        const Pipe& pp = ctx.pipes[p];
        transfer_node[p] = static_cast<int>(nodes.size());
        nodes.push_back({{"transfer", pp.name + " -> " + ctx.pipes[pp.transfer_to].name, "warp " + std::to_string(pp.transfer_warp) + " (generated)"},
                         "generated transfer: pipe " + pp.name + " to pipe " + ctx.pipes[pp.transfer_to].name, "#ffffff", true, false});
      }
    struct Edge { int from, to; };
    std::vector<Edge> edges;
    for (size_t p = 0; p < ctx.pipes.size(); ++p) {
      const Pipe& pp = ctx.pipes[p];
      const int me = static_cast<int>(nodes.size());
      // The full barrier's arrivals and each producer's share of them (arrivals, + the transaction
      // bytes it announces), then the empty barrier's and each consumer's share.
      Node n{{}, "pipe " + pp.name + ": ring of " + std::to_string(pp.stages) + " x " + std::to_string(pp.stage_bytes) +
                     " bytes at " + std::to_string(pp.buffer) + ", full mbarriers @" + std::to_string(pp.full) +
                     ", empty mbarriers @" + std::to_string(pp.empty),
             pipe_fill(p), false, true};
      n.lines.push_back("pipe " + pp.name);
      n.lines.push_back(plural(pp.stages, "stage") + " x " + std::to_string(pp.stage_bytes) + " B @ " + std::to_string(pp.buffer));
      n.lines.push_back("full: " + plural(pp.full_count, "arrival") + (pp.tx ? " + tx" : ""));
      for (const PipeEnd& e : pp.producers) {
        const Instance& in = ctx.instances[e.instance];
        const PortDecl& pd = in.contract->ports[e.port];
        std::string s = "  " + in.name + ": " + std::to_string(arrivals_per_instance(pd.arrive, in.warps));
        if (pd.completion == Completion::Tx) s += " + " + std::to_string(in.ports[e.port].tx_bytes) + " tx B";
        n.lines.push_back(s);
        edges.push_back({e.instance, me});
      }
      if (pp.transfer_from >= 0) {
        n.lines.push_back("  transfer: 1");
        edges.push_back({transfer_node[pp.transfer_from], me});
      }
      n.lines.push_back("empty: " + plural(pp.empty_count, "arrival"));
      for (const PipeEnd& e : pp.consumers) {
        const Instance& in = ctx.instances[e.instance];
        const PortDecl& pd = in.contract->ports[e.port];
        n.lines.push_back("  " + in.name + ": " + std::to_string(arrivals_per_instance(pd.arrive, in.warps)));
        edges.push_back({me, e.instance});
      }
      if (pp.transfer_to >= 0) {
        n.lines.push_back("  transfer: 1");
        edges.push_back({me, transfer_node[p]});
      }
      nodes.push_back(n);
    }
    // Layers: longest path from the sources (bounded, so a cycle of pipes still ends).
    for (size_t round = 0; round <= nodes.size(); ++round) {
      bool changed = false;
      for (const Edge& e : edges)
        if (nodes[e.to].layer < nodes[e.from].layer + 1 && nodes[e.from].layer + 1 <= static_cast<int>(nodes.size())) {
          nodes[e.to].layer = nodes[e.from].layer + 1;
          changed = true;
        }
      if (!changed) break;
    }
    // Columns: non-empty layers, left to right; nodes in input order within one.
    std::map<int, std::vector<int>> columns;
    for (size_t i = 0; i < nodes.size(); ++i) columns[nodes[i].layer].push_back(static_cast<int>(i));
    constexpr double kPad = 8, kColGap = 64, kRowGap = 18;
    double cx = kMargin, graph_h = 0;
    std::vector<std::pair<double, double>> col_extent;  // x, height
    for (auto& [layer, ids] : columns) {
      double cw = 0, ch = 0;
      for (int id : ids) {
        Node& n = nodes[id];
        double tw = 0;
        for (size_t k = 0; k < n.lines.size(); ++k) tw = std::max(tw, text_width(n.lines[k], k == 0 ? kBody : kSmall));
        n.w = std::min(tw, 40 * kBody * kAdvance) + 2 * kPad;  // at most 40 characters wide
        n.h = n.lines.size() * kLine + 2 * kPad - 2;
        cw = std::max(cw, n.w);
        ch += n.h + (ch > 0 ? kRowGap : 0);
      }
      for (int id : ids) nodes[id].w = cw;
      col_extent.push_back({cx, ch});
      cx += cw + kColGap;
      graph_h = std::max(graph_h, ch);
    }
    width = std::max(width, cx - kColGap + kMargin);
    size_t c = 0;
    for (auto& [layer, ids] : columns) {
      double ny = y + (graph_h - col_extent[c].second) / 2;
      for (int id : ids) {
        nodes[id].x = col_extent[c].first;
        nodes[id].y = ny;
        ny += nodes[id].h + kRowGap;
      }
      ++c;
    }
    // Edge ends: spread over the box's side, ordered by the other end's height.
    std::vector<std::vector<size_t>> outs(nodes.size()), ins(nodes.size());
    for (size_t e = 0; e < edges.size(); ++e) {
      outs[edges[e].from].push_back(e);
      ins[edges[e].to].push_back(e);
    }
    std::vector<double> y_from(edges.size()), y_to(edges.size());
    auto centre = [&](int i) { return nodes[i].y + nodes[i].h / 2; };
    for (size_t i = 0; i < nodes.size(); ++i) {
      std::stable_sort(outs[i].begin(), outs[i].end(), [&](size_t a, size_t b) { return centre(edges[a].to) < centre(edges[b].to); });
      std::stable_sort(ins[i].begin(), ins[i].end(), [&](size_t a, size_t b) { return centre(edges[a].from) < centre(edges[b].from); });
      for (size_t k = 0; k < outs[i].size(); ++k) y_from[outs[i][k]] = nodes[i].y + nodes[i].h * (k + 1) / (outs[i].size() + 1);
      for (size_t k = 0; k < ins[i].size(); ++k) y_to[ins[i][k]] = nodes[i].y + nodes[i].h * (k + 1) / (ins[i].size() + 1);
    }
    for (size_t e = 0; e < edges.size(); ++e) {
      const Node& a = nodes[edges[e].from];
      const Node& b = nodes[edges[e].to];
      const double xa = a.x + a.w, xb = b.x - 1;
      const double dx = std::max(30.0, (xb - xa) / 2);
      g.o << "<path d=\"M" << num(xa) << " " << num(y_from[e]) << " C" << num(xa + dx) << " " << num(y_from[e]) << " "
          << num(xb - dx) << " " << num(y_to[e]) << " " << num(xb - 7) << " " << num(y_to[e]) << " L" << num(xb - 7) << " "
          << num(y_to[e]) << "\" fill=\"none\" stroke=\"#404040\" stroke-width=\"1.6\"/>\n";
      g.o << "<polygon points=\"" << num(xb) << "," << num(y_to[e]) << " " << num(xb - 9) << "," << num(y_to[e] - 4.5) << " "
          << num(xb - 9) << "," << num(y_to[e] + 4.5) << "\" fill=\"#404040\"/>\n";
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      g.open_group(n.title);
      g.rect(n.x, n.y, n.w, n.h, n.fill, "#404040", n.pipe ? 1.4 : 1, n.dashed, n.pipe ? 0 : 6);
      for (size_t k = 0; k < n.lines.size(); ++k)
        g.text(n.x + kPad, n.y + kPad + 11 + k * kLine, n.lines[k], k == 0 ? kBody : kSmall, "start", k == 0,
               k == 0 ? "#1a1a1a" : "#333333", n.w - 2 * kPad);
      g.close_group();
    }
    if (nodes.empty()) g.text(kMargin, y + 14, "no components", kBody, "start", false, "#606060");
    y += std::max(graph_h, 20.0);
  }
  y += kMargin;

  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(y) << "\" viewBox=\"0 0 "
    << num(width) << " " << num(y) << "\" font-family=\"" << kFont << "\">\n"
    << "<title>" << xml(displayable("PipeLink map: kernel " + ctx.opt.kernel_name)) << "</title>\n"
    << "<rect x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\"" << num(y) << "\" fill=\"#ffffff\"/>\n"
    << g.o.str() << "</svg>\n";
  return o.str();
}

}  // namespace pipelink
