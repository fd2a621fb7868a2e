/**
 * Every API error has a stable code, an HTTP status and a short message for people (docs/api.md#conventions).
 * Handlers throw `ApiError`; one handler (error-handler.ts) turns it into the envelope
 * `{code: <status>, message, details: [...]}`.
 */
export const ERRORS = {
  BAD_REQUEST: { status: 400, message: 'Bad Request' },
  INVALID_JSON: { status: 400, message: 'Invalid JSON' },
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  FORBIDDEN: { status: 403, message: 'Forbidden' },
  NOT_FOUND: { status: 404, message: 'Not Found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method Not Allowed' },
  CONFLICT: { status: 409, message: 'Conflict' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Payload Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported Media Type' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'Range Not Satisfiable' },
  TOO_MANY_REQUESTS: { status: 429, message: 'Too Many Requests' },
  INTERNAL: { status: 500, message: 'Internal Server Error' },
  NOT_IMPLEMENTED: { status: 501, message: 'Not Implemented' },
  BAD_GATEWAY: { status: 502, message: 'Bad Gateway' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service Unavailable' },
  GATEWAY_TIMEOUT: { status: 504, message: 'Gateway Timeout' },
  INSUFFICIENT_STORAGE: { status: 507, message: 'Insufficient Storage' },
  BANDWIDTH_LIMIT_EXCEEDED: { status: 509, message: 'Bandwidth Limit Exceeded' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** The wire shape of every error answer. */
export interface ErrorEnvelope {
  code: number;
  message: string;
  details: string[];
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: string[];
  /** Extra response headers, e.g. `Retry-After` or `WWW-Authenticate`. */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    details: string | string[] = [],
    options: { message?: string; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? ERRORS[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = typeof details === 'string' ? [details] : details;
    this.headers = options.headers ?? {};
  }

  toEnvelope(): ErrorEnvelope {
    return { code: this.status, message: this.message, details: this.details };
  }
}

/** Short message for a status that has no entry of its own (e.g. a framework error). */
export function messageForStatus(status: number): string {
  for (const entry of Object.values(ERRORS)) {
    if (entry.status === status) return entry.message;
  }
  return status >= 500 ? 'Internal Server Error' : 'Bad Request';
}
