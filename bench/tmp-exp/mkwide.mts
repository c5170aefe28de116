import { join } from 'node:path';
import { ensureDataset } from '../dataset.js';
import { namedShape } from '../generator.js';
const rows = Number(process.argv[2] ?? 10_000_000);
await ensureDataset({ seed: 42, rows, endDate: '2026-11-20', days: 90, domain: 'shop.bench.example', shape: namedShape('wide', rows) }, join(import.meta.dirname, '../../.bench/data'), console.log);
