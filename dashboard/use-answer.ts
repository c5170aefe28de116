import { useEffect, useState } from 'preact/hooks';

// One API answer for a component: loading until it comes, then its data or its error; asked again whenever a
// dependency changes, and an answer to an older question is dropped.

export type Answer<T> = { state: 'loading' } | { state: 'done'; data: T } | { state: 'failed'; message: string };

export function useAnswer<T>(ask: () => Promise<T>, deps: unknown[]): [Answer<T>, () => void] {
  const [answer, setAnswer] = useState<Answer<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setAnswer({ state: 'loading' });
    ask().then(
      (data) => current && setAnswer({ state: 'done', data }),
      (error: Error) => current && setAnswer({ state: 'failed', message: error.message }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return [answer, () => setRound((r) => r + 1)];
}
