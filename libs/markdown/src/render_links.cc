// Links, images and wikilinks of the renderer (see render_internal.h).
#include <algorithm>
#include <cctype>

#include "folio/core/text.h"
#include "folio/markdown/sanitize.h"
#include "folio/markdown/slug.h"
#include "html_util.h"
#include "render_internal.h"

namespace folio::markdown {

namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

// True if `url` starts with a scheme ("x:") or is protocol-relative ("//").
bool IsAbsoluteUrl(std::string_view url) {
  if (StartsWith(url, "//")) return true;
  size_t i = 0;
  while (i < url.size() && (std::isalnum(static_cast<unsigned char>(url[i])) || url[i] == '+' ||
                            url[i] == '-' || url[i] == '.')) {
    ++i;
  }
  return i > 0 && i < url.size() && url[i] == ':';
}

bool IsHttp(std::string_view url) {
  std::string lower = AsciiLower(url.substr(0, 8));
  return StartsWith(lower, "http://") || StartsWith(lower, "https://") || StartsWith(url, "//");
}

// Display text of a wikilink without alias: "t", "t > Heading", "Heading".
std::string DefaultDisplay(std::string_view target, std::string_view anchor) {
  std::string out(target);
  size_t i = 0;
  while (i <= anchor.size() && !anchor.empty()) {
    size_t e = anchor.find('#', i);
    if (e == std::string_view::npos) e = anchor.size();
    if (e > i) {
      if (!out.empty()) out += " > ";
      out += anchor.substr(i, e - i);
    }
    i = e + 1;
  }
  return out;
}

}  // namespace

void AppendHref(std::string_view url, std::string_view anchor, std::string* out) {
  AppendUrlEscaped(url, out);
  if (!anchor.empty()) {
    out->push_back('#');
    AppendUrlEscaped(AnchorId(anchor), out);
  }
}

std::string AnchorId(std::string_view anchor) {
  if (!anchor.empty() && anchor.front() == '^') return "block-" + HeadingId(anchor.substr(1));
  size_t hash = anchor.rfind('#');
  if (hash != std::string_view::npos) anchor = anchor.substr(hash + 1);
  return HeadingId(anchor);
}

std::string Renderer::AttrString(const MD_ATTRIBUTE& a) const {
  std::string out;
  if (a.text == nullptr) return out;
  for (int i = 0; a.substr_offsets[i] < a.size; ++i) {
    std::string_view piece(a.text + a.substr_offsets[i], a.substr_offsets[i + 1] - a.substr_offsets[i]);
    if (a.substr_types[i] == MD_TEXT_NULLCHAR) {
      out += "\xEF\xBF\xBD";
    } else if (a.substr_types[i] != MD_TEXT_ENTITY || !DecodeEntity(piece, &out)) {
      out.append(piece);
    }
  }
  if (!bangs_.empty()) std::replace(out.begin(), out.end(), '\x01', '!');
  return out;
}

Renderer::SpanFrame Renderer::NewFrame(SpanKind kind) {
  sanitizer_.PushScope();  // raw HTML inside the span is closed inside it
  SpanFrame f;
  f.kind = kind;
  f.html_start = html().size();
  f.text_start = text().size();
  return f;
}

std::optional<std::string> Renderer::ResolveTarget(std::string_view target) {
  if (options_.resolver == nullptr || target.empty()) return std::nullopt;
  return options_.resolver->Resolve(target);
}

void Renderer::OpenDead(const std::string& target, bool embed) {
  html() += "<span class=\"link-dead is-unresolved\" title=\"Missing note: ";
  AppendHtmlEscaped(target, &html());
  html() += "\">";
  result_->warnings.push_back((embed ? "dangling embed ![[" : "dangling link [[") + target + "]]");
}

