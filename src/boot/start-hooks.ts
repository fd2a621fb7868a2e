/** What the built entry (src/boot/main.ts) hears from the server while it starts (src/start.ts). */
export interface StartHooks {
  /** Called once the listener is open, with the server's logger. */
  listening?: (logger: StartLogger) => void;
}

/** The part of the server's logger a start hook may use. */
export interface StartLogger {
  debug(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}
