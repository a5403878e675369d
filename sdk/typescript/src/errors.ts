// Errors: every error answer becomes a PaddockError carrying the server's
// stable code (docs/api.md), its message, the HTTP status and request id.

export class PaddockError extends Error {
  readonly code: string;
  readonly status?: number;
  readonly requestId?: string;
  /** Seconds after which a retry can succeed (429 rate quotas). */
  readonly retryAfter?: number;
  constructor(code: string, message: string, opts: { status?: number; requestId?: string; retryAfter?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = opts.status;
    this.requestId = opts.requestId;
    this.retryAfter = opts.retryAfter;
  }
}

export class InvalidArgumentError extends PaddockError {}
export class CommandNotFoundError extends PaddockError {}
export class UnauthenticatedError extends PaddockError {}
export class ForbiddenError extends PaddockError {}
export class NotFoundError extends PaddockError {}
export class MethodNotAllowedError extends PaddockError {}
export class ConflictError extends PaddockError {}
export class SandboxNotRunningError extends ConflictError {}
/** sandbox_paused (409): resume() it, or create it with autoResume so calls resume it themselves. */
export class SandboxPausedError extends ConflictError {}
export class TooLargeError extends PaddockError {}
export class LimitExceededError extends PaddockError {}
export class RateLimitedError extends PaddockError {}
export class UnsupportedError extends PaddockError {}
export class UnavailableError extends PaddockError {}
export class TimeoutError extends PaddockError {}
export class InternalError extends PaddockError {}
/** The server could not be reached. */
export class APIConnectionError extends PaddockError {}
/** A stream was cut before its end. */
export class StreamInterruptedError extends PaddockError {}
/** The caller's AbortSignal fired. */
export class AbortedError extends PaddockError {}

const BY_CODE: Record<string, new (code: string, message: string, opts?: ConstructorParameters<typeof PaddockError>[2]) => PaddockError> = {
  invalid_argument: InvalidArgumentError,
  command_not_found: CommandNotFoundError,
  unauthenticated: UnauthenticatedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  conflict: ConflictError,
  sandbox_not_running: SandboxNotRunningError,
  sandbox_paused: SandboxPausedError,
  too_large: TooLargeError,
  limit_exceeded: LimitExceededError,
  rate_limited: RateLimitedError,
  unsupported: UnsupportedError,
  unavailable: UnavailableError,
  timeout: TimeoutError,
  internal: InternalError,
};

const BY_STATUS: Record<number, string> = {
  400: "invalid_argument", 401: "unauthenticated", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
  409: "conflict", 413: "too_large", 429: "limit_exceeded", 501: "unsupported", 503: "unavailable", 504: "timeout",
};

export function errorFrom(code: string, message: string, opts: ConstructorParameters<typeof PaddockError>[2] = {}): PaddockError {
  const C = BY_CODE[code] ?? PaddockError;
  return new C(code, message, opts);
}

export function invalid(message: string): InvalidArgumentError {
  return new InvalidArgumentError("invalid_argument", message);
}

/** Map an error answer ({"error":{"code","message"}}) to its exception. */
export function errorFromResponse(status: number, text: string, headers: Headers): PaddockError {
  let code = BY_STATUS[status] ?? "internal";
  let message = `HTTP ${status}`;
  try {
    const e = JSON.parse(text).error;
    if (e && typeof e.code === "string") {
      code = e.code;
      message = String(e.message ?? "");
    }
  } catch {
    const t = text.slice(0, 200).trim();
    if (t) message = `HTTP ${status}: ${t}`;
  }
  const ra = headers.get("retry-after");
  const retryAfter = ra !== null && ra !== "" && !Number.isNaN(Number(ra)) ? Number(ra) : undefined;
  return errorFrom(code, message, { status, requestId: headers.get("x-request-id") ?? undefined, retryAfter });
}
