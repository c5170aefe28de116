import { readLines } from '../../local/store/ndjson-lines.js';
import { checkEventLine } from '../../shared/events/event-validation.js';
const lines: string[] = [];
for await (const line of readLines('/work/main/.bench/import/events-seed3-1000000.ndjson')) { if (typeof line === 'string') lines.push(line); if (lines.length >= 300000) break; }
let t = performance.now();
for (const l of lines) JSON.parse(l);
console.log('parse', performance.now() - t);
t = performance.now();
for (const l of lines) checkEventLine(l);
console.log('check', performance.now() - t);
