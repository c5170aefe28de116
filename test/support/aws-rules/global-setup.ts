import type { TestProject } from 'vitest/node';
import { synthesizeResolved } from './template.js';

// Synthesizes the stack once per test run, for the IAM checks of every worker (install.ts).
export default function setup(project: TestProject): void {
  project.provide('awsStack', synthesizeResolved());
}

declare module 'vitest' {
  export interface ProvidedContext {
    awsStack: unknown;
  }
}
