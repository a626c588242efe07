#include "snippet.h"

#include <algorithm>

#include "folio/core/text.h"
#include "folio/core/utf8.h"

namespace folio::search {
namespace {

// Base letters of U+00E0..U+00FF ('.' = kept: SQLite does not decompose æ ð ÷ ø þ).
constexpr std::string_view kLatin1Base = "aaaaaa.ceeeeiiii.nooooo..uuuuy.y";
// U+0100..U+017F: base letter, or '+' = the next code point (lower-case of a
// pair SQLite keeps, "Ł" -> "ł"), or '.' = kept. Checked against SQLite 3.40.
constexpr std::string_view kLatinExtABase =
    "aaaaaaccccccccdd+.eeeeeeeeeegggggggghh+.iiiiiiiii.+.jjkk.llllll+.+.nnnnnn.+.oooooo+."
    "rrrrrrsssssssstttt+.uuuuuuuuuuuuwwyyyzzzzzzs";
static_assert(kLatin1Base.size() == 32 && kLatinExtABase.size() == 128);

template <typename Fn>
void ForEachCodePoint(std::string_view s, Fn&& fn) {
  size_t i = 0;
  while (i < s.size()) {
    size_t begin = i;
    uint32_t cp = DecodeUtf8(s, &i);
    fn(cp, begin, i);
  }
}

// s cut to at most n bytes, backing up to the start of a code point.
std::string_view CutAtCodePoint(std::string_view s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

bool IsSpace(uint32_t c) {
  return c <= 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0x1680 || (c >= 0x2000 && c <= 0x200B) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

// Same ranges as HashedEmbedder's IsCjk (libs/vector/src/embedder.cc).
bool IsCjk(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x3FFFF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||  // kana
         (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) ||  // hangul
         (c >= 0x3130 && c <= 0x318F);
}

void DecodeAll(std::string_view s, std::vector<uint32_t>* out) {
  out->clear();
  ForEachCodePoint(s, [&](uint32_t cp, size_t, size_t) { out->push_back(cp); });
}

}  // namespace

uint32_t FoldFullwidth(uint32_t cp) { return (cp >= 0xFF01 && cp <= 0xFF5E) ? cp - 0xFEE0 : cp; }

CharClass ClassifyCodePoint(uint32_t c) {
  if (c < 0x80) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    return alnum ? CharClass::kWord : CharClass::kSeparator;
  }
  // The embedder's separators, then the blocks unicode61 also splits at.
  if (c <= 0xBF || c == 0xD7 || c == 0xF7 || (c >= 0x2000 && c <= 0x2BFF) ||
      (c >= 0x2E00 && c <= 0x2E7F) || (c >= 0x3000 && c <= 0x303F) || (c >= 0xFE00 && c <= 0xFE0F) ||
      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
      (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65) || c == 0xFEFF ||
      (c >= 0x1F000 && c <= 0x1FAFF) || c == 0x309B || c == 0x309C || c == 0x30A0 || c == 0x30FB ||
      c == kBadCodePoint) {
    return CharClass::kSeparator;
  }
  return IsCjk(c) ? CharClass::kCjk : CharClass::kWord;
}

uint32_t FoldForMatch(uint32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) c += 32;
  if (c >= 0xE0 && c <= 0xFF) {
    char b = kLatin1Base[c - 0xE0];
    return b == '.' ? c : static_cast<uint32_t>(b);
  }
  if (c >= 0x100 && c <= 0x17F) {
    char b = kLatinExtABase[c - 0x100];
    if (b == '.') return c;
    return b == '+' ? c + 1 : static_cast<uint32_t>(b);
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;                  // Ά -> ά
  if (c >= 0x388 && c <= 0x38A) return c + 37;   // Έ Ή Ί
  if (c == 0x38C) return 0x3CC;                  // Ό
  if (c == 0x38E || c == 0x38F) return c + 63;   // Ύ Ώ
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

std::vector<QueryTerm> QueryTerms(std::string_view query) {
  query = CutAtCodePoint(query, kMaxQueryBytes);
  std::vector<QueryTerm> terms;
  QueryTerm cur;
  CharClass cur_class = CharClass::kSeparator;
  size_t cur_chars = 0;
  size_t last = SIZE_MAX, last_chars = 0;  // the term the query ends with
  auto flush = [&] {
    if (cur.text.empty()) return;
    auto same = [&](const QueryTerm& t) { return t.cjk == cur.cjk && t.folded == cur.folded; };
    auto it = std::find_if(terms.begin(), terms.end(), same);
    if (it != terms.end()) {
      last = static_cast<size_t>(it - terms.begin());
    } else if (terms.size() < kMaxQueryTerms) {
      terms.push_back(std::move(cur));
      last = terms.size() - 1;
    } else {
      last = SIZE_MAX;
    }
    last_chars = cur_chars;
    cur = QueryTerm();
    cur_chars = 0;
  };
  ForEachCodePoint(query, [&](uint32_t cp, size_t, size_t) {
    cp = FoldFullwidth(cp);
    CharClass cls = ClassifyCodePoint(cp);
    if (cls != cur_class) flush();
    cur_class = cls;
    if (cls == CharClass::kSeparator) return;
    AppendUtf8(cp, &cur.text);
    AppendUtf8(FoldForMatch(cp), &cur.folded);
    cur.cjk = cls == CharClass::kCjk;
    ++cur_chars;
  });
  flush();
  // One-letter prefixes would match (and mark) half the vocabulary.
  if (last != SIZE_MAX && !terms[last].cjk && last_chars >= 2) terms[last].prefix = true;
  return terms;
}

namespace {

struct Unit {
  uint32_t cp;     // FoldForMatch(FoldFullwidth(code point))
  uint32_t begin;  // bytes in the text, combining marks included
  uint32_t end;
  CharClass cls;
};

struct Span {
  size_t begin, end;  // unit indexes
  size_t term;
};

std::vector<Unit> Analyze(std::string_view text) {
  std::vector<Unit> units;
  units.reserve(text.size() / 2 + 1);
  ForEachCodePoint(text, [&](uint32_t cp, size_t b, size_t e) {
    if (cp >= 0x300 && cp <= 0x36F && !units.empty() && units.back().cls == CharClass::kWord) {
      units.back().end = static_cast<uint32_t>(e);  // never split a letter from its accent
      return;
    }
    cp = FoldFullwidth(cp);
    units.push_back({FoldForMatch(cp), static_cast<uint32_t>(b), static_cast<uint32_t>(e),
                     ClassifyCodePoint(cp)});
  });
  return units;
}

bool SameAt(const std::vector<Unit>& u, size_t at, const std::vector<uint32_t>& cps, CharClass cls) {
  if (at + cps.size() > u.size()) return false;
  for (size_t k = 0; k < cps.size(); ++k) {
    if (u[at + k].cls != cls || u[at + k].cp != cps[k]) return false;
  }
  return true;
}

size_t GroupOf(std::span<const QueryTerm> terms, size_t t) {
  return terms[t].group >= 0 && static_cast<size_t>(terms[t].group) < terms.size() ? static_cast<size_t>(terms[t].group)
                                                                                   : t;
}

std::vector<Span> FindMatches(const std::vector<Unit>& u, std::span<const QueryTerm> terms) {
  std::vector<std::vector<uint32_t>> cps(terms.size());
  for (size_t t = 0; t < terms.size(); ++t) DecodeAll(terms[t].folded, &cps[t]);
  std::vector<Span> out;
  for (size_t i = 0; i < u.size();) {
    if (u[i].cls != CharClass::kWord) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < u.size() && u[j].cls == CharClass::kWord) ++j;
    for (size_t t = 0; t < terms.size(); ++t) {
      if (terms[t].cjk || cps[t].empty()) continue;
      bool fits = terms[t].prefix ? j - i >= cps[t].size() : j - i == cps[t].size();
      if (fits && SameAt(u, i, cps[t], CharClass::kWord)) out.push_back({i, j, GroupOf(terms, t)});
    }
    i = j;
  }
  for (size_t t = 0; t < terms.size(); ++t) {
    if (!terms[t].cjk || cps[t].empty()) continue;
    for (size_t i = 0; i + cps[t].size() <= u.size(); ++i) {
      if (SameAt(u, i, cps[t], CharClass::kCjk)) out.push_back({i, i + cps[t].size(), GroupOf(terms, t)});
    }
  }
  std::sort(out.begin(), out.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  return out;
}

// The matches [first, last) of the window of `width` units holding the most
// distinct terms, then the most matches, then the earliest. first == last if
// no match fits in `width`.
std::pair<size_t, size_t> BestMatches(const std::vector<Span>& m, size_t nterms, size_t width) {
  std::vector<size_t> count(nterms, 0);
  size_t distinct = 0, r = 0;
  size_t best_first = 0, best_last = 0, best_distinct = 0, best_total = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    if (i > 0 && i - 1 < r && --count[m[i - 1].term] == 0) --distinct;
    if (r < i) r = i;
    while (r < m.size() && m[r].end <= m[i].begin + width) {
      if (count[m[r].term]++ == 0) ++distinct;
      ++r;
    }
    if (distinct > best_distinct || (distinct == best_distinct && r - i > best_total)) {
      best_first = i, best_last = r, best_distinct = distinct, best_total = r - i;
    }
  }
  return {best_first, best_last};
}

bool MidWord(const std::vector<Unit>& u, size_t at) {
  return at > 0 && at < u.size() && u[at - 1].cls == CharClass::kWord && u[at].cls == CharClass::kWord;
}

// Chooses [start, end) units around the matched span [s, e) (s == e: none).
std::pair<size_t, size_t> ChooseWindow(const std::vector<Unit>& u, size_t s, size_t e, size_t width) {
  size_t n = u.size();
  size_t slack = width - (e - s);
  size_t start = s - std::min(s, slack / 2);
  size_t end = std::min(n, start + width);
  if (end - start < width) start = end > width ? end - width : 0;
  size_t hard_end = end;
  while (MidWord(u, start) && start < s) ++start;  // word matches start at word starts
  while (MidWord(u, end) && end > std::max(e, start)) --end;
  if (end <= start) end = hard_end;  // one giant word: cut inside it
  while (start < end && IsSpace(u[start].cp)) ++start;
  while (end > start && IsSpace(u[end - 1].cp)) --end;
  return {start, end};
}

class SnippetWriter {
 public:
  SnippetWriter(std::string_view text, const std::vector<Unit>& u, std::string* out)
      : text_(text), u_(u), out_(out) {}

  // Appends units [a, b), whitespace runs collapsed to one space.
  void Plain(size_t a, size_t b) {
    size_t run = a;  // start of the pending non-space run
    for (size_t i = a; i < b; ++i) {
      if (!IsSpace(u_[i].cp)) continue;
      Flush(run, i);
      if (!space_) out_->push_back(' ');
      space_ = true;
      run = i + 1;
    }
    Flush(run, b);
  }
  void Mark(size_t a, size_t b) {
    out_->append("<mark>");
    Plain(a, b);
    out_->append("</mark>");
  }

 private:
  void Flush(size_t a, size_t b) {
    if (a >= b) return;
    AppendHtmlEscaped(text_.substr(u_[a].begin, u_[b - 1].end - u_[a].begin), out_);
    space_ = false;
  }
  std::string_view text_;
  const std::vector<Unit>& u_;
  std::string* out_;
  bool space_ = false;
};

bool AnyText(const std::vector<Unit>& u, size_t a, size_t b) {
  for (size_t i = a; i < b; ++i) {
    if (!IsSpace(u[i].cp)) return true;
  }
  return false;
}

}  // namespace

namespace {

int BestSectionOf(const std::vector<Unit>& u, const std::vector<Span>& matches, std::span<const QueryTerm> terms,
                  std::span<const size_t> section_offsets) {
  if (section_offsets.empty() || terms.empty()) return -1;
  // Groups matched per section; index 0: the text before the first one.
  std::vector<std::vector<bool>> seen(section_offsets.size() + 1, std::vector<bool>(terms.size(), false));
  std::vector<size_t> distinct(section_offsets.size() + 1, 0);
  for (const Span& m : matches) {
    if (terms[m.term].common) continue;
    size_t at = u[m.begin].begin;
    size_t s = static_cast<size_t>(std::upper_bound(section_offsets.begin(), section_offsets.end(), at) -
                                   section_offsets.begin());
    if (!seen[s][m.term]) {
      seen[s][m.term] = true;
      ++distinct[s];
    }
  }
  size_t best = 0;
  for (size_t s = 1; s < distinct.size(); ++s) {
    if (distinct[s] > distinct[best]) best = s;
  }
  return distinct[best] == 0 ? -1 : static_cast<int>(best) - 1;
}

}  // namespace

std::string MakeSnippet(std::string_view text, std::span<const QueryTerm> terms, size_t max_chars) {
  return MakeSnippet(text, terms, max_chars, {}, nullptr);
}

std::string MakeSnippet(std::string_view text, std::span<const QueryTerm> terms, size_t max_chars,
                        std::span<const size_t> section_offsets, int* best_section) {
  if (best_section) *best_section = -1;
  if (text.empty() || max_chars == 0) return {};
  std::string_view scanned = CutAtCodePoint(text, kMaxSnippetScanBytes);
  bool truncated = scanned.size() < text.size();
  std::string clean;  // invalid bytes replaced, so that every unit is valid UTF-8
  if (!IsValidUtf8(scanned)) {
    ForEachCodePoint(scanned, [&](uint32_t cp, size_t b, size_t e) {
      if (cp == kBadCodePoint) AppendUtf8(0xFFFD, &clean);
      else clean.append(scanned.substr(b, e - b));
    });
    scanned = clean;
  }
  std::vector<Unit> u = Analyze(scanned);
  max_chars = std::min(max_chars, u.size());  // also keeps index arithmetic from overflowing
  std::vector<Span> matches = FindMatches(u, terms);
  if (best_section) *best_section = BestSectionOf(u, matches, terms, section_offsets);
  auto [first, last] = BestMatches(matches, terms.size(), max_chars);
  size_t s = 0, e = 0;
  if (first < last) {
    s = matches[first].begin;
    for (size_t i = first; i < last; ++i) e = std::max(e, matches[i].end);
  }
  auto [start, end] = ChooseWindow(u, s, e, max_chars);

  std::string out;
  out.reserve((end > start ? u[end - 1].end - u[start].begin : 0) * 6 / 5 + 64);
  if (AnyText(u, 0, start)) out.append("…");
  SnippetWriter w(scanned, u, &out);
  size_t pos = start;
  for (size_t i = 0; i < matches.size();) {  // every match inside the window, overlaps merged
    size_t a = matches[i].begin, b = matches[i].end;
    for (++i; i < matches.size() && matches[i].begin < b; ++i) b = std::max(b, matches[i].end);
    if (a < pos || b > end) continue;
    w.Plain(pos, a);
    w.Mark(a, b);
    pos = b;
  }
  w.Plain(pos, end);
  if (truncated || AnyText(u, end, u.size())) out.append("…");
  return out;
}


int BestSection(std::string_view text, std::span<const QueryTerm> terms, std::span<const size_t> section_offsets) {
  if (section_offsets.empty() || terms.empty()) return -1;
  std::vector<Unit> u = Analyze(CutAtCodePoint(text, kMaxSnippetScanBytes));
  return BestSectionOf(u, FindMatches(u, terms), terms, section_offsets);
}

std::string MakeSnippet(std::string_view text, std::string_view query, size_t max_chars) {
  std::vector<QueryTerm> terms = QueryTerms(query);
  return MakeSnippet(text, terms, max_chars);
}

}  // namespace folio::search
