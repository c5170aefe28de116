import type { S3Client } from '@aws-sdk/client-s3';
import { writerS3Client } from '../ingest/s3-client.js';
import { upkeepStore, type UpkeepReport } from '../ingest/s3-upkeep.js';
import { removeStaleWorkFolders } from '../ingest/work-dirs.js';
import { logger } from '../shared/log.js';

// The upkeep function (docs/STORAGE.md, "Upkeep on S3"), run by an EventBridge schedule, one run at a time (a
// lease): compacts crowded partitions of the events bucket and deletes the files compactions replaced once no query
// can still be reading them. A run that fails is simply the next run's work.

/** The handler over an S3 client and bucket (tests pass their own). */
export function upkeepHandler(
  client: S3Client,
  bucket = process.env.EVENTS_BUCKET ?? '',
  workDir = process.env.UPKEEP_WORK_DIR ?? '/tmp',
) {
  return async (): Promise<UpkeepReport> => {
    if (!bucket) throw new Error('EVENTS_BUCKET is not set');
    // Older than the function's 15-minute timeout: left by a run that timed out in this sandbox.
    const stale = await removeStaleWorkFolders(workDir, 20 * 60_000);
    if (stale.length) logger.warn('removed work folders of runs that did not finish', { folders: stale });
    const report = await upkeepStore({ client, bucket, workDir });
    logger.info('upkeep done', { ...report });
    return report;
  };
}

export const handler = upkeepHandler(writerS3Client());
