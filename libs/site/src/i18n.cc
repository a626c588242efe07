#include "folio/site/i18n.h"

#include "folio/core/text.h"

namespace folio::site {
namespace i18n {

// The shipped tables, one per language: i18n/<code>.cc.
extern const Strings kEn, kDe, kFr, kEs, kRu, kJa, kZh, kPt;

}  // namespace i18n
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsAlpha(c) || (c >= '0' && c <= '9'); }

}  // namespace

const std::array<StringKey, 51>& StringKeys() {
#define FOLIO_KEY(name, plural) StringKey{#name, &Strings::name, plural}
  static const std::array<StringKey, 51> keys = {
      FOLIO_KEY(code, false),           FOLIO_KEY(explorer, false),         FOLIO_KEY(outline_button, false),
      FOLIO_KEY(nav_recent, false),     FOLIO_KEY(nav_tags, false),         FOLIO_KEY(nav_graph, false),
      FOLIO_KEY(search_placeholder, false), FOLIO_KEY(search_button, false), FOLIO_KEY(footer_published, false),
      FOLIO_KEY(breadcrumbs, false),    FOLIO_KEY(created, false),          FOLIO_KEY(updated, false),
      FOLIO_KEY(words, true),           FOLIO_KEY(reading, true),           FOLIO_KEY(outline_title, false),
      FOLIO_KEY(backlinks, false),      FOLIO_KEY(and_more, true),          FOLIO_KEY(related, false),
      FOLIO_KEY(notes, true),           FOLIO_KEY(folders, true),           FOLIO_KEY(tags_count, true),
      FOLIO_KEY(tags_title, false),     FOLIO_KEY(recent_title, false),     FOLIO_KEY(newer, false),
      FOLIO_KEY(older, false),          FOLIO_KEY(page_of, false),          FOLIO_KEY(not_found_title, false),
      FOLIO_KEY(not_found_text, false), FOLIO_KEY(gone_title, false),       FOLIO_KEY(gone_text, false),
      FOLIO_KEY(go_home, false),        FOLIO_KEY(graph_description, false), FOLIO_KEY(graph_noscript, false),
      FOLIO_KEY(tags_link, false),      FOLIO_KEY(home_link, false),        FOLIO_KEY(search_title, false),
      FOLIO_KEY(search_title_query, false), FOLIO_KEY(search_prompt, false), FOLIO_KEY(search_none, false),
      FOLIO_KEY(search_results, true),  FOLIO_KEY(search_unavailable, false), FOLIO_KEY(search_busy, false),
      FOLIO_KEY(signin_title, false),   FOLIO_KEY(signin_intro, false),     FOLIO_KEY(signin_name, false),
      FOLIO_KEY(signin_password, false), FOLIO_KEY(signin_submit, false),   FOLIO_KEY(signin_wrong, false),
      FOLIO_KEY(signin_limited, true),  FOLIO_KEY(sign_out, false),         FOLIO_KEY(date_format, false),
  };
#undef FOLIO_KEY
  return keys;
}

const std::array<const Strings*, 8>& AllStrings() {
  static const std::array<const Strings*, 8> all = {&i18n::kEn, &i18n::kDe, &i18n::kFr, &i18n::kEs,
                                                    &i18n::kRu, &i18n::kJa, &i18n::kZh, &i18n::kPt};
  return all;
}

bool IsLanguageTag(std::string_view tag) {
  if (tag.size() > 35) return false;
  size_t at = 0;
  while (at < tag.size() && IsAlpha(tag[at])) ++at;
  if (at < 2 || at > 3) return false;
  while (at < tag.size()) {
    if (tag[at++] != '-') return false;
    const size_t start = at;
    while (at < tag.size() && IsAlnum(tag[at])) ++at;
    if (at == start || at - start > 8) return false;
  }
  return true;
}

std::string_view PageLang(std::string_view note_lang, std::string_view site_lang) {
  if (IsLanguageTag(note_lang)) return note_lang;
  if (IsLanguageTag(site_lang)) return site_lang;
  return "en";
}

const Strings& StringsFor(std::string_view lang) {
  std::string_view primary = lang.substr(0, lang.find('-'));
  for (const Strings* s : AllStrings()) {
    if (EqualsIgnoreAsciiCase(primary, s->code)) return *s;
  }
  return i18n::kEn;
}

size_t PluralIndex(PluralRule rule, size_t n) {
  switch (rule) {
    case PluralRule::kOneOther: return n == 1 ? 0 : 1;
    case PluralRule::kZeroOneOther: return n <= 1 ? 0 : 1;
    case PluralRule::kSlavic:
      if (n % 10 == 1 && n % 100 != 11) return 0;
      if (n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || n % 100 > 14)) return 1;
      return 2;
    case PluralRule::kNone: return 0;
  }
  return 0;
}

std::string Plural(const Strings& s, std::string_view forms, size_t n) {
  size_t index = PluralIndex(s.plural, n);
  std::string_view form = forms;
  for (size_t i = 0; i < index; ++i) {  // a table short of forms: its last one
    size_t bar = form.find('|');
    if (bar == std::string_view::npos) break;
    form.remove_prefix(bar + 1);
  }
  form = form.substr(0, form.find('|'));
  return Fill(form, {{"n", std::to_string(n)}});
}

std::string Fill(std::string_view text, std::initializer_list<std::pair<std::string_view, std::string_view>> args) {
  std::string out;
  out.reserve(text.size() + 32);
  while (!text.empty()) {
    size_t open = text.find('{');
    out += text.substr(0, open);
    if (open == std::string_view::npos) break;
    text.remove_prefix(open);
    size_t close = text.find('}');
    bool replaced = false;
    for (const auto& [name, value] : args) {
      if (close == name.size() + 1 && text.substr(1, name.size()) == name) {
        out += value;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += '{';
    text.remove_prefix(replaced ? close + 1 : 1);
  }
  return out;
}

}  // namespace folio::site
