/**
 * One step of a request: reads what earlier steps filled in, fills in its own part, refuses by
 * throwing an `EdgeError`, and returns a promise only when it has to wait.
 */
export type Step<Request> = (request: Request) => void | Promise<void>;

/**
 * Runs `steps` in order, then `answer`. It stays synchronous until a step returns a promise, so a
 * request whose steps all finish at once (a remembered id, a fresh cached result) is answered
 * without a trip through the microtask queue.
 */
export function pipeline<Request, Answer>(
  steps: readonly Step<Request>[],
  answer: (request: Request) => Answer | Promise<Answer>,
): (request: Request) => Answer | Promise<Answer> {
  const runFrom = (request: Request, first: number): Answer | Promise<Answer> => {
    for (let i = first; i < steps.length; i++) {
      const pending = (steps[i] as Step<Request>)(request);
      if (pending) return pending.then(() => runFrom(request, i + 1));
    }
    return answer(request);
  };
  return (request) => runFrom(request, 0);
}
