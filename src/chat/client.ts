import { ErrorCode, LogLevel, WebClient } from '@slack/web-api';

export const CHAT_TIMEOUT_MS = 15_000;

export interface ChatClientOptions {
  /** SLACK_API_URL; default Slack's own https://slack.com/api/. */
  slackApiUrl?: string;
  timeoutMs?: number;
}

/**
 * A Web API client whose own retries are off and which rejects a rate-limited call at once,
 * so the delivery retry schedule (with Retry-After) is the only retry policy.
 */
export function createChatClient(token: string, options: ChatClientOptions = {}): WebClient {
  return new WebClient(token, {
    ...(options.slackApiUrl && { slackApiUrl: options.slackApiUrl }),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: options.timeoutMs ?? CHAT_TIMEOUT_MS,
    logLevel: LogLevel.ERROR,
  });
}

/** Platform errors that the same request will hit again: the connection or channel needs fixing. */
export const PERMANENT_CHAT_ERRORS = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'no_permission',
  'missing_scope',
  'org_login_required',
  'ekm_access_denied',
  'team_access_not_granted',
  'restricted_action',
  'restricted_action_read_only_channel',
  'restricted_action_thread_only_channel',
  'restricted_action_non_threadable_channel',
  'msg_too_long',
  'msg_blocks_too_long',
  'no_text',
  'too_many_attachments',
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_arguments',
  'invalid_arg_name',
  'invalid_charset',
  'invalid_form_data',
  'invalid_post_type',
  'missing_post_type',
  'method_deprecated',
  'deprecated_endpoint',
  'unknown_method',
]);

export interface ChatFailure {
  error: string;
  /** Slack's error string (`channel_not_found`) or the client's error code. */
  code: string;
  retryable: boolean;
  retryAfterMs?: number;
}

interface CodedSlackError extends Error {
  code?: string;
  retryAfter?: number;
  data?: { error?: string };
  statusCode?: number;
  original?: Error;
}

/**
 * Classifies a WebClient failure. Rate limits carry Retry-After; listed platform errors are
 * permanent; an unknown platform error is treated as transient so nothing is dropped on a guess.
 */
export function classifyChatError(thrown: unknown): ChatFailure {
  const error = (thrown instanceof Error ? thrown : new Error(String(thrown))) as CodedSlackError;
  switch (error.code) {
    case ErrorCode.RateLimitedError:
      return {
        error: `rate limited; retry after ${error.retryAfter} s`,
        code: 'ratelimited',
        retryable: true,
        ...(typeof error.retryAfter === 'number' && { retryAfterMs: error.retryAfter * 1000 }),
      };
    case ErrorCode.PlatformError: {
      const code = error.data?.error ?? 'unknown_error';
      return { error: `Slack API error: ${code}`, code, retryable: !PERMANENT_CHAT_ERRORS.has(code) };
    }
    case ErrorCode.HTTPError: {
      const status = error.statusCode ?? 0;
      return {
        error: `Slack API HTTP ${status}`,
        code: `http_${status}`,
        retryable: status === 408 || status === 429 || status >= 500,
      };
    }
    case ErrorCode.RequestError:
      return { error: error.original?.message ?? error.message, code: 'request_error', retryable: true };
    default:
      return { error: error.message, code: error.code ?? 'unknown_error', retryable: true };
  }
}
