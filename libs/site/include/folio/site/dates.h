// Dates as a page shows them: a frontmatter date ("2024-04-04",
// "2024-04-04T10:30", "2024-04-04 10:30:15", "2024-04-04T10:30:00+02:00",
// "...Z") becomes <time datetime="machine form">readable form</time>, the
// readable form in the page's language (i18n.h: "4 April 2024", "4. April
// 2024", "4 апреля 2024 г.", "2024年4月4日"; English for a language folio
// does not ship). core's ParseDate reads the forms. Text that is no date is
// shown as written.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace folio::site {

struct ShownDate {
  std::string machine;   // for datetime="": "2024-04-04T10:30" (a space before the time becomes 'T')
  std::string readable;  // "4 April 2024"
};

// nullopt when `text` is none of the forms above (or an impossible date).
std::optional<ShownDate> ShowDate(std::string_view text, std::string_view lang);

// Appends <time datetime="...">readable</time>, or <time>text</time> (escaped)
// when `text` is no date.
void AppendTimeElement(std::string_view text, std::string_view lang, std::string* out);

}  // namespace folio::site
