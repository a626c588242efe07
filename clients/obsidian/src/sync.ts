// What a publish sends, decided without Obsidian: the selection of vault
// files (skip rules and scope), the diff against the server's manifest, the
// client-side limit checks, the deletion guard, the split into batches, the
// base64 of attachments, and the publish loop over an injected vault and API.
//
// No `obsidian` import: the tests run this module in plain Node against a real
// folio-ingest. Mirrors the CLI (cli/src/plan.{h,cc}, vault.cc, push.cc).

import { randomKey } from './api';
import type { FolioApi, Manifest, PushBody, PushReply, RemoteFile } from './api';

// Which files a publish considers (the plugin's "What to publish" setting).
export type Scope =
  | { kind: 'vault' }
  | { kind: 'folders'; folders: string[] }      // vault-relative folder paths, no trailing '/'
  | { kind: 'frontmatter' };                     // notes with `publish: true`, and what they embed

// A file in the vault, before reading it.
export interface VaultEntry {
  path: string;       // vault-relative, '/'-separated
  size: number;       // bytes
  mtime: number;      // ms; with size, the key of the hash cache
}

// The vault as the publish loop sees it. Obsidian's adapter in main.ts; the
// file system in the tests.
export interface VaultSource {
  list(): Promise<VaultEntry[]>;
  read(path: string): Promise<Uint8Array>;
  // For Scope 'frontmatter': whether the note says `publish: true`, and the
  // attachments it links or embeds (vault-relative paths).
  publishFlag?(path: string): Promise<boolean> | boolean;
  linkedAttachments?(path: string): string[];
}

export interface LocalFile { path: string; size: number; sha256: string }

export interface FileChanges {
  toSend: LocalFile[];   // new or changed, sorted by path
  added: string[];       // of toSend: absent on the server
  changed: string[];     // of toSend: another hash on the server
  unchanged: number;
}

export interface Plan {
  notes: FileChanges;
  attachments: FileChanges;
  toDelete: string[];    // notes and attachments on the server, gone locally; sorted
}

const kAttachmentExtensions = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'bmp', 'svg', 'webp', 'avif', 'mp3', 'wav', 'm4a',
  'ogg', 'flac', 'opus', 'mp4', 'webm', 'ogv', 'mov', 'mkv', 'pdf']);

// The CLI's skip rule: any path segment starting with '.' (.obsidian, .trash,
// .git, dot files) is never published.
export function isSkippedPath(path: string): boolean {
  return path.split('/').some((seg) => seg === '' || seg.startsWith('.'));
}

export function isNotePath(path: string): boolean { return path.endsWith('.md'); }

export function isAttachmentPath(path: string): boolean {
  if (path === 'publish.css') return true;  // the site's stylesheet (Obsidian Publish's convention)
  const slash = path.lastIndexOf('/'), dot = path.lastIndexOf('.');
  if (dot < 0 || dot < slash) return false;
  return kAttachmentExtensions.has(path.slice(dot + 1).toLowerCase());
}

function inFolders(path: string, folders: string[]): boolean {
  return folders.some((f) => {
    const dir = f.replace(/^\/+|\/+$/g, '');
    return dir === '' || path.startsWith(dir + '/');
  });
}

// Parses "publish: true" from a note's frontmatter (the plain `key: value`
// line form; main.ts uses Obsidian's metadata cache instead).
export function hasPublishFlag(text: string): boolean {
  const m = /^---\r?\n([\s\S]*?)\r?\n---(\r?\n|$)/.exec(text);
  return !!m && /^publish:\s*(true|yes)\s*$/im.test(m[1]);
}

