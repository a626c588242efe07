// The few pieces of Obsidian's API that src/main.ts uses, for test/main.test.ts:
// enough to load the plugin in Node and drive its commands. The plugin's
// HTTP still goes to the real folio-ingest (requestUrl over Node's fetch).
/* eslint-disable @typescript-eslint/no-explicit-any */

export const notices: string[] = [];
export class Notice { constructor(message: string) { notices.push(message); } }

export class TFile {
  stat: { size: number; mtime: number; ctime: number };
  constructor(public path: string, size: number, mtime: number) { this.stat = { size, mtime, ctime: mtime }; }
  get extension(): string { return this.path.slice(this.path.lastIndexOf('.') + 1); }
  get basename(): string { return this.path.slice(this.path.lastIndexOf('/') + 1).replace(/\.[^.]*$/, ''); }
}

export class StubElement {
  text = '';
  attrs: Record<string, string> = {};
  classes = new Set<string>();
  setText(t: string) { this.text = t; }
  setAttr(k: string, v: string) { this.attrs[k] = v; }
  getAttr(k: string) { return this.attrs[k] ?? null; }
  addClass(...c: string[]) { for (const x of c) this.classes.add(x); }
  removeClass(...c: string[]) { for (const x of c) this.classes.delete(x); }
  onClickEvent() { /* not clicked in tests */ }
  createEl() { return new StubElement(); }
  empty() { /* nothing */ }
}

export class Plugin {
  statusBar = new StubElement();
  commands: { id: string; callback?: () => unknown; checkCallback?: (checking: boolean) => boolean | void }[] = [];
  data: unknown = null;
  constructor(public app: any, public manifest: any) {}
  async loadData() { return this.data; }
  async saveData(d: unknown) { this.data = d; }
  addStatusBarItem() { return this.statusBar; }
  addSettingTab() { /* not shown */ }
  addCommand(c: any) { this.commands.push(c); return c; }
  registerEvent() { /* events are not fired in tests */ }
}

export class PluginSettingTab { containerEl = new StubElement(); constructor(public app: any, public plugin: any) {} }
export class Modal {
  static opened: Modal[] = [];
  contentEl = new StubElement();
  constructor(public app: any) {}
  open() { Modal.opened.push(this); }
  close() { /* nothing */ }
}
export class Setting { constructor() { /* not shown */ } }
export class App {}

export function debounce<T extends (...a: any[]) => unknown>(fn: T): T { return fn; }

export async function requestUrl(r: { url: string; method: string; headers: Record<string, string>; body?: string }) {
  const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body });
  return { status: res.status, text: await res.text() };
}
