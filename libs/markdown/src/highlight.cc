// HighlightCode with Source-highlight's SourceHighlighter, one line at a
// time (multi-line states such as block comments carry over), through a
// formatter per element kind that writes escaped text into our spans.
#include "highlight.h"

#include <srchilite/formattermanager.h>
#include <srchilite/formatterparams.h>
#include <srchilite/langdefmanager.h>
#include <srchilite/langmap.h>
#include <srchilite/regexrulefactory.h>
#include <srchilite/sourcehighlighter.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "folio/core/text.h"
#include "highlight_rule.h"

namespace folio::markdown {

namespace {

constexpr const char* kDataDir = "/usr/share/source-highlight";

// Source-highlight parses lang.map and the .lang files with flex/bison
// parsers that keep global state: one thread at a time may load. (Once
// loaded, each thread highlights with its own states, without the lock.)
std::mutex& LoadMutex() {
  static std::mutex mu;
  return mu;
}

// Fence names Source-highlight's lang.map lacks, mapped to the closest
// definition it has.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"typescript", "javascript"}, {"ts", "javascript"},   {"tsx", "javascript"}, {"jsx", "javascript"},
    {"mjs", "javascript"},        {"cjs", "javascript"},  {"kotlin", "java"},    {"kt", "java"},
    {"rust", "rs"},               {"c++", "cpp"},         {"golang", "go"},      {"console", "sh"},
    {"shell-session", "sh"},      {"patch", "diff"},      {"make", "makefile"},  {"toml", "ini"},
    {"dockerfile", "sh"},         {"py3", "python"},      {"python3", "python"}, {"ps1", "bat"}};

// Source-highlight's element names and the class (kind) each is written
// with; every other element is plain text.
constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
    {"keyword", "keyword"},   {"type", "type"},         {"classname", "type"},      {"string", "string"},
    {"comment", "comment"},   {"number", "number"},     {"preproc", "preproc"},     {"function", "function"},
    {"variable", "variable"}, {"regexp", "regexp"},     {"specialchar", "specialchar"},
    {"selector", "keyword"},  {"property", "type"},     {"value", "string"},        // CSS
    {"oldfile", "deleted"},   {"newfile", "inserted"},  {"difflines", "comment"},   // diff
    {"label", "function"},    {"todo", "comment"},
    {"key", "type"},          {"keyquote", "type"},     {"valquote", "string"}};  // JSON

// Writes the text of one element kind ("" = normal text) into *out, merging
// consecutive pieces of the same kind into one span.
class SpanWriter {
 public:
  void Reset(std::string* out) {
    out_ = out;
    open_ = {};
  }
  void Write(std::string_view kind, const std::string& text) {
    if (text.empty()) return;
    if (kind != open_) {
      Close();
      if (!kind.empty()) {
        *out_ += "<span class=\"hl-";
        out_->append(kind);
        *out_ += "\">";
      }
      open_ = kind;
    }
    AppendHtmlEscaped(text, out_);
  }
  void Close() {
    if (!open_.empty()) *out_ += "</span>";
    open_ = {};
  }

 private:
  std::string* out_ = nullptr;
  std::string_view open_;
};

class KindFormatter : public srchilite::Formatter {
 public:
  KindFormatter(std::string_view kind, SpanWriter* writer) : kind_(kind), writer_(writer) {}
  void format(const std::string& s, const srchilite::FormatterParams*) override { writer_->Write(kind_, s); }

 private:
  std::string_view kind_;
  SpanWriter* writer_;
};

// A language's highlighter with its formatters, kept for the thread's life:
// building them costs more than highlighting a short fence.
struct LangHighlighter {
  explicit LangHighlighter(srchilite::HighlightStatePtr state)
      : formatters(srchilite::FormatterPtr(new KindFormatter("", &writer))), highlighter(state) {
    for (const auto& [element, kind] : kKinds) {
      formatters.addFormatter(std::string(element), srchilite::FormatterPtr(new KindFormatter(kind, &writer)));
    }
    highlighter.setFormatterManager(&formatters);
    highlighter.setFormatterParams(&params);
  }
  SpanWriter writer;
  srchilite::FormatterManager formatters;
  srchilite::SourceHighlighter highlighter;
  srchilite::FormatterParams params;
  // Lines that start and end in the main state (no comment or string left
  // open), by text, with their HTML: such a line always colours the same,
  // and code repeats lines (braces, blank lines, imports, calls).
  std::unordered_map<std::string, std::string> lines;
  size_t line_bytes = 0;  // of `lines`; cleared past kLineCacheBytes
};

constexpr size_t kLineCacheBytes = 256 << 10;  // per language and thread
constexpr size_t kMaxCachedLine = 160;

// One thread's loaded definitions. Source-highlight reports errors by
// throwing; a language that failed once is remembered as unavailable.
class ThreadHighlighter {
 public:
  // `fast`: with FastRules (highlight_rule.h); false only to check them.
  explicit ThreadHighlighter(bool fast) : fast_(fast), defs_(&factory_), map_(kDataDir, "lang.map") {
    std::lock_guard<std::mutex> lock(LoadMutex());
    try {
      map_.open();
      ok_ = true;
    } catch (...) {
      ok_ = false;  // definitions not installed: everything stays plain
    }
  }

