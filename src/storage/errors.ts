/**
 * Why a filesystem refused a write. The HTTP layer maps these to statuses (docs/storage.md#the-contract):
 * `TOO_LARGE` → 413 (the file alone exceeds the limit), `NO_SPACE` → 507 (no room left),
 * `INVALID_PATH` → 404 (the path would leave the mount or names a directory),
 * `NOT_A_DIRECTORY` → 409 (a directory of the path is a file).
 */
export type StorageErrorCode = 'TOO_LARGE' | 'NO_SPACE' | 'INVALID_PATH' | 'NOT_A_DIRECTORY';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}
