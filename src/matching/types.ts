import type { AlertFilters } from '../alerts/alert.ts';
import type { AlertKind } from '../alerts/values.ts';
import type { EntityType, MentionRelevance } from '../ingestion/events.ts';
import type { SpeakerRole } from './engine/roles.ts';

/** An active alert as the matcher sees it; paused and deleted alerts are not watched. */
export interface WatchedAlert {
  alertId: string;
  projectId: string;
  organizationId: string;
  kind: AlertKind;
  entityId: string;
  entityType: EntityType;
  filters: AlertFilters;
}

/** Window line (docs/matching.md, Windows). */
export interface WindowLine {
  number: number;
  start_seconds: number;
  end_seconds: number;
  text: string;
  is_mention: boolean;
  role?: SpeakerRole;
  speaker?: string;
}

/** A transcript window around mention lines (docs/matching.md, Windows), with the segment and clip it falls in. */
export interface MatchWindow {
  start_seconds: number;
  end_seconds: number;
  lines: WindowLine[];
  segment_id?: string;
  segment_title?: string;
  segment_description?: string;
  segment_summary?: string;
  segment_type?: string;
  clip_id?: string;
  clip_title?: string;
  clip_description?: string;
  clip_intro_statement?: string;
  clip_type?: string;
}

/** The data of one match: what becomes the AlertMatched event. */
export interface AlertMatchedData {
  matchId: string;
  alertId: string;
  projectId: string;
  kind: AlertKind;
  entityId: string;
  entityType: EntityType;
  sourceId: string;
  sourceType: 'EPISODE';
  detectedAt: string;
  mentionCount: number;
  mentionVariants: string[];
  relevance: MentionRelevance;
  roles: SpeakerRole[];
  windows: MatchWindow[];
  truncated: boolean;
  isBackfilled: boolean;
}