  std::optional<std::string> Highlight(std::string_view lang, std::string_view code) {
    LangHighlighter* h = Highlighter(lang);
    if (h == nullptr) return std::nullopt;
    std::string out;
    out.reserve(code.size() * 2);
    SpanWriter& writer = h->writer;
    writer.Reset(&out);
    srchilite::SourceHighlighter& highlighter = h->highlighter;
    highlighter.clearStateStack();  // a fresh start: no state left from the last fence
    highlighter.setCurrentState(highlighter.getMainState());
    try {
      size_t i = 0;
      while (i < code.size()) {
        size_t eol = code.find('\n', i);
        size_t end = eol == std::string_view::npos ? code.size() : eol;
        HighlightLine(h, code.substr(i, end - i), &out);
        if (eol != std::string_view::npos) out += '\n';
        i = end + 1;
      }
    } catch (...) {
      writer.Reset(nullptr);
      return std::nullopt;
    }
    writer.Reset(nullptr);
    return out;
  }

 private:
  // Appends one line's HTML to *out (the writer's target); may throw.
  void HighlightLine(LangHighlighter* h, std::string_view line, std::string* out) {
    srchilite::SourceHighlighter& highlighter = h->highlighter;
    auto at_main = [&] {
      return highlighter.getCurrentState() == highlighter.getMainState() && highlighter.getStateStack()->empty();
    };
    const bool cacheable = fast_ && line.size() <= kMaxCachedLine && at_main();
    line_.assign(line);
    if (cacheable) {
      if (auto it = h->lines.find(line_); it != h->lines.end()) {
        *out += it->second;
        return;
      }
    }
    const size_t start = out->size();
    ++line_number_;  // FastRules' memos are of the last line
    highlighter.highlightParagraph(line_);
    h->writer.Close();
    if (!cacheable || !at_main()) return;
    if (h->line_bytes > kLineCacheBytes) {
      h->lines.clear();
      h->line_bytes = 0;
    }
    h->line_bytes += line_.size() + (out->size() - start);
    h->lines.emplace(line_, out->substr(start));
  }

  LangHighlighter* Highlighter(std::string_view lang) {
    if (!ok_ || lang.empty() || lang.size() > 32) return nullptr;
    std::string key = AsciiLower(lang);
    for (const auto& [alias, name] : kAliases) {
      if (key == alias) key = std::string(name);
    }
    auto it = langs_.find(key);
    if (it != langs_.end()) return it->second.get();
    std::unique_ptr<LangHighlighter> h;
    std::lock_guard<std::mutex> lock(LoadMutex());
    try {
      std::string file = map_.getFileName(key);
      if (!file.empty()) h = std::make_unique<LangHighlighter>(defs_.getHighlightState(kDataDir, file));
      if (h && fast_) UseFastRules(h->highlighter.getMainState(), &line_number_);
    } catch (...) {
      h.reset();
    }
    return langs_.emplace(key, std::move(h)).first->second.get();
  }

  const bool fast_;
  std::string line_;          // the line being highlighted (its buffer is reused)
  uint64_t line_number_ = 0;  // bumped before each line
  srchilite::RegexRuleFactory factory_;
  srchilite::LangDefManager defs_;
  srchilite::LangMap map_;
  bool ok_ = false;
  std::map<std::string, std::unique_ptr<LangHighlighter>> langs_;  // by lower-cased name; null = unknown
};

}  // namespace

// Whether `code` is small enough to highlight (highlight.h).
bool Highlightable(std::string_view lang, std::string_view code) {
  if (code.size() > kMaxHighlightBytes || lang.size() > 32) return false;
  for (size_t at = 0; at < code.size();) {
    size_t eol = code.find('\n', at);
    if (eol == std::string_view::npos) eol = code.size();
    if (eol - at > kMaxHighlightLineBytes) return false;
    at = eol + 1;
  }
  return true;
}

std::optional<std::string> HighlightCode(std::string_view lang, std::string_view code) {
  if (!Highlightable(lang, code)) return std::nullopt;
  if (auto by_lines = HighlightByLines(lang, code)) return by_lines;
  thread_local ThreadHighlighter highlighter(/*fast=*/true);
  return highlighter.Highlight(lang, code);
}

std::optional<std::string> HighlightCodeWithRules(std::string_view lang, std::string_view code, bool fast_rules) {
  if (!Highlightable(lang, code)) return std::nullopt;
  if (auto by_lines = HighlightByLines(lang, code)) return by_lines;
  thread_local ThreadHighlighter fast(/*fast=*/true), plain(/*fast=*/false);
  return (fast_rules ? fast : plain).Highlight(lang, code);
}

}  // namespace folio::markdown

#if defined(__SANITIZE_ADDRESS__)
#define FOLIO_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOLIO_LSAN 1
#endif
#endif
#ifdef FOLIO_LSAN
// Source-highlight's language-definition parser (langdef_parse) leaks part
// of each definition's parse tree. Each render thread loads a language once,
// so the loss is bounded (a few KB per language and thread); LeakSanitizer
// is told here, in every binary that renders, rather than through an
// environment variable each test and service would need.
extern "C" const char* __lsan_default_suppressions() { return "leak:libsource-highlight.so\n"; }
#endif
