// folio's push API as the plugin speaks it: GET /api/v1/manifest and
// POST /api/v1/push with the site's token (the example vault's
// "Reference/HTTP API.md"; the CLI's cli/src/api.cc and wire.cc).
//
// The HTTP call is injected: Obsidian's requestUrl in main.ts (no CORS), Node's
// fetch in the tests. Every failure rejects with an ApiError whose message a
// user can act on; nothing else escapes.

export interface HttpRequest { url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }
export interface HttpResponse { status: number; text: string }
// Resolves with any HTTP status; rejects only when no answer came (refused,
// DNS, timeout).
export type HttpFn = (req: HttpRequest) => Promise<HttpResponse>;

export interface RemoteFile { path: string; sha256: string; url: string; warnings: string[] }

export interface Manifest {
  version: number;
  site: string;
  siteUrl: string;          // "site_url": the site's public base URL; "" when unset or not said
  limits: { maxNoteBytes: number; maxAttachmentBytes: number };   // 0: not said
  notes: RemoteFile[];
  attachments: RemoteFile[];
}

export interface PushBody {
  notes: { path: string; content: string }[];
  attachments: { path: string; data: string }[];
  delete: string[];
}

export interface PushReply {
  version: number;
  notes: { path: string; url: string; warnings: string[] }[];
}

export class ApiError extends Error {
  constructor(message: string, readonly status = 0) { super(message); this.name = 'ApiError'; }
}

const kTimeoutMs = 30000;

// Node's (and Electron's) fetch as an HttpFn, with a timeout.
export const fetchHttp: HttpFn = async (req) => {
  const r = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(kTimeoutMs) });
  return { status: r.status, text: await r.text() };
};

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

function files(v: unknown): RemoteFile[] {
  if (!Array.isArray(v)) return [];
  return v.filter((f) => f && typeof f.path === 'string').map((f) => ({
    path: f.path, sha256: typeof f.sha256 === 'string' ? f.sha256 : '', url: typeof f.url === 'string' ? f.url : '',
    warnings: strings(f.warnings),
  }));
}

export function parseManifest(text: string): Manifest {
  let j: any;
  try { j = JSON.parse(text); } catch { throw new ApiError('the manifest is not JSON: is the server URL a folio-ingest server?'); }
  if (!j || typeof j !== 'object' || typeof j.version !== 'number' || !Array.isArray(j.notes)) {
    throw new ApiError('the manifest lacks "version" or "notes": is the server URL a folio-ingest server?');
  }
  const limit = (n: unknown) => (typeof n === 'number' && n > 0 ? n : 0);
  return {
    version: j.version,
    site: typeof j.site === 'string' ? j.site : '',
    siteUrl: typeof j.site_url === 'string' ? j.site_url : '',
    limits: { maxNoteBytes: limit(j.limits?.max_note_bytes), maxAttachmentBytes: limit(j.limits?.max_attachment_bytes) },
    notes: files(j.notes),
    attachments: files(j.attachments),
  };
}

export function parsePushReply(text: string): PushReply {
  let j: any;
  try { j = JSON.parse(text); } catch { throw new ApiError('the push reply is not JSON'); }
  const notes = Array.isArray(j?.notes) ? j.notes : [];
  return {
    version: typeof j?.version === 'number' ? j.version : 0,
    notes: notes.filter((n: any) => n && typeof n.path === 'string').map((n: any) => ({
      path: n.path, url: typeof n.url === 'string' ? n.url : '', warnings: strings(n.warnings),
    })),
  };
}

// The server's {"error":{"message":...}} text, on one line, bounded.
function serverMessage(text: string): string {
  try {
    const m = JSON.parse(text)?.error?.message;
    if (typeof m === 'string') return m.replace(/\s+/g, ' ').slice(0, 500);
  } catch { /* not JSON */ }
  return '';
}

// The user-facing error for a non-200 answer (the CLI's ErrorForResponse).
export function errorForResponse(server: string, path: string, status: number, text: string): ApiError {
  const msg = serverMessage(text);
  const detail = msg ? ': ' + msg : '';
  if (status === 401) return new ApiError("the server rejected the token (check the token in folio's settings)", status);
  if (status === 404 && !msg) return new ApiError(`${server}${path} not found (HTTP 404): is the server URL a folio-ingest server?`, status);
  if (status === 413) return new ApiError('the server refused a request as too large' + detail, status);
  if (status >= 400 && status < 500) return new ApiError(`the server rejected ${server}${path} (HTTP ${status})${detail}`, status);
  return new ApiError(`the server failed on ${server}${path} (HTTP ${status})${detail}`, status);
}

export function randomKey(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

export class FolioApi {
  readonly server: string;

  // REQUIRES: nothing; a bad URL or an empty token fails on the first call.
  constructor(server: string, private readonly token: string, private readonly http: HttpFn = fetchHttp) {
    this.server = server.trim().replace(/\/+$/, '');
  }

  private async call(method: 'GET' | 'POST', path: string, body?: string, extra: Record<string, string> = {}): Promise<string> {
    if (!/^https?:\/\/[^/]/.test(this.server)) throw new ApiError(`the server URL '${this.server}' is not an http(s) URL (set it in folio's settings)`);
    if (!this.token) throw new ApiError("no token (set it in folio's settings)");
    const headers: Record<string, string> = { Accept: 'application/json', Authorization: 'Bearer ' + this.token, ...extra };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let r: HttpResponse;
    try {
      r = await this.http({ url: this.server + path, method, headers, body });
    } catch (e) {
      const why = e instanceof Error ? ((e as any).cause?.message ?? e.message) : String(e);
      throw new ApiError(`cannot reach ${this.server}: ${why}`);
    }
    if (r.status !== 200) throw errorForResponse(this.server, path, r.status, r.text);
    return r.text;
  }

  async manifest(): Promise<Manifest> { return parseManifest(await this.call('GET', '/api/v1/manifest')); }

  // One push; the Idempotency-Key lets the server drop a repeat of it.
  async push(body: PushBody): Promise<PushReply> {
    return parsePushReply(await this.call('POST', '/api/v1/push', JSON.stringify(body), { 'Idempotency-Key': randomKey() }));
  }

  // One batch of a staged push (stored by the server until the commit).
  // Resolves null when staged; a push reply when the server has no staging
  // and applied the batch as a plain push.
  async stageBatch(stage: string, batch: number, body: PushBody): Promise<PushReply | null> {
    const text = await this.call('POST', `/api/v1/push?stage=${stage}&batch=${batch}`, JSON.stringify(body));
    let j: any;
    try { j = JSON.parse(text); } catch { throw new ApiError('the staged batch reply is not JSON'); }
    return j && typeof j === 'object' && 'stage' in j ? null : parsePushReply(text);
  }

  // Applies every staged batch of `stage` as one push (one version).
  async commitStage(stage: string): Promise<PushReply> {
    return parsePushReply(await this.call('POST', `/api/v1/push/commit?stage=${stage}`, '', { 'Idempotency-Key': randomKey() }));
  }
}

// The page of a note on the site: the manifest's site_url (ingest's
// --base-url) plus the note's url; without a site_url, the server URL's
// origin, which is right when ingest and edge sit behind one host.
export function noteSiteUrl(manifest: Manifest, server: string, notePath: string): string | null {
  const n = manifest.notes.find((f) => f.path === notePath);
  if (!n || !n.url) return null;
  let base = manifest.siteUrl.replace(/\/+$/, '');
  if (!base) {
    try { base = new URL(server).origin; } catch { return null; }
  }
  return base + n.url;
}
