import { open } from 'lmdb';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const noSync = process.argv.includes('--nosync');
const dir = mkdtempSync(join(tmpdir(), 'lcx-'));
const root = open({ path: dir, maxDbs: 8, noSync });
const db = root.openDB<any, any>('messages', { encoding: 'json' });
const kdb = root.openDB<any, any>('keys', { encoding: 'json' });
const bdb = root.openDB<any, any>('messages', { encoding: 'binary' });
const msg = { ts: new Date().toISOString(), meta: {}, message: { role: 'user', content: 'message: ' + 'the agent remembers what the user said about the project deadline '.repeat(2) } };
type V = 'plain' | 'keyed' | 'putonly' | 'condonly' | 'compact' | 'sepdb';
const last = new Map<string, number>();
function write(v: V, c: string, k: string): Promise<unknown> {
  const id = (last.get(c) ?? 0) + 1; last.set(c, id);
  let keyCheck: Promise<boolean> | undefined;
  const kd = v === 'sepdb' ? kdb : db;
  const puts = () => { db.put([c, id], msg); if (v === 'keyed' || v === 'putonly' || v === 'sepdb') kd.put([c, '\u0001' + k], { firstId: id, count: 1, at: Date.now() });
    if (v === 'compact') { const b = Buffer.allocUnsafe(16); b.writeUInt32LE(id, 0); b.writeUInt32LE(1, 4); b.writeDoubleLE(Date.now(), 8); bdb.put([c, '\u0001' + k], b); } };
  let body = puts;
  if (v === 'keyed' || v === 'condonly' || v === 'compact' || v === 'sepdb') body = () => { keyCheck = kd.ifNoExists([c, '\u0001' + k], puts); };
  const committed = db.ifNoExists([c, id], body);
  return committed.then((w) => { if (!w) throw new Error('conflict'); const f = () => db.flushed; return keyCheck === undefined ? f() : keyCheck.then((x) => { if (!x) throw new Error('taken'); return f(); }); });
}
async function run(v: V, tag: string) {
  const started = performance.now();
  await Promise.all(Array.from({ length: 100 }, async (_, c) => { for (let i = 0; i < 20; i++) await write(v, `${tag}-${c}`, `${tag}.${c}.${i}`); }));
  return 2000 / ((performance.now() - started) / 1000);
}
const vs: V[] = ['plain', 'keyed', 'putonly', 'condonly', 'compact', 'sepdb'];
const ratios: Record<string, number[]> = {};
for (let r = 0; r < 31; r++) { const order = r % 2 ? [...vs].reverse() : vs; const t: Record<string, number> = {}; for (const v of order) t[v] = await run(v, `${v}${r}`); for (const v of vs) (ratios[v] ??= []).push(t[v] / t.plain); }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(noSync ? 'nosync' : 'durable', vs.map((v) => `${v} ${med(ratios[v]).toFixed(3)}`).join('  '));
await root.close(); rmSync(dir, { recursive: true, force: true });
