import type { AttemptRow, DeliveredMatch, DeliveryRow } from '../../../projections/deliveries/queries.ts';
import type { MatchDelivery } from '../../matching/http/match-resource.ts';
import { compactMatch, fullMatch, publicMatch } from './match-view.ts';

export type MatchView = 'summary' | 'detailed' | 'compact';

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : undefined);

function matchesOf(
  matches: readonly DeliveredMatch[],
  member: boolean,
  view: MatchView,
  deliveries?: ReadonlyMap<string, MatchDelivery[]>,
) {
  return matches.map((m) => {
    if (view === 'compact') return compactMatch(m.data);
    if (!member) return publicMatch(m.data);
    const full = fullMatch(m.data, { summary: m.summary ?? undefined, windows: view === 'detailed' });
    // Like the single match read (GET /v1/alerts/matches/{id}), when the caller looked them up.
    return deliveries ? { ...full, deliveries: deliveries.get(m.matchId) ?? [] } : full;
  });
}

function attemptView(row: AttemptRow) {
  return {
    attempt: row.attempt,
    attempted_at: row.attempted_at.toISOString(),
    outcome: row.outcome,
    ...(row.status_code !== null && { status_code: row.status_code }),
    ...(row.response !== null && { response: row.response }),
    ...(row.error !== null && { error: row.error }),
    ...(row.duration_ms !== null && { duration_ms: row.duration_ms }),
    ...(row.recipients !== null && { recipients: row.recipients }),
  };
}

/**
 * The Alert delivery object. Members (a key of the owning project) get everything, with
 * viewer_can_manage true; anyone else holding the link gets the public payload: the alert's title
 * and kind, match entity and episode metadata, no internal fields.
 */
export function deliveryView(
  row: DeliveryRow,
  matches: readonly DeliveredMatch[],
  options: {
    member: boolean;
    view: MatchView;
    hasMore: boolean;
    cursor?: string | undefined;
    attempts?: readonly AttemptRow[];
    /** Members' matches carry their deliveries, by match id. */
    deliveriesOfMatches?: ReadonlyMap<string, MatchDelivery[]>;
  },
) {
  const { member } = options;
  const window =
    row.window_start && row.window_end
      ? { start: iso(row.window_start), end: iso(row.window_end) }
      : undefined;
  const common = {
    id: row.id,
    channel: row.channel,
    status: row.status,
    created_at: row.created_at.toISOString(),
    ...(row.sent_at && { sent_at: iso(row.sent_at) }),
    cadence: row.cadence,
    ...(window && { window }),
    match_count: row.match_count,
    matches: matchesOf(matches, member, options.view, options.deliveriesOfMatches),
    matches_has_more: options.hasMore,
    ...(options.cursor !== undefined && { matches_cursor: options.cursor }),
  };
  if (!member) {
    const alert = { kind: row.alert_kind, title: row.alert_title };
    return { ...common, has_webhook_payload: false, viewer_can_manage: false, alert, monitor: alert };
  }
  const alert = {
    id: row.alert_id,
    kind: row.alert_kind,
    title: row.alert_title,
    organization_id: row.organization_id,
    project_id: row.project_id,
  };
  return {
    ...common,
    alert_id: row.alert_id,
    monitor_id: row.alert_id,
    ...(row.error_message !== null && { error_message: row.error_message }),
    ...(row.next_attempt_at && { next_attempt_at: iso(row.next_attempt_at) }),
    attempt_count: row.attempts,
    ...(options.attempts && { attempts: options.attempts.map(attemptView) }),
    has_webhook_payload: row.channel === 'WEBHOOK' && row.attempts > 0,
    viewer_can_manage: true,
    alert,
    monitor: alert,
  };
}
