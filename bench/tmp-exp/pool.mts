import { readLineBlocks } from '../../local/store/ndjson-lines.js';
import { checkedBlocks, inThreadChecker, workerChecker } from '../../local/store/checked-batches.js';
const file = '/work/main/.bench/import/events-seed3-1000000.ndjson';
for (const w of [0, 1, 2, 3]) {
  const checker = w ? workerChecker(w)! : inThreadChecker;
  const t = performance.now();
  let n = 0;
  for await (const b of checkedBlocks(readLineBlocks(file), checker)) n += b.accepted;
  console.log(w, n, performance.now() - t);
  await checker.close();
}
