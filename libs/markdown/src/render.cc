#include "folio/markdown/render.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "html_util.h"
#include "math.h"
#include "highlight.h"
#include "render_internal.h"

namespace folio::markdown {

namespace {

constexpr unsigned kMdFlags = MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_TASKLISTS |
                              MD_FLAG_WIKILINKS | MD_FLAG_LATEXMATHSPANS |
                              MD_FLAG_PERMISSIVEURLAUTOLINKS | MD_FLAG_PERMISSIVEWWWAUTOLINKS;

// md4c 0.4.8 does not see "[[" right after "!" as a wikilink, so embeds
// "![[x]]" reach it with the "!" swapped for this byte, and the renderer
// turns the marker back into "!" wherever it is not an embed.
constexpr char kEmbedMarker = '\x01';

std::string Trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

const char* AlignAttr(MD_ALIGN a) {
  switch (a) {
    case MD_ALIGN_LEFT: return " align=\"left\"";
    case MD_ALIGN_CENTER: return " align=\"center\"";
    case MD_ALIGN_RIGHT: return " align=\"right\"";
    default: return "";
  }
}

}  // namespace

Renderer::Renderer(std::string_view note_path, const RenderOptions& options, RenderResult* result)
    : note_path_(note_path), options_(options), result_(result) {}

void Renderer::Run(std::string_view body) {
  Preprocessed pre = Preprocess(body);
  body_ = std::move(pre.body);
  footnotes_ = std::move(pre.footnotes);
  if (footnotes_.size() >= kFewItems) {
    for (size_t i = 0; i < footnotes_.size(); ++i) footnote_index_.emplace(footnotes_[i].label, i);
  }
  footnote_number_.assign(footnotes_.size(), 0);
  footnote_refs_.assign(footnotes_.size(), 0);
  for (size_t i = 0; i + 2 < body_.size(); ++i) {
    if (body_[i] != '!' || body_[i + 1] != '[' || body_[i + 2] != '[') continue;
    size_t slashes = 0;
    while (slashes < i && body_[i - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 0) {
      body_[i] = kEmbedMarker;
      bangs_.push_back(i);
    }
  }
  if (body_.size() > std::numeric_limits<MD_SIZE>::max()) {
    result_->warnings.push_back("note is too large to render");
    return;
  }
  MD_PARSER parser{};
  parser.flags = kMdFlags;
  parser.enter_block = &Renderer::OnEnterBlock;
  parser.leave_block = &Renderer::OnLeaveBlock;
  parser.enter_span = &Renderer::OnEnterSpan;
  parser.leave_span = &Renderer::OnLeaveSpan;
  parser.text = &Renderer::OnText;
  html().reserve(body_.size() + body_.size() / 4 + 64);
  if (md_parse(body_.data(), static_cast<MD_SIZE>(body_.size()), &parser, this) != 0) {
    result_->warnings.push_back("markdown parser failed; the page may be incomplete");
  }
  FlushHtml();
  sanitizer_.CloseAll(&html());
  AppendFootnotes();
  text().erase(text().find_last_not_of(" \t\r\n") + 1);
  // An empty heading at the very end starts past the trimmed text (fuzzing,
  // tests/fuzz/regressions/markdown_render_fuzz/empty-trailing-heading).
  for (Heading& h : result_->headings) h.text_offset = std::min(h.text_offset, text().size());
}

int Renderer::OnEnterBlock(MD_BLOCKTYPE type, void* detail, void* self) {
  static_cast<Renderer*>(self)->EnterBlock(type, detail);
  return 0;
}
int Renderer::OnLeaveBlock(MD_BLOCKTYPE type, void* detail, void* self) {
  static_cast<Renderer*>(self)->LeaveBlock(type, detail);
  return 0;
}
int Renderer::OnEnterSpan(MD_SPANTYPE type, void* detail, void* self) {
  static_cast<Renderer*>(self)->EnterSpan(type, detail);
  return 0;
}
int Renderer::OnLeaveSpan(MD_SPANTYPE type, void*, void* self) {
  static_cast<Renderer*>(self)->LeaveSpan(type);
  return 0;
}
int Renderer::OnText(MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* self) {
  auto* r = static_cast<Renderer*>(self);
  if (r->task_li_ != SIZE_MAX) {
    if (type == MD_TEXT_NORMAL) r->TryTaskMark(text);
    r->task_li_ = SIZE_MAX;
  }
  if (r->task_skip_end_ != nullptr) {
    // Drop the "[c] " of a task mark, which md4c may hand over in pieces.
    if (text >= r->task_skip_end_ || text + size < text) {
      r->task_skip_end_ = nullptr;
    } else {
      MD_SIZE skip = static_cast<MD_SIZE>(std::min<size_t>(size, r->task_skip_end_ - text));
      text += skip;
      size -= skip;
      if (size == 0) return 0;
      r->task_skip_end_ = nullptr;
    }
  }
  std::string scratch;
  r->Text(type, r->Restore(text, size, &scratch));
  return 0;
}

void Renderer::TryTaskMark(const MD_CHAR* p) {
  size_t li = task_li_;
  task_li_ = SIZE_MAX;
  auto at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(body_.data());
  if (li >= blocks_.size() || at < base || at + 4 > base + body_.size()) return;
  const char* s = body_.data() + (at - base);
  auto mark = static_cast<unsigned char>(s[1]);
  if (s[0] != '[' || s[2] != ']' || (s[3] != ' ' && s[3] != '\t') || mark <= ' ' || mark >= 0x7F) return;
  BlockFrame& item = blocks_[li];
  if (html().compare(item.html_start, 4, "<li>") != 0) return;
  std::string open = "<li class=\"task-list-item is-checked\" data-task=\"";
  AppendHtmlEscaped(std::string_view(s + 1, 1), &open);
  open += "\"><input type=\"checkbox\" disabled checked> ";
  html().replace(item.html_start, 4, open);
  for (BlockFrame& b : blocks_) {  // a loose item's paragraph moves with it
    if (&b == &item || b.html_start <= item.html_start) continue;
    b.html_start += open.size() - 4;
    if (b.attr_pos != SIZE_MAX) b.attr_pos += open.size() - 4;
  }
  task_skip_end_ = s + 4;
}

void Renderer::EnterBlock(MD_BLOCKTYPE type, void* detail) {
  FlushHtml();
  RevertMarks(0);
  embed_end_ = SIZE_MAX;
  // Only the item's own first paragraph may start with a task mark.
  if (type != MD_BLOCK_P) task_li_ = SIZE_MAX;
  if (!blocks_.empty()) {
    BlockFrame& parent = blocks_.back();
    // "- item ^id" followed by a nested list: the id ends the item's own text.
    if (parent.type == MD_BLOCK_LI && parent.children == 0) ApplyBlockId(parent, nullptr);
    ++parent.children;
  }
  if (type != MD_BLOCK_DOC && type != MD_BLOCK_HTML) sanitizer_.PushScope();
  BlockFrame frame;
  frame.type = type;
  frame.html_start = html().size();
  frame.text_start = text().size();
  size_t tag_len = OpenBlockTag(type, detail, frame);
  if (tag_len != 0) frame.attr_pos = frame.html_start + tag_len;
  blocks_.push_back(std::move(frame));
}

size_t Renderer::OpenBlockTag(MD_BLOCKTYPE type, void* detail, BlockFrame& frame) {
  std::string& out = html();
  switch (type) {
    case MD_BLOCK_QUOTE: out += "<blockquote>\n"; return 11;
    case MD_BLOCK_UL:
      out += "<ul>\n";
      TextBreak('\n');
      return 3;
    case MD_BLOCK_OL: {
      unsigned start = static_cast<MD_BLOCK_OL_DETAIL*>(detail)->start;
      out += start == 1 ? "<ol>\n" : "<ol start=\"" + std::to_string(start) + "\">\n";
      TextBreak('\n');
      return 3;
    }
    case MD_BLOCK_LI: {
      auto* li = static_cast<MD_BLOCK_LI_DETAIL*>(detail);
      if (!li->is_task) {
        out += "<li>";
        task_li_ = blocks_.size();  // this frame's index once pushed
      } else {
        // Obsidian's markup: any mark but a space is checked; data-task
        // holds the mark, so ordered task lists keep their numbers in CSS
        // ("ol > li.task-list-item") and themes can style each state.
        bool checked = li->task_mark == 'x' || li->task_mark == 'X';
        out += checked ? "<li class=\"task-list-item is-checked\" data-task=\"" : "<li class=\"task-list-item\" data-task=\" ";
        if (checked) out += li->task_mark;
        out += checked ? "\"><input type=\"checkbox\" disabled checked> " : "\"><input type=\"checkbox\" disabled> ";
      }
      return 3;
    }
    case MD_BLOCK_HR: out += "<hr>\n"; return 3;
    case MD_BLOCK_H:
      heading_html_start_ = out.size();
      heading_text_start_ = text().size();
      in_heading_ = true;
      heading_tags_.clear();
      return 0;
    case MD_BLOCK_CODE: OpenCodeBlock(*static_cast<MD_BLOCK_CODE_DETAIL*>(detail), frame); return 4;
    case MD_BLOCK_P: out += "<p>"; return 2;
    case MD_BLOCK_TABLE: out += "<table>\n"; return 6;
    case MD_BLOCK_THEAD: out += "<thead>\n"; return 0;
    case MD_BLOCK_TBODY: out += "<tbody>\n"; return 0;
    case MD_BLOCK_TR: out += "<tr>\n"; return 0;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
      out += type == MD_BLOCK_TH ? "<th" : "<td";
      out += AlignAttr(static_cast<MD_BLOCK_TD_DETAIL*>(detail)->align);
      out += '>';
      return 0;
    default: return 0;  // MD_BLOCK_DOC, MD_BLOCK_HTML
  }
}

void Renderer::OpenCodeBlock(const MD_BLOCK_CODE_DETAIL& code, BlockFrame& frame) {
  std::string& out = html();
  std::string lang = AttrString(code.lang);
  if (EqualsIgnoreAsciiCase(lang, "mermaid")) {  // mermaid.js reads the escaped text of pre.mermaid
    frame.mermaid = true;
    result_->has_mermaid = true;
    out += "<pre class=\"mermaid\">";
    return;
  }
  out += "<pre><code";
  if (!lang.empty()) {
    out += " class=\"language-";
    AppendHtmlEscaped(lang, &out);
    out += '"';
  }
  out += '>';
  frame.code_lang = lang;
  frame.code_start = out.size();
}

void Renderer::LeaveBlock(MD_BLOCKTYPE type, void* detail) {
  FlushHtml();
  RevertMarks(0);
  if (type == MD_BLOCK_DOC) {
    sanitizer_.CloseAll(&html());
  } else if (type != MD_BLOCK_HTML) {
    sanitizer_.PopScope(&html());
  }
  BlockFrame f;
  f.type = type;
  if (!blocks_.empty()) {
    f = std::move(blocks_.back());
    blocks_.pop_back();
  }
  BlockFrame* parent = blocks_.empty() ? nullptr : &blocks_.back();
  std::string& out = html();
  switch (type) {
    case MD_BLOCK_QUOTE:
      out += "</blockquote>\n";
      TextBreak('\n');
      if (!f.callout_type.empty()) RewriteCallout(f);
      break;
    case MD_BLOCK_UL: out += "</ul>\n"; break;
    case MD_BLOCK_OL: out += "</ol>\n"; break;
    case MD_BLOCK_LI:
      if (f.children == 0) ApplyBlockId(f, nullptr);
      out += "</li>\n";
      TextBreak('\n');
      break;
    case MD_BLOCK_HR: TextBreak('\n'); break;
    case MD_BLOCK_H: LeaveHeading(static_cast<int>(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level)); break;
    case MD_BLOCK_CODE:
      if (options_.highlight_code && !f.mermaid && !f.code_lang.empty() && f.code_start <= out.size() && f.text_start <= text().size()) {
        // Coloured at render time; the escaped plain code stays if the
        // language is unknown, or once the note has had its share.
        std::string_view code = std::string_view(text()).substr(f.text_start);
        highlighted_bytes_ += code.size();
        if (highlighted_bytes_ <= kMaxNoteHighlightBytes) {
          if (auto hl = HighlightCode(f.code_lang, code)) out.replace(f.code_start, std::string::npos, *hl);
        }
      }
      out += f.mermaid ? "</pre>\n" : "</code></pre>\n";
      TextBreak('\n');
      break;
    case MD_BLOCK_HTML:
      sanitizer_.EndSkip();
      TextBreak('\n');
      break;
    case MD_BLOCK_P:
      if (ApplyBlockId(f, parent)) return;
      out += "</p>\n";
      if (f.split) DropEmptyParagraphs(&out, f.html_start);
      TextBreak('\n');
      if (parent != nullptr && parent->type == MD_BLOCK_QUOTE && parent->children == 1) {
        DetectCallout(f, *parent);
      }
      break;
    case MD_BLOCK_TABLE: out += "</table>\n"; TextBreak('\n'); break;
    case MD_BLOCK_THEAD: out += "</thead>\n"; break;
    case MD_BLOCK_TBODY: out += "</tbody>\n"; break;
    case MD_BLOCK_TR: out += "</tr>\n"; TextBreak('\n'); break;
    case MD_BLOCK_TH: out += "</th>\n"; TextBreak(' '); break;
    case MD_BLOCK_TD: out += "</td>\n"; TextBreak(' '); break;
    default: break;
  }
  embed_end_ = SIZE_MAX;
  if (parent != nullptr) parent->last_child_attr = f.attr_pos;
}

namespace {
// Runs of spaces as one (left where a #tag was taken out of a heading).
std::string CollapseSpaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}
}  // namespace

void Renderer::LeaveHeading(int level) {
  in_heading_ = false;
  std::string inner = html().substr(heading_html_start_);
  html().resize(heading_html_start_);
  // The heading's text without its #tags names it (in its id, the outline
  // and links to it); the tags still show in the heading.
  std::string untagged;
  size_t from = heading_text_start_;
  for (const auto& [b, e] : heading_tags_) {
    untagged.append(text(), from, b - from);
    from = e;
  }
  untagged.append(text(), from, std::string::npos);
  std::string visible = Trimmed(CollapseSpaces(untagged));
  std::string base = HeadingId(visible);
  std::string id = base;
  // "x", "x-1", "x-2": each base remembers its next suffix, so a note of
  // many equal headings stays linear (issue 22: 20,000 took 18 s).
  int& next = heading_next_[base];
  while (heading_ids_.count(id) != 0) id = base + "-" + std::to_string(++next);
  heading_ids_.insert(id);
  id = PageId(id);
  std::string tag = "h" + std::to_string(level);
  html() += "<" + tag + " id=\"";
  AppendHtmlEscaped(id, &html());
  html() += "\">" + inner + "</" + tag + ">\n";
  result_->headings.push_back(Heading{level, visible, id, heading_text_start_});
  TextBreak('\n');
}

void Renderer::EnterSpan(MD_SPANTYPE type, void* detail) {
  FlushHtml();
  task_li_ = SIZE_MAX;
  // Inside a <script> (or other element the sanitiser drops with its
  // content) the note's markup is dropped too.
  skipped_spans_.push_back(sanitizer_.Skipping());
  if (skipped_spans_.back()) return;
  ++span_depth_;
  std::string& out = html();
  switch (type) {
    case MD_SPAN_EM: out += "<em>"; break;
    case MD_SPAN_STRONG: out += "<strong>"; break;
    case MD_SPAN_U: out += "<u>"; break;
    case MD_SPAN_DEL: out += "<del>"; break;
    case MD_SPAN_CODE: out += "<code>"; break;
    case MD_SPAN_LATEXMATH:
    case MD_SPAN_LATEXMATH_DISPLAY:
      in_math_ = true;
      math_tex_.clear();
      break;
    case MD_SPAN_A: EnterLink(*static_cast<MD_SPAN_A_DETAIL*>(detail)); break;
    case MD_SPAN_IMG: EnterImage(*static_cast<MD_SPAN_IMG_DETAIL*>(detail)); break;
    case MD_SPAN_WIKILINK: EnterWikilink(*static_cast<MD_SPAN_WIKILINK_DETAIL*>(detail)); break;
  }
}

void Renderer::LeaveSpan(MD_SPANTYPE type) {
  FlushHtml();
  bool skipped = !skipped_spans_.empty() && skipped_spans_.back();
  if (!skipped_spans_.empty()) skipped_spans_.pop_back();
  if (skipped) return;
  RevertMarks(span_depth_);
  if (span_depth_ > 0) --span_depth_;
  std::string& out = html();
  switch (type) {
    case MD_SPAN_EM: out += "</em>"; break;
    case MD_SPAN_STRONG: out += "</strong>"; break;
    case MD_SPAN_U: out += "</u>"; break;
    case MD_SPAN_DEL: out += "</del>"; break;
    case MD_SPAN_CODE: out += "</code>"; break;
    case MD_SPAN_LATEXMATH:
    case MD_SPAN_LATEXMATH_DISPLAY:
      in_math_ = false;
      out += TexToMathml(math_tex_, type == MD_SPAN_LATEXMATH_DISPLAY);
      text() += math_tex_;
      result_->has_math = true;
      break;
    case MD_SPAN_A:
    case MD_SPAN_IMG:
    case MD_SPAN_WIKILINK: {
      if (spans_.empty()) break;
      SpanFrame f = std::move(spans_.back());
      spans_.pop_back();
      sanitizer_.PopScope(&out);
      if (f.kind == SpanKind::kLink) LeaveLink(f);
      else if (f.kind == SpanKind::kImage) LeaveImage(f);
      else LeaveWikilink(f);
      break;
    }
  }
}

void Renderer::Text(MD_TEXTTYPE type, std::string_view s) {
  bool trailing_bang = trailing_bang_;
  trailing_bang_ = false;
  bang_html_end_ = SIZE_MAX;
  if (type == MD_TEXT_HTML) {
    pending_html_.append(s);
    return;
  }
  if (in_math_) {
    if (type == MD_TEXT_BR || type == MD_TEXT_SOFTBR) math_tex_ += ' ';
    else if (type == MD_TEXT_NULLCHAR) math_tex_ += "\xEF\xBF\xBD";
    else math_tex_.append(s);
    return;
  }
  FlushHtml();
  if (sanitizer_.Skipping()) return;  // the content of a <script>, <style>, ...
  std::string& out = html();
  switch (type) {
    case MD_TEXT_NULLCHAR:
      out += "\xEF\xBF\xBD";
      text() += "\xEF\xBF\xBD";
      break;
    case MD_TEXT_BR:
      out += "<br>\n";
      text() += '\n';
      break;
    case MD_TEXT_SOFTBR:
      out += options_.strict_line_breaks ? "\n" : "<br>\n";
      text() += ' ';
      break;
    case MD_TEXT_ENTITY: {
      std::string decoded;
      if (DecodeEntity(s, &decoded)) {
        AppendHtmlEscaped(decoded, &out);
        text() += decoded;
      } else {  // a name HTML5 does not define: shown as written (CommonMark)
        AppendHtmlEscaped(s, &out);
        text().append(s);
      }
      break;
    }
    case MD_TEXT_NORMAL:
      InlineText(s);
      if (trailing_bang) bang_html_end_ = out.size();
      break;
    default: {  // CODE, LATEXMATH outside a math span
      std::string unescaped;
      if (type == MD_TEXT_CODE && InTableCell() && s.find("\\|") != std::string_view::npos) {
        // GFM: "\|" in a cell is the cell's own escape, also in code spans.
        for (size_t i = 0; i < s.size(); ++i) {
          if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '|') continue;
          unescaped += s[i];
        }
        s = unescaped;
      }
      AppendHtmlEscaped(s, &out);
      text().append(s);
      break;
    }
  }
}