void Renderer::EnterLink(const MD_SPAN_A_DETAIL& d) {
  SpanFrame f = NewFrame(SpanKind::kLink);
  std::string href = AttrString(d.href);
  std::string title = AttrString(d.title);
  std::string open = "<a href=\"";
  if (!IsSafeUrl(href)) {
    result_->warnings.push_back("unsafe link removed: " + href.substr(0, 40));
    html() += "<span class=\"link-dead is-unresolved\" title=\"Unsafe link removed\">";
    f.close = "</span>";
    spans_.push_back(std::move(f));
    return;
  }
  f.close = "</a>";
  if (IsAbsoluteUrl(href) || href.empty()) {
    AppendUrlEscaped(href, &open);
  } else if (href.front() == '#') {
    std::string frag;
    if (!PercentDecode(href.substr(1), &frag)) frag = href.substr(1);
    open += '#';
    AppendUrlEscaped(PageId(AnchorId(frag)), &open);
  } else {
    size_t hash = href.find('#');
    std::string path, anchor;
    if (!PercentDecode(href.substr(0, hash), &path)) path = href.substr(0, hash);
    if (hash != std::string::npos && !PercentDecode(href.substr(hash + 1), &anchor)) anchor = href.substr(hash + 1);
    bool is_note = EndsWith(AsciiLower(path), ".md");
    bool relative = path.find('?') == std::string::npos && !path.empty() && path.front() != '/';
    std::optional<std::string> url;
    if (path.find('?') == std::string::npos && (is_note || relative)) url = ResolveTarget(path);
    // "[x](Files/spec%20sheet.pdf)": a vault file, resolved as [[...]] is.
    if (!url && relative && !is_note) url = ResolveAttachment(path);
    bool dead = !url && (is_note || relative);
    if (url || dead) {
      f.link_index = result_->links.size();
      result_->links.push_back(LinkRef{path, anchor, false, url.has_value(), {}});
    }
    if (dead) {
      OpenDead(path, false);
      f.close = "</span>";
      spans_.push_back(std::move(f));
      return;
    }
    if (url) AppendHref(*url, anchor, &open);
    else AppendUrlEscaped(href, &open);
    if (url) open += "\" class=\"internal-link";
  }
  open += '"';
  if (IsAbsoluteUrl(href)) open += " class=\"external-link\"";
  if (!title.empty()) {
    open += " title=\"";
    AppendHtmlEscaped(title, &open);
    open += '"';
  }
  if (IsHttp(href)) open += " rel=\"noopener\"";
  open += '>';
  html() += open;
  spans_.push_back(std::move(f));
}

void Renderer::LeaveLink(SpanFrame& f) {
  html() += f.close;
  if (f.link_index < result_->links.size()) result_->links[f.link_index].text = Trim(text().substr(f.text_start));
}

void Renderer::EnterImage(const MD_SPAN_IMG_DETAIL& d) {
  SpanFrame f = NewFrame(SpanKind::kImage);
  std::string src = AttrString(d.src);
  f.title = AttrString(d.title);
  if (!IsSafeUrl(src)) {
    result_->warnings.push_back("unsafe image removed: " + src.substr(0, 40));
    f.dead = true;
  } else if (!IsAbsoluteUrl(src) && !src.empty() && src.front() != '#' && src.front() != '/' &&
             src.find('?') == std::string::npos) {
    std::string path;
    if (!PercentDecode(src.substr(0, src.find('#')), &path)) path = src;
    // "![x](Images/red%20dot.png)": the vault's file, as ![[...]] finds it.
    f.url = ResolveAttachment(path);
    if (!f.url) f.url = ResolveTarget(path);
    result_->links.push_back(LinkRef{path, "", true, f.url.has_value(), {}});
    if (!f.url) result_->warnings.push_back("dangling image ![](" + path + ")");
  }
  if (!f.dead && !f.url) f.url = src;
  spans_.push_back(std::move(f));
}

void Renderer::LeaveImage(SpanFrame& f) {
  if (std::any_of(spans_.begin(), spans_.end(), [](const SpanFrame& s) { return s.kind == SpanKind::kImage; })) {
    html().resize(f.html_start);  // an image in an image's text: its alt joins the outer alt
    return;
  }
  std::string alt = text().substr(f.text_start);
  html().resize(f.html_start);
  text().resize(f.text_start);
  if (f.dead) {
    html() += "<span class=\"link-dead is-unresolved\">";
    AppendHtmlEscaped(alt, &html());
    html() += "</span>";
    return;
  }
  // "![](https://www.youtube.com/watch?v=ID)": Obsidian embeds the video.
  if (std::string video = VideoEmbedUrl(*f.url); !video.empty()) {
    AppendVideoIframe(video, alt, &html());
    return;
  }
  html() += "<img src=\"";
  AppendUrlEscaped(*f.url, &html());
  html() += "\" alt=\"";
  AppendHtmlEscaped(alt, &html());
  html() += '"';
  if (!f.title.empty()) {
    html() += " title=\"";
    AppendHtmlEscaped(f.title, &html());
    html() += '"';
  }
  html() += '>';
}

