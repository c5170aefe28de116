// The test suite in tiers, by what each file needs (README, "Tests"). `npm test` runs them all; `npm run test:<tier>`
// one. Every test file belongs to exactly one tier (test/architecture/test-tiers.test.ts).

export const testTiers = {
  /** Pure code: time, validation, SQL text and its golden snapshots, literals, bitmaps, the folder rules, the bundles' inputs, the bench's bill, the collector's parsing and enrichment. No server. */
  unit: [
    'test/time/**/*.test.ts',
    'test/architecture/**/*.test.ts',
    'test/engines/athena-literals.test.ts',
    'test/engines/athena-engine.test.ts',
    'test/engines/athena-deadline.test.ts',
    'test/engines/duckdb-statements.test.ts',
    'test/engines/duckdb-memory.test.ts',
    'test/query/visitor-bitmaps.test.ts',
    'test/query/json-property.test.ts',
    'test/query/query-sql.test.ts',
    'test/query/journeys-sql.test.ts',
    'test/local/checked-batches.test.ts',
    'test/local/timestamps.test.ts',
    'test/infra/bundle-inputs.test.ts',
    'test/bench/**/*.test.ts',
    'test/collect/**/*.test.ts',
  ],
  /** The API through HTTP over DuckDB and dynalite, and the commands users type. */
  api: [
    'test/api/**/*.test.ts',
    'test/auth/**/*.test.ts',
    'test/limits/**/*.test.ts',
    'test/client/**/*.test.ts',
    'test/query/query-sql-runs.test.ts',
    'test/query/journeys-sql-runs.test.ts',
    'test/query/property-sql.test.ts',
    'test/local/http-server.test.ts',
    'test/local/keys-cli.test.ts',
    'test/local/aws-target.test.ts',
    'test/local/demo-seed.test.ts',
  ],
  /** The store: imports, the derived relations against raw rows, compaction, the lock, crash loops. */
  store: [
    'test/local/import.test.ts',
    'test/local/import-lines.test.ts',
    'test/local/hostile-input.test.ts',
    'test/local/compaction.test.ts',
    'test/local/start-compaction.test.ts',
    'test/local/store-lock.test.ts',
    'test/local/crash-loop.test.ts',
    'test/local/collect-crash.test.ts',
    'test/local/batch-sink.test.ts',
    'test/query/derived-relations.test.ts',
    'test/query/shared-scan.test.ts',
  ],
  /** The cloud path: the stack (synth, cfn-lint, IAM, a deploy into moto, the Lambda runtime), Trino, moto's S3. */
  cloud: [
    'test/cloud/**/*.test.ts',
    'test/infra/infra.test.ts',
    'test/infra/service-wiring.test.ts',
    'test/infra/cfn-lint.test.ts',
    'test/infra/deploy-rehearsal.test.ts',
    'test/infra/lambda-runtime.test.ts',
    'test/engines/athena-emulator.test.ts',
    'test/engines/athena-hidden-files.test.ts',
    'test/engines/trino-differential.test.ts',
    'test/local/start-trino.test.ts',
    'test/local/trino-statement-bound.test.ts',
  ],
  /** Chromium: the dashboard, the reference page, the local services seen from a web page. */
  browser: ['test/browser/**/*.test.ts', 'test/local/local-services.test.ts'],
} as const;

export type TestTier = keyof typeof testTiers;

/** What a tier starts once for its whole run, besides the AWS rules every tier installs (vitest.config.ts). */
export const tierGlobalSetup: Partial<Record<TestTier, string[]>> = {
  // One Trino server; each store a file starts gets its own catalog on it.
  cloud: ['test/support/trino-server-setup.ts'],
};