std::string_view Renderer::Restore(const MD_CHAR* p, size_t n, std::string* scratch) {
  std::string_view s(p, n);
  if (bangs_.empty()) return s;
  auto at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(body_.data());
  if (at < base || at + n > base + body_.size()) return s;  // md4c's own buffers
  size_t off = at - base;
  auto it = std::lower_bound(bangs_.begin(), bangs_.end(), off);
  if (it == bangs_.end() || *it >= off + n) return s;
  scratch->assign(s);
  for (; it != bangs_.end() && *it < off + n; ++it) {
    (*scratch)[*it - off] = '!';
    // A marker ending a text may open an embed: the wikilink that follows at
    // once removes the '!' again (see EnterWikilink).
    if (*it == off + n - 1) trailing_bang_ = true;
  }
  return *scratch;
}

void Renderer::FlushHtml() {
  if (pending_html_.empty()) return;
  sanitizer_.Feed(pending_html_, &html(), &text());
  pending_html_.clear();
}

std::string Renderer::PageId(std::string_view id) const {
  return std::string(options_.id_prefix) + std::string(id);
}

bool Renderer::InTableCell() const {
  return !blocks_.empty() && (blocks_.back().type == MD_BLOCK_TD || blocks_.back().type == MD_BLOCK_TH);
}