void Renderer::EnterWikilink(const MD_SPAN_WIKILINK_DETAIL& d) {
  bool embed = bang_html_end_ == html().size() && !html().empty() && html().back() == '!';
  if (embed) {
    html().pop_back();
    if (!text().empty() && text().back() == '!') text().pop_back();
  }
  bang_html_end_ = SIZE_MAX;
  SpanFrame f = NewFrame(SpanKind::kWikilink);
  f.embed = embed;
  f.raw = AttrString(d.target);
  std::string_view t = f.raw;
  // Inside tables "[[t\|alias]]" reaches us with the pipe in the target.
  if (size_t bar = t.find('|'); bar != std::string_view::npos) {
    f.alias = Trim(t.substr(bar + 1));
    t = t.substr(0, bar);
    while (!t.empty() && t.back() == '\\') t.remove_suffix(1);
  }
  size_t hash = t.find('#');
  f.target = Trim(t.substr(0, hash));
  if (hash != std::string_view::npos) f.anchor = Trim(t.substr(hash + 1));
  if (!f.target.empty()) {
    bool media = f.embed && MediaKindOf(f.target) != MediaKind::kNone;
    f.url = media ? ResolveAttachment(f.target) : ResolveTarget(f.target);
    // "[[spec sheet.pdf]]": a link to an attachment (a note wins a tie).
    if (!f.url && !f.embed) f.url = ResolveAttachment(f.target);
    f.link_index = result_->links.size();
    result_->links.push_back(LinkRef{f.target, f.anchor, f.embed, f.url.has_value(), {}});
  }
  spans_.push_back(std::move(f));
}

void Renderer::LeaveWikilink(SpanFrame& f) {
  std::string inner_html = html().substr(f.html_start);
  std::string inner_text = text().substr(f.text_start);
  html().resize(f.html_start);
  text().resize(f.text_start);
  std::string shown_html, shown_text;
  bool has_alias = true;
  if (!f.alias.empty()) {  // "[[t\|alias]]" in a table: the alias is markdown, as outside tables
    // Plain text (most aliases) needs no nested render.
    bool plain = f.alias.find_first_of("*_`~=[]<>&\\$#!%^:/") == std::string::npos;
    if (plain || !RenderInline(f.alias, &shown_html, &shown_text)) {
      shown_text = f.alias;
      shown_html = HtmlEscape(f.alias);
    }
  } else if (inner_text != f.raw && !Trim(inner_text).empty()) {
    shown_text = inner_text;  // md4c split "[[t|alias]]": the alias is the span text
    shown_html = inner_html;
  } else {
    has_alias = false;
    shown_text = DefaultDisplay(f.target, f.anchor);
    shown_html = HtmlEscape(shown_text);
  }
  std::string& out = html();
  if (f.target.empty() && f.anchor.empty()) {  // "[[#]]", "![[ ]]": nothing to link to
    std::string literal = (f.embed ? "![[" : "[[") + f.raw + "]]";
    AppendHtmlEscaped(literal, &out);
    text() += literal;
    return;
  }
  if (f.embed) {
    RenderEmbed(f, has_alias ? shown_text : std::string(), shown_text);
    return;
  }
  if (has_alias && f.link_index < result_->links.size()) result_->links[f.link_index].text = Trim(shown_text);
  text() += shown_text;
  if (!f.target.empty() && !f.url) {
    OpenDead(f.target, f.embed);
    out += shown_html;
    out += "</span>";
    return;
  }
  out += "<a href=\"";
  if (f.target.empty()) {
    out += '#';
    AppendUrlEscaped(f.anchor.empty() ? "" : PageId(AnchorId(f.anchor)), &out);
  } else {
    AppendHref(*f.url, f.anchor, &out);
  }
  out += "\" class=\"internal-link\">";
  out += shown_html;
  out += "</a>";
}

}  // namespace folio::markdown
