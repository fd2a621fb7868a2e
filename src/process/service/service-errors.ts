import { ApiError } from '../../http/index.js';
import { readProcessConfig, type ProcessConfig } from '../config/index.js';

/** The config read from a request body (shape and defaults), or a 400 naming every problem. */
export function readOrThrow(body: unknown): ProcessConfig {
  const { config, problems } = readProcessConfig(body);
  if (config === undefined) throw invalidConfig(problems);
  return config;
}

export function invalidConfig(problems: string[]): ApiError {
  return new ApiError('BAD_REQUEST', problems, { message: 'Invalid process config' });
}

export function maxProcessesError(max: number): ApiError {
  return new ApiError(
    'BAD_REQUEST',
    `ffmpeg.max_processes: at most ${max} processes may run at the same time`,
    { message: 'Too many processes' },
  );
}

export function maxDefinedError(max: number): ApiError {
  return new ApiError(
    'BAD_REQUEST',
    `api.limits.max_processes: at most ${max} processes may be defined; delete one first`,
    { message: 'Too many processes' },
  );
}

export function shuttingDownError(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'the server is shutting down');
}
