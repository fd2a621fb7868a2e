/** Unix ms as RFC 3339 in whole seconds (`2026-11-28T03:10:00Z`), as the reference writes times. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
