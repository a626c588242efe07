#!/usr/bin/env bash
# fetch-vaults: the documentation vaults search-eval asks its questions of, each a folder of one
# public repository at a pinned commit (only that folder's notes are downloaded: a blobless
# sparse clone checked out at the commit). Prints the directory that holds one folder per vault.
#
#   loadtest/search-eval/fetch-vaults.sh            -> ~/.cache/folio-search-eval/vaults/<vault>/
#   SEARCH_EVAL_CACHE=DIR ...                        cache somewhere else
#   SEARCH_EVAL_VAULTS=DIR ...                       use DIR as it is (one folder per vault,
#                                                    already extracted); nothing is downloaded
#
# obsidianmd/obsidian-help is held out for independent evaluation: never add it here.
set -euo pipefail

# vault  repository                               commit                                    folder
VAULTS=(
  "tasks    https://github.com/obsidian-tasks-group/obsidian-tasks.git cc0fce3c1326d18e2bdb7020eaf4c52e885da569 docs"
  "dataview https://github.com/blacksmithgu/obsidian-dataview.git      5ad0994ff384cbb797de382e7edff2388141b73a docs/docs"
  "quickadd https://github.com/chhoumann/quickadd.git                  914fcb32b899fc65fcfa149177b05d3acfa7c6da docs/src/content/docs/docs"
)

if [[ -n "${SEARCH_EVAL_VAULTS:-}" ]]; then
  for v in "${VAULTS[@]}"; do
    read -r name _ <<<"$v"
    [[ -d "$SEARCH_EVAL_VAULTS/$name" ]] || { echo "no $SEARCH_EVAL_VAULTS/$name" >&2; exit 1; }
  done
  echo "$SEARCH_EVAL_VAULTS"
  exit 0
fi

CACHE=${SEARCH_EVAL_CACHE:-$HOME/.cache/folio-search-eval}
mkdir -p "$CACHE/repos" "$CACHE/vaults" "$CACHE/stamps"
for v in "${VAULTS[@]}"; do
  read -r name url commit folder <<<"$v"
  stamp="$CACHE/stamps/$name"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$commit" ]]; then continue; fi
  repo="$CACHE/repos/$name"
  if [[ ! -d "$repo/.git" ]]; then
    # Blobless and sparse: only the vault folder's notes are ever downloaded (no images:
    # search reads notes only, and a push then has no attachment over ingest's limits).
    git clone --quiet --filter=blob:none --no-checkout --sparse "$url" "$repo" >&2
  fi
  git -C "$repo" sparse-checkout set --no-cone "/$folder/**/*.md" >&2
  git -C "$repo" cat-file -e "$commit^{commit}" 2>/dev/null || git -C "$repo" fetch --quiet origin "$commit" >&2
  git -C "$repo" -c advice.detachedHead=false checkout --quiet --detach "$commit" >&2
  rm -rf "$CACHE/vaults/$name"
  cp -a "$repo/$folder" "$CACHE/vaults/$name"
  echo "$commit" >"$stamp"
  echo "fetched $name: $url $commit $folder ($(find "$CACHE/vaults/$name" -name '*.md' | wc -l) notes)" >&2
done
echo "$CACHE/vaults"
