import type { SpeakerRole } from '../matching/engine/roles.ts';
import type { Plan } from '../platform/organizations.ts';

/** The closed value sets an alert configuration draws from (docs/alerts.md, Alert configuration). */

export const ALERT_KINDS = ['ENTITY_MENTION', 'PODCAST_SPEAKER'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export const DELIVERY_CADENCES = ['REALTIME', 'DAILY', 'WEEKLY'] as const;
export type DeliveryCadence = (typeof DELIVERY_CADENCES)[number];

export const RELEVANCES = ['RELEVANT', 'ALL'] as const;
export type Relevance = (typeof RELEVANCES)[number];

export const SOURCE_POPULARITIES = ['TOP_PODCAST', 'VERY_POPULAR', 'POPULAR'] as const;
export type SourcePopularity = (typeof SOURCE_POPULARITIES)[number];

/** The roles a speaker_roles filter may name: PODCAST_SPEAKER never matches a host. */
export type FilterSpeakerRole = Exclude<SpeakerRole, 'HOST'>;

/** ISO 639-1 two-letter language codes. */
export const LANGUAGE_CODES: ReadonlySet<string> = new Set(
  (
    'aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ' +
    'ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik ' +
    'io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml ' +
    'mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd ' +
    'se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi ' +
    'vo wa wo xh yi yo za zh zu'
  ).split(' '),
);

export type { Plan };

/** Active alerts included per plan; null = the plan has no alerts. Each Alerts Pack adds 5. */
export const ACTIVE_ALERTS_INCLUDED: Record<Plan, number | null> = {
  STARTER: null,
  GROWTH: null,
  TEAM: 10,
  BUSINESS: 50,
  ENTERPRISE: 250,
};
export const ALERTS_PER_PACK = 5;

export function activeAlertAllowance(plan: Plan, alertPacks: number): number | null {
  const included = ACTIVE_ALERTS_INCLUDED[plan];
  return included === null ? null : included + ALERTS_PER_PACK * alertPacks;
}

export const MAX_NOTIFICATIONS = 20;
export const MAX_TITLE_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 2000;
export const MAX_ID_LENGTH = 200;
export const MAX_EMAIL_LENGTH = 254;