// The notes and attachments `scope` selects among `entries`, sorted by path.
export async function selectFiles(entries: VaultEntry[], scope: Scope, source: VaultSource): Promise<VaultEntry[]> {
  const candidates = entries.filter((e) => !isSkippedPath(e.path) && (isNotePath(e.path) || isAttachmentPath(e.path)));
  let chosen: VaultEntry[];
  if (scope.kind === 'vault') {
    chosen = candidates;
  } else if (scope.kind === 'folders') {
    chosen = candidates.filter((e) => e.path === 'publish.css' || inFolders(e.path, scope.folders));
  } else {
    const byPath = new Map(candidates.map((e) => [e.path, e]));
    const picked = new Set<string>();
    for (const e of candidates) {
      if (!isNotePath(e.path)) continue;
      const flag = source.publishFlag ? await source.publishFlag(e.path)
        : hasPublishFlag(new TextDecoder().decode(await source.read(e.path)));
      if (!flag) continue;
      picked.add(e.path);
      for (const a of source.linkedAttachments?.(e.path) ?? []) if (byPath.has(a) && isAttachmentPath(a)) picked.add(a);
    }
    if (byPath.has('publish.css')) picked.add('publish.css');
    chosen = candidates.filter((e) => picked.has(e.path));
  }
  return chosen.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

// Lower-case hex SHA-256 (WebCrypto: Electron's and Node's global `crypto`).
export async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

// Hashes by (path, size, mtime), so a second diff reads only what changed.
export class HashCache {
  private entries = new Map<string, { size: number; mtime: number; sha256: string }>();

  async hash(e: VaultEntry, read: () => Promise<Uint8Array>): Promise<string> {
    const hit = this.entries.get(e.path);
    if (hit && hit.size === e.size && hit.mtime === e.mtime) return hit.sha256;
    const sha256 = await sha256Hex(await read());
    this.entries.set(e.path, { size: e.size, mtime: e.mtime, sha256 });
    return sha256;
  }
}

function diffFiles(local: LocalFile[], remote: RemoteFile[]): FileChanges {
  const remoteHash = new Map(remote.map((f) => [f.path, f.sha256.toLowerCase()]));
  const out: FileChanges = { toSend: [], added: [], changed: [], unchanged: 0 };
  for (const f of local) {
    const h = remoteHash.get(f.path);
    if (h === undefined) out.added.push(f.path);
    else if (h !== f.sha256.toLowerCase()) out.changed.push(f.path);
    else { out.unchanged++; continue; }
    out.toSend.push(f);
  }
  return out;
}

// Compares the local selection with the manifest: the server mirrors the
// selection, so a server file not selected any more is deleted.
export function diff(notes: LocalFile[], attachments: LocalFile[], manifest: Manifest): Plan {
  const present = new Set([...notes, ...attachments].map((f) => f.path));
  const toDelete = [...manifest.notes, ...manifest.attachments].map((f) => f.path).filter((p) => !present.has(p));
  return {
    notes: diffFiles(notes, manifest.notes),
    attachments: diffFiles(attachments, manifest.attachments),
    toDelete: [...new Set(toDelete)].sort(),
  };
}

export function planChanges(plan: Plan): number {
  return plan.notes.toSend.length + plan.attachments.toSend.length + plan.toDelete.length;
}

// "3 to add, 1 to change, 2 to delete" (notes and attachments together).
export function summarize(plan: Plan): string {
  const add = plan.notes.added.length + plan.attachments.added.length;
  const change = plan.notes.changed.length + plan.attachments.changed.length;
  if (add + change + plan.toDelete.length === 0) return 'in sync';
  return `${add} to add, ${change} to change, ${plan.toDelete.length} to delete`;
}

// Files over the server's advertised limits ("limits" in the manifest; 0 =
// not said): one message per file, naming it and both sizes.
export function oversized(notes: LocalFile[], attachments: LocalFile[], manifest: Manifest): string[] {
  const out: string[] = [];
  const check = (files: LocalFile[], max: number, kind: string) => {
    if (max <= 0) return;
    for (const f of files) {
      if (f.size > max) out.push(`${f.path}: ${kind} of ${f.size} bytes is over the server's limit of ${max} bytes; not published`);
    }
  };
  check(notes, manifest.limits.maxNoteBytes, 'note');
  check(attachments, manifest.limits.maxAttachmentBytes, 'attachment');
  return out;
}

// The CLI's deletion guard: refuses to delete every note when the selection
// holds none, and more than `confirmAbove` notes when that is over a quarter
// of the server's; null when the plan may go ahead without asking.
export function deletionGuard(plan: Plan, localNotes: number, manifest: Manifest, confirmAbove = 20): string | null {
  const notesDeleted = plan.toDelete.filter((p) => isNotePath(p)).length;
  if (plan.toDelete.length > 0 && localNotes === 0) {
    return `nothing is selected to publish; this would delete all ${plan.toDelete.length} files on the server`;
  }
  if (notesDeleted > confirmAbove && notesDeleted * 4 > manifest.notes.length) {
    return `this would delete ${notesDeleted} of the server's ${manifest.notes.length} notes`;
  }
  return null;
}

export interface BatchLimits {
  maxItems: number;   // notes, attachments and deletions per request (the CLI's 500)
  maxBytes: number;   // note bytes + attachment base64 bytes + deleted path bytes (the CLI's 8 MiB)
}
export const kDefaultBatchLimits: BatchLimits = { maxItems: 500, maxBytes: 8 << 20 };

export interface Batch { attachments: LocalFile[]; notes: LocalFile[]; deletes: string[]; bytes: number }

export function encodedSize(rawBytes: number): number { return Math.ceil(rawBytes / 3) * 4; }

const utf8Length = (s: string) => new TextEncoder().encode(s).length;

// Greedy, in order: attachments, then notes, then deletions, each kind
// filling the last batch of the kind before it (a note never travels before
// an attachment it embeds; a rename's delete and add share a batch when they
// fit). No batch exceeds the limits, except that one item bigger than
// maxBytes travels alone.
export function planBatches(plan: Plan, limits: BatchLimits = kDefaultBatchLimits): Batch[] {
  const batches: Batch[] = [];
  const place = (size: number): Batch => {
    const last = batches[batches.length - 1];
    const items = last ? last.attachments.length + last.notes.length + last.deletes.length : 0;
    if (last && items < limits.maxItems && last.bytes + size <= limits.maxBytes) { last.bytes += size; return last; }
    const b: Batch = { attachments: [], notes: [], deletes: [], bytes: size };
    batches.push(b);
    return b;
  };
  for (const a of plan.attachments.toSend) place(encodedSize(a.size)).attachments.push(a);
  for (const n of plan.notes.toSend) place(n.size).notes.push(n);
  for (const d of plan.toDelete) place(utf8Length(d)).deletes.push(d);
  return batches;
}

// Standard base64 with padding, without Buffer or btoa's Latin-1 detour.
export function base64(bytes: Uint8Array): string {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const parts: string[] = [];
  let chunk = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    chunk += abc[n >> 18] + abc[(n >> 12) & 63] + abc[(n >> 6) & 63] + abc[n & 63];
    if (chunk.length >= 8192) { parts.push(chunk); chunk = ''; }
  }
  if (i < bytes.length) {
    const n = (bytes[i] << 16) | ((i + 1 < bytes.length ? bytes[i + 1] : 0) << 8);
    chunk += abc[n >> 18] + abc[(n >> 12) & 63] + (i + 1 < bytes.length ? abc[(n >> 6) & 63] : '=') + '=';
  }
  parts.push(chunk);
  return parts.join('');
}

