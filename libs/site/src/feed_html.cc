// The feeds' view of a rendered page (feeds.h): its body and description,
// its links made absolute, its first image. Pure functions; thread-safe.
#include <cctype>

#include "folio/core/text.h"
#include "folio/site/feeds.h"
#include "layout_internal.h"

namespace folio::site {
namespace {

// Undoes AppendHtmlEscaped (the five entities it writes; others stay).
std::string HtmlUnescape(std::string_view s) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    bool done = false;
    if (s[i] == '&') {
      for (const auto& [e, c] : kEntities) {
        if (s.compare(i, e.size(), e) == 0) {
          out.push_back(c);
          i += e.size() - 1;
          done = true;
          break;
        }
      }
    }
    if (!done) out.push_back(s[i]);
  }
  return out;
}

// "https:", "mailto:": a scheme before any '/', '?' or '#'.
bool HasScheme(std::string_view url) {
  for (size_t i = 0; i < url.size(); ++i) {
    char c = url[i];
    if (c == ':') return i > 0;
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.')) return false;
  }
  return false;
}

// The attribute value `url` (as written, escaped) made absolute.
std::string AbsoluteUrl(std::string_view url, std::string_view base_url, std::string_view page_url) {
  if (url.empty() || HasScheme(url) || StartsWith(url, "//")) return std::string(url);
  const std::string page = HtmlEscape(PercentEncodePath(page_url));
  if (url.front() == '/') return std::string(base_url) + std::string(url);
  if (url.front() == '#' || url.front() == '?') return std::string(base_url) + page + std::string(url);
  std::string_view dir = page;
  dir = dir.substr(0, dir.rfind('/') + 1);  // "/a/b" -> "/a/"
  if (dir.empty()) dir = "/";
  return std::string(base_url) + std::string(dir) + std::string(url);
}

}  // namespace

bool NotePageParts(std::string_view page, std::string* body, std::string* description) {
  const size_t start = page.find(internal::kBodyStart);
  const size_t end = page.rfind(internal::kBodyEnd);
  if (start == std::string_view::npos || end == std::string_view::npos || end < start) return false;
  const size_t from = start + internal::kBodyStart.size();
  *body = std::string(page.substr(from, end - from));
  description->clear();
  // Written by the head before any body (AppendHead's Meta()).
  constexpr std::string_view kMeta = "<meta name=\"description\" content=\"";
  const size_t head_end = page.find("</head>");
  const size_t at = page.find(kMeta);
  if (at != std::string_view::npos && at < head_end) {
    const size_t v = at + kMeta.size();
    const size_t q = page.find('"', v);
    if (q != std::string_view::npos) *description = HtmlUnescape(page.substr(v, q - v));
  }
  return true;
}

std::string AbsoluteLinks(std::string_view html, std::string_view base_url, std::string_view page_url) {
  std::string out;
  out.reserve(html.size() + html.size() / 8);
  size_t i = 0;
  while (i < html.size()) {
    // Attribute values are quoted with '"' by the renderer and the
    // sanitiser; text cannot hold ` href="` (its '"' is escaped).
    size_t href = html.find(" href=\"", i), src = html.find(" src=\"", i);
    size_t at = std::min(href, src);
    if (at == std::string_view::npos) break;
    const size_t v = at + (at == href ? 7 : 6);
    const size_t q = html.find('"', v);
    if (q == std::string_view::npos) break;
    out += html.substr(i, v - i);
    out += AbsoluteUrl(html.substr(v, q - v), base_url, page_url);
    i = q;
  }
  out += html.substr(i);
  return out;
}

std::string FirstImage(std::string_view body_html) {
  for (size_t at = body_html.find("<img "); at != std::string_view::npos; at = body_html.find("<img ", at + 5)) {
    const size_t tag_end = body_html.find('>', at);
    const size_t v = body_html.find(" src=\"", at);
    if (v == std::string_view::npos || v > tag_end) continue;
    const size_t q = body_html.find('"', v + 6);
    if (q == std::string_view::npos) return "";
    std::string url = HtmlUnescape(body_html.substr(v + 6, q - v - 6));
    std::string lower = AsciiLower(url.substr(0, 8));
    if (StartsWith(lower, "http://") || StartsWith(lower, "https://")) return url;
    if (StartsWith(url, "/assets/")) {
      // NotePage::image holds the decoded path; the head encodes it.
      std::string decoded;
      if (size_t hash = url.find_first_of("#?"); hash != std::string::npos) url.resize(hash);
      return PercentDecode(url, &decoded) ? decoded : url;
    }
  }
  return "";
}

}  // namespace folio::site
