// Imported first by run.ts and derived-ab.ts, before any module that reads these at load: the per-request INFO logs of the local
// API would bury the bench's own output (they cost microseconds per request, so the figures barely change).
process.env.LOG_LEVEL ??= 'WARN';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