// The state of the selection against the server: what a publish would do.
export interface Status {
  manifest: Manifest;
  plan: Plan;
  notes: LocalFile[];
  attachments: LocalFile[];
  tooLarge: string[];     // oversized(): refused client-side
  guard: string | null;   // deletionGuard(): needs confirmation
}

// Lists, selects and hashes the vault, fetches the manifest and diffs.
// Rejects with the API's error (wrong token, server down) or a read error.
export async function computeStatus(api: FolioApi, source: VaultSource, scope: Scope, cache = new HashCache()): Promise<Status> {
  const manifest = await api.manifest();
  const entries = await selectFiles(await source.list(), scope, source);
  const notes: LocalFile[] = [], attachments: LocalFile[] = [];
  for (const e of entries) {
    const f = { path: e.path, size: e.size, sha256: await cache.hash(e, () => source.read(e.path)) };
    (isNotePath(e.path) ? notes : attachments).push(f);
  }
  const tooLarge = oversized(notes, attachments, manifest);
  // An oversized file is neither sent nor deleted from the server.
  const big = new Set(tooLarge.map((m) => m.slice(0, m.indexOf(': '))));
  const keep = (fs: LocalFile[]) => fs.filter((f) => !big.has(f.path));
  const plan = diff(keep(notes), keep(attachments), manifest);
  plan.toDelete = plan.toDelete.filter((d) => !big.has(d));
  return { manifest, plan, notes, attachments, tooLarge, guard: deletionGuard(plan, notes.length, manifest) };
}

