// Text utilities shared by every lib: UTF-8 validation, vault path checks,
// percent-encoding, ASCII case and whitespace helpers. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "folio/core/status.h"

namespace folio {

// True if `s` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool IsValidUtf8(std::string_view s);

// Checks a vault-relative path as sent by a client ("Folder/Note name.md"):
// non-empty, at most 1024 bytes, valid UTF-8, no NUL or control characters,
// not absolute ("/x", "C:\x"), no backslashes, no empty, "." or ".." segments.
// The message names the problem, not the path; callers add the path.
Status CheckVaultPath(std::string_view path);

// Percent-decodes `in` (for URL paths: '+' stays '+'). Returns false on a
// malformed escape. The result may contain any byte; validate it after.
bool PercentDecode(std::string_view in, std::string* out);
// Percent-encodes everything but unreserved characters and '/' (fit for a
// URL path, and for a query value: '&', '+', '#', ' ' are encoded).
std::string PercentEncodePath(std::string_view in);

// Vault path parts: "a/b/c.md" -> dir "a/b", base "c.md"; "c.md" -> dir "".
std::string_view PathDir(std::string_view path);
std::string_view PathBase(std::string_view path);

// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r).
std::string_view TrimAsciiSpace(std::string_view s);

std::string AsciiLower(std::string_view s);
bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b);
bool EndsWith(std::string_view s, std::string_view suffix);
bool StartsWith(std::string_view s, std::string_view prefix);

// "812 B", "3.4 KiB", "8 MiB", "1.5 GiB" (binary units, one decimal when useful).
std::string FormatBytes(int64_t n);

// Escapes &, <, >, ", ' for HTML text and attribute values; appends to *out.
void AppendHtmlEscaped(std::string_view in, std::string* out);
std::string HtmlEscape(std::string_view in);
// AppendHtmlEscaped for XML (MathML, feeds) that must be well-formed
// whatever the input: also drops what XML 1.0 forbids or HTML flags (control
// characters but tab and newlines, C1 controls, U+FFFE/U+FFFF) and turns
// malformed UTF-8 into U+FFFD.
void AppendXmlText(std::string_view in, std::string* out);

}  // namespace folio
