/**
 * Calls `fire` after `delayMs` (of the clock the caller goes by); what it returns cancels the call
 * if it is still pending. Injected wherever code waits on its own timers, so that tests move a
 * clock instead of waiting it out.
 */
export type Schedule = (fire: () => void, delayMs: number) => () => void;

/** The real timer (`setTimeout`): it keeps the process alive while pending. */
export const timeout: Schedule = (fire, delayMs) => {
  const timer = setTimeout(fire, delayMs);
  return () => clearTimeout(timer);
};

/** The real timer for work that is never a reason to keep the process alive. */
export const unrefTimeout: Schedule = (fire, delayMs) => {
  const timer = setTimeout(fire, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
};