export interface PublishResult {
  requests: number;
  version: number;
  sent: number;
  deleted: number;
  warnings: Map<string, string[]>;   // note path -> the server's warnings in the replies
  urls: Map<string, string>;         // note path -> site path
}

export interface PublishOptions {
  limits?: BatchLimits;
  confirmDeletes?: boolean;   // go ahead past the deletion guard
  onProgress?: (done: number, total: number) => void;
}

// Sends `status.plan`: one plain push for one batch; more batches are staged
// on the server and applied by one commit, as one version (as the CLI does),
// so a failed upload applies nothing. Rejects, changing nothing, when a file
// is over the limits or the guard objects without confirmDeletes; rejects
// with the API's error when a request fails.
export async function publish(api: FolioApi, source: VaultSource, status: Status, opts: PublishOptions = {}): Promise<PublishResult> {
  if (status.tooLarge.length > 0) throw new Error(status.tooLarge.join('\n'));
  if (status.guard && !opts.confirmDeletes) throw new Error(status.guard + '; confirm to go ahead');
  const batches = planBatches(status.plan, opts.limits ?? kDefaultBatchLimits);
  const result: PublishResult = { requests: 0, version: status.manifest.version, sent: 0, deleted: 0, warnings: new Map(), urls: new Map() };
  const account = (reply: PushReply) => {
    result.version = reply.version;
    for (const n of reply.notes) {
      if (n.url) result.urls.set(n.path, n.url);
      if (n.warnings.length) result.warnings.set(n.path, n.warnings);
    }
  };
  const stage = batches.length > 1 ? randomKey() : '';
  let staged = 0;
  for (const [i, b] of batches.entries()) {
    const body = await buildBody(source, b);
    try {
      if (!stage) account(await api.push(body));
      else {
        const applied = await api.stageBatch(stage, i, body);
        if (applied) account(applied); else staged++;
      }
    } catch (e) {
      if (stage && e instanceof Error) e.message += ` (${staged} of ${batches.length} batches were staged and nothing was applied; publish again)`;
      throw e;
    }
    result.requests++;
    result.sent += b.attachments.length + b.notes.length;
    result.deleted += b.deletes.length;
    opts.onProgress?.(result.requests, batches.length + (stage ? 1 : 0));
  }
  if (staged > 0) {
    account(await api.commitStage(stage));
    result.requests++;
    opts.onProgress?.(result.requests, result.requests);
  }
  return result;
}

// The request body of one batch: files read only now, attachments in base64.
async function buildBody(source: VaultSource, b: Batch): Promise<PushBody> {
  const body: PushBody = { notes: [], attachments: [], delete: b.deletes };
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (const a of b.attachments) body.attachments.push({ path: a.path, data: base64(await source.read(a.path)) });
  for (const n of b.notes) {
    let content: string;
    try { content = decoder.decode(await source.read(n.path)); } catch { throw new Error(`${n.path}: content is not valid UTF-8; not published`); }
    body.notes.push({ path: n.path, content });
  }
  return body;
}
