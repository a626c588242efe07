// The Obsidian glue: settings, commands, the diff modal, the status-bar item
// and the server's warnings for the open note. The decisions (what to send,
// in which batches) live in sync.ts; the HTTP in api.ts.

import { App, Modal, Notice, Plugin, PluginSettingTab, Setting, TFile, debounce, requestUrl } from 'obsidian';
import { ApiError, FolioApi, HttpFn, Manifest, noteSiteUrl } from './api';
import { HashCache, Scope, Status, VaultEntry, VaultSource, computeStatus, isAttachmentPath, planChanges, publish, summarize } from './sync';

interface FolioSettings {
  serverUrl: string;                           // folio-ingest, e.g. https://ingest.example.com
  token: string;                               // the site's push token
  scope: 'vault' | 'folders' | 'frontmatter';  // what to publish
  folders: string;                             // for 'folders': one vault folder a line
  publishOnSave: boolean;                      // publish a few seconds after a save, else by command only
}

const DEFAULT_SETTINGS: FolioSettings = { serverUrl: '', token: '', scope: 'vault', folders: '', publishOnSave: false };
const kSaveDebounceMs = 2000;   // Obsidian saves every few seconds while typing

// Obsidian's requestUrl: not subject to CORS, unlike fetch in the app.
const obsidianHttp: HttpFn = async (req) => {
  const r = await requestUrl({ url: req.url, method: req.method, headers: req.headers, body: req.body, throw: false });
  return { status: r.status, text: r.text };
};

function errorText(e: unknown): string {
  return e instanceof ApiError || e instanceof Error ? e.message : String(e);
}

export default class FolioPlugin extends Plugin {
  settings: FolioSettings = { ...DEFAULT_SETTINGS };
  private statusEl!: HTMLElement;
  private cache = new HashCache();
  private serverManifest: Manifest | null = null;
  private busy = false;
  private dirty = false;   // a change arrived while a publish ran
  // The warnings of the last publish's replies, per note path: shown while
  // the manifest does not carry "warnings" (servers before issue 14).
  private replyWarnings = new Map<string, string[]>();

  async onload() {
    this.settings = { ...DEFAULT_SETTINGS, ...(await this.loadData()) };
    this.statusEl = this.addStatusBarItem();
    this.statusEl.addClass('folio-status');
    this.statusEl.onClickEvent(() => this.openPublishModal());
    this.addSettingTab(new FolioSettingTab(this.app, this));
    this.addCommand({ id: 'publish-changes', name: 'Publish changes', callback: () => this.openPublishModal() });
    this.addCommand({
      id: 'open-on-site', name: 'Open this note on the site',
      checkCallback: (checking) => {
        const f = this.app.workspace.getActiveFile();
        if (!f || f.extension !== 'md') return false;
        if (!checking) void this.openOnSite(f);
        return true;
      },
    });
    this.addCommand({
      id: 'show-warnings', name: "Show the server's warnings for this note",
      checkCallback: (checking) => {
        const f = this.app.workspace.getActiveFile();
        if (!f || f.extension !== 'md') return false;
        if (!checking) this.showWarnings(f, true);
        return true;
      },
    });
    this.registerEvent(this.app.workspace.on('file-open', (f) => { if (f) this.showWarnings(f, false); }));
    const onChange = debounce(() => void this.onVaultChanged(), kSaveDebounceMs, true);
    for (const ev of ['modify', 'create', 'delete', 'rename'] as const) {
      this.registerEvent(this.app.vault.on(ev as 'modify', () => onChange()));
    }
    this.app.workspace.onLayoutReady(() => void this.refresh());
  }

  async saveSettings() {
    await this.saveData(this.settings);
    void this.refresh();
  }

  api(): FolioApi { return new FolioApi(this.settings.serverUrl, this.settings.token, obsidianHttp); }

  scope(): Scope {
    if (this.settings.scope === 'folders') {
      return { kind: 'folders', folders: this.settings.folders.split('\n').map((s) => s.trim()).filter(Boolean) };
    }
    return { kind: this.settings.scope };
  }

