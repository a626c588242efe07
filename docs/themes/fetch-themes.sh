#!/usr/bin/env bash
# Downloads the community Obsidian Publish themes that docs/themes-gallery.md
# is made with, each pinned in docs/themes/themes.tsv to a repository, a
# commit and the sha256 of its publish.css, into DIR/<name>/publish.css. The
# files are other people's work under their own licences: they are fetched to
# be tried, never committed (/.themes/, the default DIR, is in .gitignore).
#
#   docs/themes/fetch-themes.sh [DIR]      # DIR defaults to .themes at the repository root
#
# Then node tests/browser/tools/theme-screenshots.js [--themes DIR] draws the gallery.
# Needs curl and sha256sum. A file whose hash differs is not kept and the
# script fails, so a rewritten upstream file is noticed, not used.
set -euo pipefail

dir=${1:-"$(dirname "$0")/../../.themes"}
list="$(dirname "$0")/themes.tsv"
status=0
while IFS=$'\t' read -r name repo commit path sha _title; do
  [[ -z $name || $name == \#* ]] && continue
  out="$dir/$name/publish.css"
  mkdir -p "$dir/$name"
  if [[ -f $out ]] && echo "$sha  $out" | sha256sum --check --status; then
    echo "$name: already there"
    continue
  fi
  rm -f "$out"
  url="https://raw.githubusercontent.com/$repo/$commit/$path"
  if ! curl --fail --silent --show-error --location --max-time 60 -o "$out.tmp" "$url" </dev/null; then
    echo "$name: download failed: $url" >&2
    rm -f "$out.tmp"; status=1; continue
  fi
  if ! echo "$sha  $out.tmp" | sha256sum --check --status; then
    echo "$name: sha256 mismatch for $url (expected $sha, got $(sha256sum < "$out.tmp" | cut -d' ' -f1))" >&2
    rm -f "$out.tmp"; status=1; continue
  fi
  mv "$out.tmp" "$out"
  echo "$name: $url"
done < "$list"
exit $status
