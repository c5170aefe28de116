// The tests' config has S3 writers upload at once after hiding files (STORE_UPLOAD_DELAY_MS=0, vitest.config.ts):
// a thousand ingests would otherwise wait for minutes. The tests of reads during writes wait as in AWS.

/** Runs `work` with writers waiting uploadDelayMs() as the clock bound gives it (shared/store/file-states-repo.ts). */
export async function withUploadDelay<T>(work: () => Promise<T>): Promise<T> {
  const saved = process.env.STORE_UPLOAD_DELAY_MS;
  delete process.env.STORE_UPLOAD_DELAY_MS;
  try {
    return await work();
  } finally {
    if (saved === undefined) delete process.env.STORE_UPLOAD_DELAY_MS;
    else process.env.STORE_UPLOAD_DELAY_MS = saved;
  }
}
