#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time (tests/fuzz/README.md),
# with its dictionary from tests/fuzz/dict/ when it has one. The markdown
# targets render on a thread with a small stack themselves.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS_PER_TARGET [TARGET...]
#
# BUILD_DIR was configured with -DFOLIO_FUZZ=ON and built with
# `cmake --build BUILD_DIR --target fuzz`; this script builds nothing. Each
# target runs over a temporary corpus: its seeds (tests/fuzz/corpus/TARGET),
# its regression inputs (tests/fuzz/regressions/TARGET) and, if
# FOLIO_FUZZ_CORPUS=DIR is set, DIR/TARGET from earlier runs (grown inputs are
# written back there, e.g. for a CI cache). Exit status 1 if any target
# crashed, leaked, timed out or ran out of memory; the reproducer is kept in
# FOLIO_FUZZ_ARTIFACTS (default BUILD_DIR/fuzz-artifacts) and its path and
# the command to replay it are printed.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS_PER_TARGET [TARGET...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(http_request_fuzz markdown_render_fuzz markdown_frontmatter_fuzz ingest_push_fuzz journal_recovery_fuzz)
fi
artifacts=${FOLIO_FUZZ_ARTIFACTS:-$build/fuzz-artifacts}
mkdir -p "$artifacts"
artifacts=$(cd "$artifacts" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/folio-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Leaks are failures; UBSan reports stop the run (the build also passes
# -fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for t in "${targets[@]}"; do
  bin=$build/fuzz/$t
  if [[ ! -x $bin ]]; then
    echo "fuzz: $bin is missing (configure with -DFOLIO_FUZZ=ON, build --target fuzz)" >&2
    failed+=("$t (missing)")
    continue
  fi
  corpus=$work/$t
  mkdir -p "$corpus"
  for d in "$src/tests/fuzz/corpus/$t" "$src/tests/fuzz/regressions/$t" ${FOLIO_FUZZ_CORPUS:+"$FOLIO_FUZZ_CORPUS/$t"}; do
    [[ -d $d ]] && find "$d" -maxdepth 1 -type f ! -name '.*' ! -name 'README*' -exec cp -t "$corpus" {} +
  done
  before=$(ls "$artifacts" | wc -l)
  echo "fuzz: $t for ${seconds}s over $(ls "$corpus" | wc -l) inputs"
  rc=0
  # -timeout: one input may take 10 s at most; `timeout` guards the whole run.
  # A target's dictionary (tests/fuzz/dict/TARGET.dict), if it has one: the
  # tokens that open and nest its syntax.
  dict=()
  [[ -f $src/tests/fuzz/dict/$t.dict ]] && dict=(-dict="$src/tests/fuzz/dict/$t.dict")
  timeout -k 10 $((seconds * 2 + 60)) "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    "${dict[@]}" -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$corpus" > "$work/$t.log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+ *DONE|Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/$t.log" || true
  if [[ $rc -ne 0 ]]; then
    echo "fuzz: $t FAILED (exit $rc); last lines of its log:" >&2
    tail -n 60 "$work/$t.log" >&2
    for a in $(ls -t "$artifacts" | head -n $(( $(ls "$artifacts" | wc -l) - before ))); do
      echo "fuzz: reproducer $artifacts/$a" >&2
      echo "fuzz:   replay: $bin $artifacts/$a" >&2
      echo "fuzz:   keep it: cp $artifacts/$a $src/tests/fuzz/regressions/$t/ (then fix; make test replays it)" >&2
    done
    failed+=("$t")
  fi
  if [[ -n ${FOLIO_FUZZ_CORPUS:-} ]]; then
    mkdir -p "$FOLIO_FUZZ_CORPUS/$t"
    cp -n "$corpus"/* "$FOLIO_FUZZ_CORPUS/$t/" 2>/dev/null || true
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each without a finding"
