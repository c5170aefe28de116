import { AthenaEngine, athenaSettingsFromEnv } from './athena-engine.js';
import type { QueryEngine } from './engine.js';

// The engine is installed by whoever hosts the handlers: the local runtime installs DuckDB before serving. When
// nothing was installed, we are on Lambda and the Athena engine is built from the ATHENA_* environment on first
// use. Handlers never import an engine themselves, and nothing here imports DuckDB, so no local-only code can
// reach a Lambda bundle (test/infra/infra.test.ts checks the bundles).

let engine: QueryEngine | undefined;
let factory: () => QueryEngine = () => new AthenaEngine(athenaSettingsFromEnv());

export function installEngine(value: QueryEngine): void {
  engine = value;
}

/** Replaces how the engine is built lazily (default: Athena from the environment). */
export function registerEngineFactory(build: () => QueryEngine): void {
  factory = build;
}

export function analyticsEngine(): QueryEngine {
  engine ??= factory();
  return engine;
}
