/**
 * The one error type thrown at the HTTP edge (docs/api.md). Its code knows its status; `app.onError`
 * turns it into `{"error": {code, message, details}}`.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Issues an error answer lists at most: 1,000 bad elements would otherwise answer a
 * 3 KB request with over a megabyte of zod issues. The message says how many there were.
 */
export const MAX_ERROR_DETAILS = 100;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown[];
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: unknown[] = [], headers: Record<string, string> = {}) {
    super(
      details.length > MAX_ERROR_DETAILS
        ? `${message} (the first ${MAX_ERROR_DETAILS} of ${details.length} issues are listed)`
        : message,
    );
    this.name = 'ApiError';
    this.code = code;
    this.details = details.slice(0, MAX_ERROR_DETAILS);
    this.headers = headers;
  }

  get status(): ContentfulStatusCode {
    return ERROR_STATUS[this.code];
  }

  toJSON(): { error: { code: ErrorCode; message: string; details: unknown[] } } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }

  toResponse(): Response {
    return new Response(JSON.stringify(this.toJSON()), {
      status: this.status,
      headers: { 'content-type': 'application/json; charset=utf-8', ...this.headers },
    });
  }
}

/** 404 for anything another agent's key asks about: ids are not probed (docs/api.md). */
export const notFound = (what: string): ApiError => new ApiError('not_found', `${what} not found`);
