import { defineConfig } from 'vitest/config';
import { testTiers, tierGlobalSetup, type TestTier } from './test/tiers.js';

const AWS_RULES_SETUP = 'test/support/aws-rules/global-setup.ts';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // AWS's rules on every SDK call the tests make: request limits, and IAM for the deployed functions' calls.
    globalSetup: [AWS_RULES_SETUP],
    setupFiles: ['test/support/aws-rules/install.ts'],
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'SILENT',
      // moto, dynalite, Trino and the functions all run on this machine's one clock (file-states-repo.ts); writers
      // upload at once, but in the tests that read while they write (withUploadDelay).
      STORE_CLOCK_SKEW_MS: '0',
      STORE_UPLOAD_DELAY_MS: '0',
    },
    // One project per tier (test/tiers.ts): `vitest run` runs all, `--project <tier>` one.
    projects: Object.entries(testTiers).map(([name, include]) => ({
      extends: true,
      test: {
        name,
        include: [...include],
        globalSetup: [AWS_RULES_SETUP, ...(tierGlobalSetup[name as TestTier] ?? [])],
      },
    })),
  },
});
