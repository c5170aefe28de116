import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';

// One API answer for a component: loading until it comes, then its data or its error; asked again whenever a
// dependency changes, and an answer to an older question is dropped. A failure is also reported to the view's
// problem banner (Problems), which shows one message for all the cards and asks every failed answer again on retry.

export type Answer<T> = { state: 'loading' } | { state: 'done'; data: T } | { state: 'failed'; message: string };

export interface ProblemChannel {
  /** Moves on with every retry: every answer depends on it. */
  attempt: number;
  report(message: string): void;
}

export const Problems = createContext<ProblemChannel>({ attempt: 0, report: () => {} });

export function useAnswer<T>(ask: () => Promise<T>, deps: unknown[]): [Answer<T>, () => void] {
  const [answer, setAnswer] = useState<Answer<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const { attempt, report } = useContext(Problems);
  useEffect(() => {
    let current = true;
    setAnswer({ state: 'loading' });
    ask().then(
      (data) => current && setAnswer({ state: 'done', data }),
      (error: Error) => {
        if (!current) return;
        setAnswer({ state: 'failed', message: error.message });
        report(error.message);
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, round, attempt]);
  return [answer, () => setRound((r) => r + 1)];
}
