import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { Problems } from './use-answer';

// The view's one problem banner: the first failure of its answers (a refused key, the rate limit, a network error),
// said once above the cards with a retry that asks every answer of the view again. Cards that failed say only that
// they are not loaded.

export function ProblemBanner({ children }: { children: ComponentChildren }) {
  const [attempt, setAttempt] = useState(0);
  const [message, setMessage] = useState<string | null>(null);
  const channel = useMemo(
    () => ({ attempt, report: (text: string) => setMessage((shown) => shown ?? text) }),
    [attempt],
  );
  return (
    <Problems.Provider value={channel}>
      {message !== null && (
        <div class="problem" role="alert">
          <span>{message}</span>
          <button
            type="button"
            onClick={() => {
              setMessage(null);
              setAttempt((a) => a + 1);
            }}
          >
            Retry
          </button>
        </div>
      )}
      {children}
    </Problems.Provider>
  );
}

/** What a card shows in place of its answer when it failed: the banner says why. */
export function NotLoaded() {
  return <p class="muted">Not loaded.</p>;
}

/**
 * A change a person asks for (add, delete, revoke): `run` clears the last refusal, runs it, and keeps the API's
 * message of a refusal for `WriteProblem` beside the form, not in the view's banner (the view's answers still hold).
 */
export function useWrite(): [problem: string, run: (change: () => Promise<unknown>) => Promise<void>] {
  const [problem, setProblem] = useState('');
  const run = async (change: () => Promise<unknown>) => {
    setProblem('');
    try {
      await change();
    } catch (error) {
      setProblem((error as Error).message);
    }
  };
  return [problem, run];
}

/** The refusal of the last change, if any (useWrite). */
export function WriteProblem({ problem }: { problem: string }) {
  if (!problem) return null;
  return (
    <p class="error" role="alert">
      {problem}
    </p>
  );
}
