import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';

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

/**
 * Moves on every minute in realtime (main.tsx): every answer is asked again, and shows its last data until the new
 * one comes instead of "Loading…".
 */
export const Refresh = createContext(0);

export function useAnswer<T>(ask: () => Promise<T>, deps: unknown[]): [Answer<T>, () => void] {
  const [answer, setAnswer] = useState<Answer<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const { attempt, report } = useContext(Problems);
  const refresh = useContext(Refresh);
  const asked = useRef<string | null>(null);
  useEffect(() => {
    let current = true;
    // A new question shows "Loading…"; the same question asked again by the clock keeps its last answer meanwhile.
    const question = JSON.stringify([...deps, round, attempt]);
    if (question !== asked.current) setAnswer({ state: 'loading' });
    asked.current = question;
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
  }, [...deps, round, attempt, refresh]);
  return [answer, () => setRound((r) => r + 1)];
}
