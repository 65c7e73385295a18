import { startRuntime } from '../src/runtime.ts';
import { makeTempDir } from './suite/temp-dir.ts';
const keyed = process.argv[2] === 'keyed';
const runtime = await startRuntime({ dataDir: makeTempDir('prof'), recall: false });
const m = (i: number) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i}: ${'the agent remembers what the user said about the project deadline '.repeat(2)}` }) as const;
const t0 = performance.now();
for (let r = 0; r < 20; r++) {
  await Promise.all(Array.from({ length: 100 }, async (_, c) => { for (let i = 1; i <= 20; i++) await runtime.memory.append(`r${r}-${c}`, [{ message: m(i) }], keyed ? { idempotencyKey: `r${r}.${c}.${i}` } : undefined); }));
}
console.log(keyed ? 'keyed' : 'plain', (40000 / ((performance.now() - t0) / 1000)).toFixed(0));
await runtime.stop();