void Renderer::TextBreak(char c) {
  std::string& t = text();
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t') && c == '\n') t.pop_back();
  if (!t.empty() && t.back() != '\n' && t.back() != c) t.push_back(c);
}

RenderResult RenderNote(std::string_view source, std::string_view note_path,
                        const RenderOptions& options) {
  RenderResult result;
  result.frontmatter = ParseFrontmatter(source);
  if (!result.frontmatter.error.empty()) result.warnings.push_back(result.frontmatter.error);
  result.tags = result.frontmatter.tags;
  size_t offset = std::min(result.frontmatter.body_offset, source.size());
  EmbedBudget budget;
  RenderOptions own = options;
  if (own.embed_budget == nullptr) own.embed_budget = &budget;
  Renderer(note_path, own, &result).Run(source.substr(offset));
  if (own.embed_budget == &budget && !budget.bound_hit.empty() &&
      std::find(result.warnings.begin(), result.warnings.end(), budget.bound_hit) == result.warnings.end()) {
    result.warnings.push_back(budget.bound_hit);
  }
  result.title = NoteTitle(result.frontmatter, note_path);
  return result;
}

std::string NoteTitle(const Frontmatter& fm, std::string_view note_path) {
  std::string title = Trimmed(fm.title);
  if (!title.empty()) return title;
  std::string_view name = note_path.substr(note_path.rfind('/') + 1);
  if (name.size() >= 3 && EqualsIgnoreAsciiCase(name.substr(name.size() - 3), ".md")) name.remove_suffix(3);
  return std::string(name);
}

}  // namespace folio::markdown
