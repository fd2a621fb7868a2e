import { ApiError } from '../../http/index.js';

/**
 * The answer to a change whose db write failed (issue 10 item 3). The change was undone, so the
 * detail says so; 507 when the disk is full, 500 otherwise (a directory that became unwritable,
 * a value that cannot be written as JSON).
 */
export function saveError(error: unknown, file: string): ApiError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const text = error instanceof Error ? error.message : String(error);
  const reason = error instanceof RangeError ? `it cannot be written as JSON: ${text}` : text;
  const full = code === 'ENOSPC' || code === 'EDQUOT';
  return new ApiError(
    full ? 'INSUFFICIENT_STORAGE' : 'INTERNAL',
    `the change could not be saved to ${file} (${reason}); it was not applied`,
    { message: 'Change not saved' },
  );
}
