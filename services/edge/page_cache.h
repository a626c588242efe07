// Forwarding header, kept only while asset_handler.cc still includes it by
// its old name: the Worker lives in worker.h, the site tables in
// site_table.h. Remove once asset_handler.cc includes "worker.h".
#pragma once

#include "worker.h"