  source(): VaultSource {
    const vault = this.app.vault, cache = this.app.metadataCache;
    return {
      list: async (): Promise<VaultEntry[]> => vault.getFiles().map((f) => ({ path: f.path, size: f.stat.size, mtime: f.stat.mtime })),
      read: async (path) => {
        const f = vault.getAbstractFileByPath(path);
        if (!(f instanceof TFile)) throw new Error(`${path}: gone from the vault`);
        return new Uint8Array(await vault.readBinary(f));
      },
      publishFlag: (path) => {
        const f = vault.getAbstractFileByPath(path);
        const fm = f instanceof TFile ? cache.getFileCache(f)?.frontmatter : undefined;
        return fm?.publish === true || fm?.publish === 'true';
      },
      linkedAttachments: (path) => Object.keys(cache.resolvedLinks[path] ?? {}).filter(isAttachmentPath),
    };
  }

  private setStatus(text: string, cls: 'ok' | 'pending' | 'error', title = '') {
    this.statusEl.setText('folio: ' + text);
    this.statusEl.setAttr('title', title || text);
    this.statusEl.removeClass('folio-ok', 'folio-pending', 'folio-error');
    this.statusEl.addClass('folio-' + cls);
  }

  private configured(): boolean {
    if (this.settings.serverUrl && this.settings.token) return true;
    this.setStatus('not set up', 'error', "Set the server URL and token in folio's settings");
    return false;
  }

  // Diffs against the server and shows the result in the status bar.
  async refresh(): Promise<Status | null> {
    if (!this.configured()) return null;
    try {
      const st = await computeStatus(this.api(), this.source(), this.scope(), this.cache);
      this.serverManifest = st.manifest;
      const n = planChanges(st.plan);
      if (st.tooLarge.length) this.setStatus(`${st.tooLarge.length} too large`, 'error', st.tooLarge.join('\n'));
      else if (n === 0) this.setStatus('in sync', 'ok', `version ${st.manifest.version}`);
      else this.setStatus(`${n} changes`, 'pending', summarize(st.plan));
      return st;
    } catch (e) {
      this.setStatus('error', 'error', errorText(e));
      return null;
    }
  }

  private async onVaultChanged() {
    if (!this.settings.publishOnSave) { if (!this.busy) void this.refresh(); return; }
    if (this.busy) { this.dirty = true; return; }
    const st = await this.refresh();
    if (!st || planChanges(st.plan) === 0) return;
    if (st.guard || st.tooLarge.length) {
      new Notice(`folio: not published on save: ${st.guard ?? st.tooLarge[0]}. Use "Publish changes".`, 10000);
      return;
    }
    await this.runPublish(st, false);
  }

  async runPublish(st: Status, confirmDeletes: boolean): Promise<void> {
    this.busy = true;
    this.setStatus('publishing…', 'pending');
    try {
      const r = await publish(this.api(), this.source(), st, {
        confirmDeletes, onProgress: (done, total) => this.setStatus(`publishing ${done}/${total}…`, 'pending'),
      });
      for (const n of st.plan.notes.toSend) this.replyWarnings.delete(n.path);
      for (const p of st.plan.toDelete) this.replyWarnings.delete(p);
      for (const [p, w] of r.warnings) this.replyWarnings.set(p, w);
      const warned = [...r.warnings.entries()];
      let msg = `folio: published ${r.sent} files, deleted ${r.deleted} (version ${r.version})`;
      if (warned.length) msg += `\n${warned.length} notes with warnings:\n` + warned.slice(0, 5).map(([p, w]) => `${p}: ${w[0]}`).join('\n');
      new Notice(msg, warned.length ? 15000 : 5000);
    } catch (e) {
      new Notice('folio: publish failed: ' + errorText(e), 15000);
      this.setStatus('error', 'error', errorText(e));
      this.busy = false;
      return;
    }
    this.busy = false;
    await this.refresh();
    if (this.dirty) { this.dirty = false; void this.onVaultChanged(); }
  }

  async openPublishModal() {
    if (!this.configured()) { new Notice("folio: set the server URL and token in folio's settings"); return; }
    this.setStatus('checking…', 'pending');
    const st = await this.refresh();
    if (!st) { new Notice('folio: ' + this.statusEl.getAttr('title')); return; }
    new PublishModal(this.app, this, st).open();
  }

  async openOnSite(f: TFile) {
    if (!this.configured()) return;
    try {
      const m = this.serverManifest ?? (await this.api().manifest());
      const url = noteSiteUrl(m, this.settings.serverUrl, f.path);
      if (!url) { new Notice(`folio: ${f.path} is not on the site yet; publish it first`); return; }
      if (!m.siteUrl) new Notice("folio: the server does not say its site URL (ingest's --base-url); opening it on the server URL's host");
      window.open(url);
    } catch (e) {
      new Notice('folio: ' + errorText(e), 10000);
    }
  }

