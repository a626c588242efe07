// File-system helpers shared by services (libs/journal keeps its own behind
// its Env, where tests inject faults). Thread-safe; they block on the disk:
// call them off event loops.
#pragma once

#include <string>

#include "folio/core/status.h"

namespace folio {

// fsync of the directory `dir` itself, so that the creates, renames and
// removes done in it survive a crash. kUnavailable (naming dir and the
// error) if it cannot be opened or synced.
Status SyncDirectory(const std::string& dir);

}  // namespace folio
