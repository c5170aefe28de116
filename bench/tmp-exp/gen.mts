import { createHash } from 'node:crypto';
import { generateEventLines } from '../generator.js';
const h = createHash('sha256'); let n = 0;
const shape = undefined;
const t = performance.now();
for await (const line of generateEventLines({ seed: 42, rows: 300000, endDate: '2026-11-20', days: 30, domain: 'x.test', ...(shape ? { shape } : {}) })) { h.update(line); n++; }
console.log(n, h.digest('hex').slice(0, 16), performance.now() - t);