  // The warnings the server holds for `f` (manifest "warnings", else those of
  // the last publish's reply), as a notice.
  showWarnings(f: TFile, always: boolean) {
    const held = this.serverManifest?.notes.find((n) => n.path === f.path)?.warnings ?? [];
    const w = held.length ? held : this.replyWarnings.get(f.path) ?? [];
    if (w.length) new Notice(`folio: ${f.basename}:\n` + w.slice(0, 10).join('\n'), 10000);
    else if (always) new Notice(this.serverManifest ? `folio: no warnings for ${f.basename}` : 'folio: not connected to the server');
  }
}

class PublishModal extends Modal {
  constructor(app: App, private plugin: FolioPlugin, private st: Status) { super(app); }

  onOpen() {
    const { contentEl, st } = this;
    contentEl.addClass('folio-modal');
    contentEl.createEl('h2', { text: 'Publish changes' });
    contentEl.createEl('p', { text: `Server version ${st.manifest.version}: ${summarize(st.plan)}.` });
    const list = (title: string, paths: string[]) => {
      if (!paths.length) return;
      contentEl.createEl('h4', { text: `${title} (${paths.length})` });
      const ul = contentEl.createEl('ul', { cls: 'folio-paths' });
      for (const p of paths.slice(0, 200)) ul.createEl('li', { text: p });
      if (paths.length > 200) ul.createEl('li', { text: `… and ${paths.length - 200} more` });
    };
    list('Add', [...st.plan.attachments.added, ...st.plan.notes.added]);
    list('Change', [...st.plan.attachments.changed, ...st.plan.notes.changed]);
    list('Delete', st.plan.toDelete);
    if (st.tooLarge.length) {
      contentEl.createEl('h4', { text: 'Too large (not published)' });
      const ul = contentEl.createEl('ul', { cls: 'folio-paths folio-error' });
      for (const m of st.tooLarge) ul.createEl('li', { text: m });
    }
    if (st.guard) contentEl.createEl('p', { text: `Careful: ${st.guard}.`, cls: 'folio-error' });
    const buttons = new Setting(contentEl);
    buttons.addButton((b) => b.setButtonText('Cancel').onClick(() => this.close()));
    if (planChanges(st.plan) > 0 && st.tooLarge.length === 0) {
      buttons.addButton((b) => {
        b.setButtonText(st.guard ? 'Publish, deleting these' : 'Publish').onClick(() => {
          this.close();
          void this.plugin.runPublish(st, true);
        });
        if (st.guard) b.setWarning(); else b.setCta();
      });
    }
  }

  onClose() { this.contentEl.empty(); }
}

class FolioSettingTab extends PluginSettingTab {
  constructor(app: App, private plugin: FolioPlugin) { super(app, plugin); }

  display() {
    const { containerEl, plugin } = this;
    const s = plugin.settings;
    containerEl.empty();
    new Setting(containerEl).setName('Server URL').setDesc('The folio-ingest server, e.g. https://ingest.example.com')
      .addText((t) => t.setPlaceholder('https://…').setValue(s.serverUrl).onChange(async (v) => { s.serverUrl = v.trim(); await plugin.saveSettings(); }));
    new Setting(containerEl).setName('Token').setDesc("The site's push token (kept in this plugin's data.json in the vault)")
      .addText((t) => {
        t.inputEl.type = 'password';
        t.setValue(s.token).onChange(async (v) => { s.token = v.trim(); await plugin.saveSettings(); });
      });
    new Setting(containerEl).setName('What to publish')
      .setDesc('Files not selected are deleted from the site. Dot folders (.obsidian, .trash) are never published.')
      .addDropdown((d) => d.addOptions({ vault: 'The whole vault', folders: 'Some folders', frontmatter: 'Notes with publish: true' })
        .setValue(s.scope).onChange(async (v) => { s.scope = v as FolioSettings['scope']; await plugin.saveSettings(); this.display(); }));
    if (s.scope === 'folders') {
      new Setting(containerEl).setName('Folders').setDesc('One vault folder a line; everything under them is published')
        .addTextArea((t) => t.setValue(s.folders).onChange(async (v) => { s.folders = v; await plugin.saveSettings(); }));
    }
    new Setting(containerEl).setName('Publish on save')
      .setDesc(`Publish ${kSaveDebounceMs / 1000} s after the last change; off: only with "Publish changes"`)
      .addToggle((t) => t.setValue(s.publishOnSave).onChange(async (v) => { s.publishOnSave = v; await plugin.saveSettings(); }));
  }
}
