#include "folio/site/dates.h"

#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/site/i18n.h"

namespace folio::site {

std::optional<ShownDate> ShowDate(std::string_view text, std::string_view lang) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  std::optional<DateParts> date = ParseDate(text);  // core's one reader of frontmatter dates
  if (!date) return std::nullopt;
  ShownDate out;
  out.machine = std::string(text);
  if (date->has_time) out.machine[date->time_at] = 'T';
  const Strings& s = StringsFor(lang);
  const std::string d = std::to_string(date->day), m = std::to_string(date->month), y = std::to_string(date->year);
  out.readable = Fill(s.date_format, {{"d", d}, {"m", m}, {"month", s.months[date->month - 1]}, {"y", y}});
  return out;
}

void AppendTimeElement(std::string_view text, std::string_view lang, std::string* out) {
  std::optional<ShownDate> date = ShowDate(text, lang);
  if (!date) {
    *out += "<time>";
    AppendHtmlEscaped(text, out);
    *out += "</time>";
    return;
  }
  *out += "<time datetime=\"";
  AppendHtmlEscaped(date->machine, out);
  *out += "\">";
  AppendHtmlEscaped(date->readable, out);
  *out += "</time>";
}

}  // namespace folio::site
