import type { QueryEngine } from './engine.js';

// The engine is installed by whoever hosts the handlers: the local runtime installs DuckDB, and on Lambda the
// Athena engine is created on first use. Handlers never import an engine themselves, so no local-only code
// can reach a Lambda bundle.

let engine: QueryEngine | undefined;
let factory: (() => QueryEngine) | undefined;

export function installEngine(value: QueryEngine): void {
  engine = value;
}

/** Registers how to build the engine lazily (the Lambda entry points register Athena). */
export function registerEngineFactory(build: () => QueryEngine): void {
  factory = build;
}

export function analyticsEngine(): QueryEngine {
  if (!engine) {
    if (!factory) throw new Error('No analytics engine installed');
    engine = factory();
  }
  return engine;
}
