// The Obsidian glue (src/main.ts) loaded in Node with test/obsidian-stub.ts
// standing in for the app, against a real nats-server + folio-ingest +
// folio-edge: the status bar (N changes, in sync, error), "Publish changes"
// through its modal, the reply's warnings for a note, "Open this note on the
// site". Skipped with a message when the binaries or nats-server are missing.
import './webcrypto';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import FolioPlugin from '../src/main';
import { Modal, notices, Plugin, TFile } from './obsidian-stub';
import { Cluster, kToken, missing, waitFor } from './cluster';
import { DiskVault } from './vault';

const why = missing();

// Obsidian's vault over a DiskVault.
function stubApp(vault: DiskVault) {
  const file = (p: string) => {
    const full = path.join(vault.root, p);
    if (!fs.existsSync(full)) return null;
    const st = fs.statSync(full);
    return new TFile(p, st.size, st.mtimeMs);
  };
  let active: TFile | null = null;
  return {
    setActive(p: string) { active = file(p); },
    vault: {
      getFiles: () => [] as TFile[],
      getAbstractFileByPath: file,
      readBinary: async (f: TFile) => { const b = fs.readFileSync(path.join(vault.root, f.path)); return b.buffer.slice(b.byteOffset, b.byteOffset + b.length); },
      on: () => ({}),
    },
    metadataCache: { getFileCache: () => null, resolvedLinks: {} },
    workspace: { on: () => ({}), onLayoutReady: () => {}, getActiveFile: () => active },
  };
}

describe('the plugin in a stand-in Obsidian against a real folio', { skip: why || false }, () => {
  const cluster = new Cluster();
  const vault = new DiskVault();
  const app = stubApp(vault);
  let plugin: FolioPlugin;
  const status = () => (plugin as unknown as Plugin).statusBar;
  const opened: string[] = [];

  before(async () => {
    await cluster.start();
    (globalThis as any).window = { open: (u: string) => opened.push(u) };
    app.vault.getFiles = () => ['A.md', 'B.md', '.obsidian/app.json'].map((p) => app.vault.getAbstractFileByPath(p)!);
    vault.write('A.md', '# A\n\nLinks [[Missing note]].\n');
    vault.write('B.md', '# B\n');
    vault.write('.obsidian/app.json', '{}');
    plugin = new FolioPlugin(app as any, { id: 'folio' } as any);
    (plugin as unknown as Plugin).data = { serverUrl: cluster.ingestUrl, token: kToken, scope: 'vault' };
    await plugin.onload();
  });
  after(async () => { await cluster.stop(); vault.dispose(); });

  it('status bar counts the changes; Publish changes shows the diff and publishes', async () => {
    await plugin.refresh();
    assert.equal(status().text, 'folio: 2 changes');
    assert.equal(status().attrs.title, '2 to add, 0 to change, 0 to delete');
    const cmd = (plugin as unknown as Plugin).commands.find((c) => c.id === 'publish-changes')!;
    await cmd.callback!();
    const modal = Modal.opened.pop() as any;
    assert.ok(modal, 'the modal opened');
    assert.deepEqual(modal.st.plan.notes.added, ['A.md', 'B.md']);
    await plugin.runPublish(modal.st, false);
    assert.equal(status().text, 'folio: in sync');
    assert.match(notices[notices.length - 1], /published 2 files, deleted 0/);
    await waitFor(cluster.edgeUrl + '/a', 200);
  });

  it("the server's warnings for the open note; Open this note on the site", async () => {
    app.setActive('A.md');
    const show = (plugin as unknown as Plugin).commands.find((c) => c.id === 'show-warnings')!;
    assert.equal(show.checkCallback!(false), true);
    assert.match(notices[notices.length - 1], /A:\n.*Missing note/);
    const open = (plugin as unknown as Plugin).commands.find((c) => c.id === 'open-on-site')!;
    open.checkCallback!(false);
    for (let i = 0; i < 100 && !opened.length; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(opened[0], new URL(cluster.ingestUrl).origin + '/a');
  });

  it('a wrong token shows as an error in the status bar, with the reason', async () => {
    plugin.settings.token = 'wrong';
    await plugin.refresh();
    assert.equal(status().text, 'folio: error');
    assert.match(status().attrs.title, /rejected the token/);
    plugin.settings.token = kToken;
  });
});
