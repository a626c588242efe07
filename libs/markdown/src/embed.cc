// ![[embeds]]: images, audio, video and PDFs by file extension, notes (and
// their sections or blocks) through LinkResolver::EmbedNote.
#include <algorithm>

#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "html_util.h"
#include "render_internal.h"

namespace folio::markdown {

namespace {

struct ExtKind {
  std::string_view ext;
  MediaKind kind;
};
constexpr ExtKind kExts[] = {
    {".png", MediaKind::kImage}, {".jpg", MediaKind::kImage},  {".jpeg", MediaKind::kImage},
    {".gif", MediaKind::kImage}, {".bmp", MediaKind::kImage},  {".svg", MediaKind::kImage},
    {".webp", MediaKind::kImage}, {".avif", MediaKind::kImage}, {".mp3", MediaKind::kAudio},
    {".wav", MediaKind::kAudio}, {".m4a", MediaKind::kAudio},  {".ogg", MediaKind::kAudio},
    {".flac", MediaKind::kAudio}, {".opus", MediaKind::kAudio}, {".mp4", MediaKind::kVideo},
    {".webm", MediaKind::kVideo}, {".ogv", MediaKind::kVideo},  {".mov", MediaKind::kVideo},
    {".mkv", MediaKind::kVideo}, {".pdf", MediaKind::kPdf}};

// "|300" or "|300x200": width (and height).
bool ParseSize(std::string_view s, std::string* w, std::string* h) {
  size_t x = s.find('x');
  std::string_view a = s.substr(0, x), b = x == std::string_view::npos ? "" : s.substr(x + 1);
  auto digits = [](std::string_view d) {
    return !d.empty() && d.size() < 6 &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(a) || (x != std::string_view::npos && !digits(b))) return false;
  *w = a;
  *h = b;
  return true;
}

}  // namespace

MediaKind MediaKindOf(std::string_view target) {
  for (const ExtKind& e : kExts) {
    if (target.size() > e.ext.size() &&
        EqualsIgnoreAsciiCase(target.substr(target.size() - e.ext.size()), e.ext)) {
      return e.kind;
    }
  }
  return MediaKind::kNone;
}

void DropEmptyParagraphs(std::string* html, size_t from) {
  size_t i = from;
  while ((i = html->find("<p>", i)) != std::string::npos) {
    size_t j = i + 3;
    while (j < html->size() && ((*html)[j] == ' ' || (*html)[j] == '\n' || (*html)[j] == '\t')) ++j;
    if (html->compare(j, 5, "</p>\n") == 0) {
      html->erase(i, j + 5 - i);
    } else {
      i = j;
    }
  }
}

std::optional<std::string> Renderer::ResolveAttachment(std::string_view target) {
  if (options_.resolver == nullptr || target.empty()) return std::nullopt;
  return options_.resolver->ResolveAttachment(target);
}

void Renderer::RenderEmbed(SpanFrame& f, const std::string& alias, const std::string& shown) {
  MediaKind kind = MediaKindOf(f.target);
  if (kind != MediaKind::kNone) {
    RenderMediaEmbed(f, alias, kind);
  } else {
    RenderNoteEmbed(f, alias, shown);
  }
}

void Renderer::RenderMediaEmbed(SpanFrame& f, const std::string& alias, MediaKind kind) {
  std::string& out = html();
  std::string name = f.target.substr(f.target.rfind('/') + 1);
  if (!f.url) {
    out += "<span class=\"link-dead is-unresolved\" title=\"Missing attachment: ";
    AppendHtmlEscaped(f.target, &out);
    out += "\">";
    AppendHtmlEscaped(alias.empty() ? name : alias, &out);
    out += "</span>";
    result_->warnings.push_back("missing attachment ![[" + f.target + "]]");
    return;
  }
  std::string src;
  AppendUrlEscaped(*f.url, &src);
  if (!f.anchor.empty()) {  // "#icon", "#page=2", "#t=10": kept for the browser and themes
    src += '#';
    AppendUrlEscaped(f.anchor, &src);
  }
  std::string width, height;
  bool sized = !alias.empty() && ParseSize(alias, &width, &height);
  std::string size;
  if (!width.empty()) size += " width=\"" + width + "\"";
  if (!height.empty()) size += " height=\"" + height + "\"";
  embed_attr_pos_ = out.size();
  switch (kind) {
    case MediaKind::kImage:
      out += "<img src=\"" + src + "\" alt=\"";
      AppendHtmlEscaped(alias.empty() || sized ? name : alias, &out);
      out += "\"" + size;
      if (!f.anchor.empty()) {
        out += " class=\"embed-";
        AppendHtmlEscaped(HeadingId(f.anchor), &out);
        out += '"';
      }
      out += " loading=\"lazy\">";
      embed_attr_pos_ += 4;
      break;
    case MediaKind::kAudio:
      out += "<audio controls src=\"" + src + "\"></audio>";
      embed_attr_pos_ += 6;
      break;
    case MediaKind::kVideo:
      out += "<video controls src=\"" + src + "\"" + size + "></video>";
      embed_attr_pos_ += 6;
      break;
    default:  // the only <iframe> we ever write
      out += "<iframe class=\"embed-pdf\" src=\"" + src + "\"" + size + " loading=\"lazy\"></iframe>";
      embed_attr_pos_ += 7;
      break;
  }
  embed_end_ = out.size();
}

void Renderer::RenderEmbedLink(SpanFrame& f, const std::string& shown) {
  std::string& out = html();
  text() += shown;
  std::optional<std::string> file;
  if (!f.url) file = ResolveAttachment(f.target);  // "![[archive.zip]]": a download link
  if (!f.url && !file) {
    OpenDead(f.target, true);
    AppendHtmlEscaped(shown, &out);
    out += "</span>";
    return;
  }
  out += "<a href=\"";
  if (f.url) {
    AppendHref(*f.url, f.anchor, &out);
  } else {
    AppendUrlEscaped(*file, &out);
    if (f.link_index < result_->links.size()) result_->links[f.link_index].resolved = true;
  }
  out += "\" class=\"embed-link internal-link\">";
  AppendHtmlEscaped(shown, &out);
  out += "</a>";
}

std::optional<std::string> Renderer::EmbedNote(const SpanFrame& f) {
  EmbedBudget& spent = *options_.embed_budget;
  std::string why;
  if (options_.depth + 1 >= kMaxRenderDepth) {
    why = "embeds nested more than " + std::to_string(kMaxRenderDepth) + " levels deep";
  } else if (spent.embeds >= kMaxPageEmbeds) {
    why = "more than " + std::to_string(kMaxPageEmbeds) + " note embeds on one page";
  } else if (spent.bytes >= kMaxPageEmbedBytes) {
    why = "more than " + std::to_string(kMaxPageEmbedBytes >> 20) + " MiB of embedded notes on one page";
  }
  if (!why.empty()) {
    std::string warning = "embed ![[" + f.target + "]] shown as a link: " + why;
    if (spent.bound_hit.empty()) spent.bound_hit = warning;
    result_->warnings.push_back(std::move(warning));
    return std::nullopt;
  }
  ++spent.embeds;
  RenderOptions nested = options_;
  ++nested.depth;
  std::optional<std::string> content = options_.resolver->EmbedNote(f.target, f.anchor, nested);
  if (content) spent.bytes += content->size();
  return content;
}

void Renderer::RenderNoteEmbed(SpanFrame& f, const std::string& alias, const std::string& shown) {
  std::optional<std::string> content;
  if (options_.resolver != nullptr) content = EmbedNote(f);
  BlockFrame* block = blocks_.empty() ? nullptr : &blocks_.back();
  bool in_p = block != nullptr && block->type == MD_BLOCK_P && span_depth_ == 0;
  bool in_cell = block != nullptr && span_depth_ == 0 &&
                 (block->type == MD_BLOCK_LI || block->type == MD_BLOCK_TD || block->type == MD_BLOCK_TH);
  if (!content || (!in_p && !in_cell)) {  // headings, emphasis: a <div> cannot go there
    RenderEmbedLink(f, shown);
    return;
  }
  std::string& out = html();
  if (in_p) {  // a <div> may not sit in a <p>: close it and open a new one after
    sanitizer_.PopScope(&out);
    sanitizer_.PushScope();
    out += "</p>\n";
    block->split = true;
  }
  embed_attr_pos_ = out.size() + 4;
  out += "<div class=\"embed markdown-embed\" data-embed=\"";
  AppendHtmlEscaped(f.anchor.empty() ? f.target : f.target + "#" + f.anchor, &out);
  out += "\"><div class=\"embed-content\">";
  out += *content;
  out += "</div>";
  if (f.url) {
    out += "<a class=\"embed-source\" href=\"";
    AppendHref(*f.url, f.anchor, &out);
    out += "\">";
    AppendHtmlEscaped(alias.empty() ? f.target : alias, &out);
    out += "</a>";
  }
  out += "</div>\n";
  if (in_p) out += "<p>";
  embed_end_ = out.size();
}

}  // namespace folio::markdown
