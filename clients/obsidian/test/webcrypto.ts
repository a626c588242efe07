// Node 18 (Debian 12's) has WebCrypto only as require('node:crypto').webcrypto,
// not as the global `crypto` that Obsidian and Node 19+ provide. Imported first
// by every test file.
import { webcrypto } from 'node:crypto';

if (!(globalThis as { crypto?: unknown }).crypto) Object.defineProperty(globalThis, 'crypto', { value: webcrypto });
