// The words folio itself writes on a page (issue 29): one table of UI
// strings per shipped language (libs/site/src/i18n/<code>.cc), the rule
// that picks a page's language, and CLDR plural forms. A page's language is
// its note's frontmatter `lang` when that looks like a BCP 47 tag, else the
// site's (SiteInfo::lang), else "en"; its strings are the table of the
// tag's primary subtag ("pt-BR" -> pt, "zh-Hans" -> zh), English for a
// language folio does not ship. The site script (folio.js) has its own
// table for the strings it writes, keyed the same way by <html lang>.
// The tables are constants; pure functions; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace folio::site {

// How a language chooses among its plural forms (CLDR, integers only).
enum class PluralRule {
  kOneOther,      // en, de, es: 1 | other
  kZeroOneOther,  // fr, pt: 0 and 1 | other
  kSlavic,        // ru: one (1, 21, ..) | few (2-4, 22-24, ..) | many (0, 5-20, 11-14, ..)
  kNone,          // ja, zh: one form
};

// One language's strings. A "plural" string holds its forms separated by
// '|', as many as the language's rule has (2, 2, 3 or 1), each with {n} for
// the number. Other placeholders are named where they occur.
struct Strings {
  std::string_view code;  // "en": the primary subtag this table serves
  PluralRule plural = PluralRule::kOneOther;
  // The chrome every page shares.
  std::string_view explorer, outline_button, nav_recent, nav_tags, nav_graph, search_placeholder, search_button,
      footer_published, breadcrumbs;
  // A note page.
  std::string_view created, updated;
  std::string_view words;    // plural
  std::string_view reading;  // plural: "{n} min read"
  std::string_view outline_title, backlinks;
  std::string_view and_more;  // plural: "and {n} more"
  std::string_view related;
  // Listings.
  std::string_view notes, folders, tags_count;  // plural
  std::string_view tags_title, recent_title, newer, older;
  std::string_view page_of;  // "Page {p} of {n}"
  // The 404 and 410 pages.
  std::string_view not_found_title, not_found_text, gone_title, gone_text, go_home;
  // The graph page: {tags} and {home} become links named tags_link and home_link.
  std::string_view graph_description, graph_noscript, tags_link, home_link;
  // The search page: {q} is the query (set in <q>).
  std::string_view search_title, search_title_query, search_prompt, search_none;
  std::string_view search_results;  // plural, with {q}
  std::string_view search_unavailable, search_busy;  // the edge's errors when search cannot answer
  // A private site (signin_page.h): the sign-in page, the errors the edge
  // writes into it (signin_limited: plural, {n} seconds to wait) and the
  // sign-out button of every page's header.
  std::string_view signin_title, signin_intro, signin_name, signin_password, signin_submit, signin_wrong;
  std::string_view signin_limited;  // plural
  std::string_view sign_out;
  // Dates: {d} day, {m} month number, {month} its name (as the day's
  // month: Russian genitive), {y} year.
  std::array<std::string_view, 12> months;
  std::string_view date_format;
};

// Every string field of Strings with its name (tests check each table).
struct StringKey {
  std::string_view name;
  std::string_view Strings::*field;
  bool plural;
};
const std::array<StringKey, 51>& StringKeys();

// The shipped tables: en, de, fr, es, ru, ja, zh, pt.
const std::array<const Strings*, 8>& AllStrings();

// True for a tag like "en", "pt-BR", "zh-Hans-CN", "sr-Latn": 2-3 letters,
// then subtags of 1-8 letters or digits, at most 35 bytes.
bool IsLanguageTag(std::string_view tag);
// The page's <html lang>: note_lang as written if IsLanguageTag, else
// site_lang if it is, else "en".
std::string_view PageLang(std::string_view note_lang, std::string_view site_lang);
// The table for a tag's primary subtag, case-insensitive; English when folio
// has none.
const Strings& StringsFor(std::string_view lang);

// Index of the plural form for n under `rule` (0-based).
size_t PluralIndex(PluralRule rule, size_t n);
// The form of a plural string for n, with {n} replaced by n.
std::string Plural(const Strings& s, std::string_view forms, size_t n);
// `text` with each {name} of `args` replaced by its value (values are
// inserted as they are: escape them first for HTML).
std::string Fill(std::string_view text, std::initializer_list<std::pair<std::string_view, std::string_view>> args);

}  // namespace folio::site
