// A vault on disk as the plugin's VaultSource (Obsidian's adapter stands
// here in the app), with helpers to write, rename and delete files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { VaultEntry, VaultSource } from '../src/sync';

export class DiskVault implements VaultSource {
  readonly root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-plugin-vault-'));

  async list(): Promise<VaultEntry[]> {
    const out: VaultEntry[] = [];
    const walk = (dir: string, rel: string) => {
      for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
        const r = rel ? rel + '/' + d.name : d.name;
        if (d.isDirectory()) walk(path.join(dir, d.name), r);
        else if (d.isFile()) {
          const st = fs.statSync(path.join(dir, d.name));
          out.push({ path: r, size: st.size, mtime: st.mtimeMs });
        }
      }
    };
    walk(this.root, '');
    return out;
  }

  async read(p: string): Promise<Uint8Array> { return new Uint8Array(fs.readFileSync(path.join(this.root, p))); }

  write(p: string, data: string | Uint8Array): void {
    fs.mkdirSync(path.dirname(path.join(this.root, p)), { recursive: true });
    fs.writeFileSync(path.join(this.root, p), data);
  }

  rename(from: string, to: string): void {
    fs.mkdirSync(path.dirname(path.join(this.root, to)), { recursive: true });
    fs.renameSync(path.join(this.root, from), path.join(this.root, to));
  }

  remove(p: string): void { fs.rmSync(path.join(this.root, p)); }

  dispose(): void { fs.rmSync(this.root, { recursive: true, force: true }); }
}
