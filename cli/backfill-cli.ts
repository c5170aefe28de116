import { backfillDerived } from '../local/store/backfill.js';
import { localPaths } from '../local/store/paths.js';

// Brings the store in ANALYTICS_DATA_DIR up to date by hand (local/store/backfill.ts): compaction, missing derived
// files, keys and whole marks, in one store transaction. ANALYTICS_COMPACT_FROM_FILES compacts partitions from that
// many event files on (default 8).
//   ANALYTICS_DATA_DIR=./.data npx tsx cli/backfill-cli.ts

const written = await backfillDerived(localPaths());
console.log(`${written} derived files written`);
