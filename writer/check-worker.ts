import { parentPort } from 'node:worker_threads';
import { checkLines, type BlockMessage } from './checked-batches.js';
import { linesOfBlock } from './ndjson-lines.js';

// A worker thread of the importer (writer/checked-batches.ts): checks each block it is sent and sends the result
// back, its rows' and facts' bytes moved rather than copied.

parentPort!.on('message', ({ id, block }: BlockMessage) => {
  const batch = checkLines(linesOfBlock(block));
  parentPort!.postMessage({ id, batch }, [batch.rows.buffer as ArrayBuffer, batch.facts.buffer as ArrayBuffer]);
});
